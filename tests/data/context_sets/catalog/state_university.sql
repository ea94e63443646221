CREATE TABLE faculties (id INTEGER PRIMARY KEY, faculty_name TEXT);
INSERT INTO faculties VALUES
  (1, 'Faculty of Law'),
  (2, 'Faculty of Engineering'),
  (3, 'Faculty of Medicine'),
  (4, 'Faculty of Medicine'),
  (5, 'Faculty of Medicine'),
  (6, 'Faculty of Engineering'),
  (7, 'Faculty of Economics'),
  (8, 'Faculty of Engineering');
CREATE TABLE courses (id INTEGER PRIMARY KEY, course_title TEXT, faculty_id INTEGER REFERENCES faculties (id), credits INTEGER);
INSERT INTO courses VALUES
  (1, 'Contract Law', 5, 5),
  (2, 'Medieval Poetry', 2, 9),
  (3, 'Human Anatomy', 5, 4),
  (4, 'Human Anatomy', 7, 32),
  (5, 'Thermodynamics', 8, 64),
  (6, 'Thermodynamics', 8, 60),
  (7, 'Contract Law', 3, 26),
  (8, 'Game Theory', 7, 104);
CREATE TABLE students (id INTEGER PRIMARY KEY, full_name TEXT, enrolled_year INTEGER);
INSERT INTO students VALUES
  (1, 'Helga Grant', 90),
  (2, 'Rafael Nakamura', 3),
  (3, 'Pia Castro', 112),
  (4, 'Ulla Holm', 32),
  (5, 'Rafael Ito', 33),
  (6, 'Ibrahim Nakamura', 98),
  (7, 'Viktor Lindqvist', 3),
  (8, 'Ada Kaur', 97);
CREATE TABLE enrolments (id INTEGER PRIMARY KEY, student_id INTEGER REFERENCES students (id), course_id INTEGER REFERENCES courses (id), grade TEXT);
INSERT INTO enrolments VALUES
  (1, 5, 5, 'B'),
  (2, 4, 3, 'A'),
  (3, 3, 6, 'D'),
  (4, 6, 3, 'F'),
  (5, 8, 5, 'E'),
  (6, 5, 5, 'D'),
  (7, 4, 6, 'A'),
  (8, 7, 8, 'F');
