CREATE TABLE teachers (id INTEGER PRIMARY KEY, full_name TEXT, subject TEXT);
INSERT INTO teachers VALUES
  (1, 'Mateo Grant', 'Geography'),
  (2, 'Tobias Eklund', 'Mathematics'),
  (3, 'Kai Dunn', 'Mathematics'),
  (4, 'Oskar Nakamura', 'Biology'),
  (5, 'Juno Nakamura', 'Chemistry'),
  (6, 'Kai Baker', 'Biology'),
  (7, 'Ulla Baker', 'Geography'),
  (8, 'Esme Baker', 'History');
CREATE TABLE classes (id INTEGER PRIMARY KEY, class_name TEXT, teacher_id INTEGER REFERENCES teachers (id));
INSERT INTO classes VALUES
  (1, 'Year 7 Falcons', 3),
  (2, 'Year 7 Wolves', 1),
  (3, 'Year 8 Otters', 1),
  (4, 'Year 8 Otters', 2),
  (5, 'Year 9 Lynx', 5),
  (6, 'Year 9 Hawks', 4),
  (7, 'Year 10 Herons', 3),
  (8, 'Year 10 Herons', 7);
CREATE TABLE students (id INTEGER PRIMARY KEY, full_name TEXT, class_id INTEGER REFERENCES classes (id));
INSERT INTO students VALUES
  (1, 'Oskar Baker', 1),
  (2, 'Tobias Kaur', 7),
  (3, 'Juno Castro', 7),
  (4, 'Ibrahim Abbott', 2),
  (5, 'Ulla Jensen', 5),
  (6, 'Kai Holm', 5),
  (7, 'Leila Kaur', 1),
  (8, 'Bruno Eklund', 4);
CREATE TABLE grades (id INTEGER PRIMARY KEY, student_id INTEGER REFERENCES students (id), subject TEXT, mark INTEGER);
INSERT INTO grades VALUES
  (1, 1, 'French', 74),
  (2, 7, 'Biology', 109),
  (3, 2, 'Geography', 76),
  (4, 6, 'Geography', 22),
  (5, 6, 'Mathematics', 20),
  (6, 1, 'Mathematics', 90),
  (7, 6, 'Mathematics', 1),
  (8, 8, 'Mathematics', 114);
