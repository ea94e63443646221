CREATE TABLE teachers (id INTEGER PRIMARY KEY, full_name TEXT, subject TEXT);
INSERT INTO teachers VALUES
  (1, 'Selma Petrov', 'Chemistry'),
  (2, 'Tobias Ito', 'Mathematics'),
  (3, 'Zeno Abbott', 'Physics'),
  (4, 'Ada Eklund', 'Geography'),
  (5, 'Tobias Petrov', 'French'),
  (6, 'Juno Nakamura', 'Music'),
  (7, 'Tobias Holm', 'French'),
  (8, 'Goran Holm', 'Chemistry');
CREATE TABLE classes (id INTEGER PRIMARY KEY, class_name TEXT, teacher_id INTEGER REFERENCES teachers (id));
INSERT INTO classes VALUES
  (1, 'Year 7 Wolves', 2),
  (2, 'Year 11 Badgers', 1),
  (3, 'Year 8 Foxes', 6),
  (4, 'Year 10 Herons', 8),
  (5, 'Year 9 Hawks', 6),
  (6, 'Year 7 Wolves', 8),
  (7, 'Year 8 Foxes', 2),
  (8, 'Year 11 Badgers', 1);
CREATE TABLE students (id INTEGER PRIMARY KEY, full_name TEXT, class_id INTEGER REFERENCES classes (id));
INSERT INTO students VALUES
  (1, 'Mateo Dunn', 6),
  (2, 'Zeno Ito', 8),
  (3, 'Viktor Dunn', 1),
  (4, 'Goran Holm', 8),
  (5, 'Leila Eklund', 8),
  (6, 'Pia Eklund', 7),
  (7, 'Wanda Dunn', 2),
  (8, 'Fatima Lindqvist', 7);
CREATE TABLE grades (id INTEGER PRIMARY KEY, student_id INTEGER REFERENCES students (id), subject TEXT, mark INTEGER);
INSERT INTO grades VALUES
  (1, 4, 'Physics', 31),
  (2, 7, 'French', 82),
  (3, 2, 'Geography', 115),
  (4, 7, 'Biology', 62),
  (5, 2, 'Physics', 30),
  (6, 3, 'Chemistry', 34),
  (7, 8, 'French', 91),
  (8, 3, 'Mathematics', 58);
