CREATE TABLE teachers (id INTEGER PRIMARY KEY, full_name TEXT, subject TEXT);
INSERT INTO teachers VALUES
  (1, 'Selma Jensen', 'History'),
  (2, 'Juno Ferreira', 'Geography'),
  (3, 'Ulla Nakamura', 'French'),
  (4, 'Rafael Nakamura', 'Mathematics'),
  (5, 'Zeno Ito', 'Mathematics'),
  (6, 'Zeno Ito', 'Geography'),
  (7, 'Viktor Holm', 'Physics'),
  (8, 'Fatima Osei', 'Geography');
CREATE TABLE classes (id INTEGER PRIMARY KEY, class_name TEXT, teacher_id INTEGER REFERENCES teachers (id));
INSERT INTO classes VALUES
  (1, 'Year 9 Lynx', 7),
  (2, 'Year 11 Badgers', 7),
  (3, 'Year 11 Badgers', 7),
  (4, 'Year 10 Herons', 7),
  (5, 'Year 9 Lynx', 2),
  (6, 'Year 10 Herons', 1),
  (7, 'Year 9 Hawks', 5),
  (8, 'Year 9 Lynx', 3);
CREATE TABLE students (id INTEGER PRIMARY KEY, full_name TEXT, class_id INTEGER REFERENCES classes (id));
INSERT INTO students VALUES
  (1, 'Celia Ferreira', 4),
  (2, 'Zeno Eklund', 4),
  (3, 'Ada Moreau', 3),
  (4, 'Juno Ferreira', 2),
  (5, 'Ibrahim Nakamura', 8),
  (6, 'Kai Lindqvist', 4),
  (7, 'Pia Petrov', 7),
  (8, 'Helga Baker', 5);
CREATE TABLE grades (id INTEGER PRIMARY KEY, student_id INTEGER REFERENCES students (id), subject TEXT, mark INTEGER);
INSERT INTO grades VALUES
  (1, 7, 'Music', 81),
  (2, 1, 'French', 117),
  (3, 1, 'Physics', 46),
  (4, 2, 'Music', 116),
  (5, 6, 'Biology', 6),
  (6, 2, 'Music', 46),
  (7, 5, 'Chemistry', 14),
  (8, 7, 'Mathematics', 83);
