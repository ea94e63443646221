CREATE TABLE faculties (id INTEGER PRIMARY KEY, faculty_name TEXT);
INSERT INTO faculties VALUES
  (1, 'Faculty of Medicine'),
  (2, 'Faculty of Arts'),
  (3, 'Faculty of Engineering'),
  (4, 'Faculty of Arts'),
  (5, 'Faculty of Arts'),
  (6, 'Faculty of Economics'),
  (7, 'Faculty of Economics'),
  (8, 'Faculty of Law');
CREATE TABLE courses (id INTEGER PRIMARY KEY, course_title TEXT, faculty_id INTEGER REFERENCES faculties (id), credits INTEGER);
INSERT INTO courses VALUES
  (1, 'Game Theory', 2, 79),
  (2, 'Medieval Poetry', 1, 24),
  (3, 'Thermodynamics', 2, 73),
  (4, 'Human Anatomy', 7, 87),
  (5, 'Thermodynamics', 2, 16),
  (6, 'Organic Chemistry', 2, 52),
  (7, 'Organic Chemistry', 2, 101),
  (8, 'Medieval Poetry', 1, 102);
CREATE TABLE students (id INTEGER PRIMARY KEY, full_name TEXT, enrolled_year INTEGER);
INSERT INTO students VALUES
  (1, 'Dmitri Abbott', 46),
  (2, 'Wanda Jensen', 33),
  (3, 'Wanda Jensen', 110),
  (4, 'Yara Nakamura', 103),
  (5, 'Kai Dunn', 9),
  (6, 'Ulla Castro', 4),
  (7, 'Zeno Osei', 96),
  (8, 'Dmitri Holm', 83);
CREATE TABLE enrolments (id INTEGER PRIMARY KEY, student_id INTEGER REFERENCES students (id), course_id INTEGER REFERENCES courses (id), grade TEXT);
INSERT INTO enrolments VALUES
  (1, 4, 6, 'C'),
  (2, 8, 3, 'D'),
  (3, 8, 2, 'F'),
  (4, 7, 8, 'E'),
  (5, 4, 1, 'F'),
  (6, 3, 8, 'A'),
  (7, 7, 5, 'D'),
  (8, 8, 3, 'F');
