CREATE TABLE faculties (id INTEGER PRIMARY KEY, faculty_name TEXT);
INSERT INTO faculties VALUES
  (1, 'Faculty of Engineering'),
  (2, 'Faculty of Economics'),
  (3, 'Faculty of Economics'),
  (4, 'Faculty of Engineering'),
  (5, 'Faculty of Arts'),
  (6, 'Faculty of Arts'),
  (7, 'Faculty of Arts'),
  (8, 'Faculty of Arts');
CREATE TABLE courses (id INTEGER PRIMARY KEY, course_title TEXT, faculty_id INTEGER REFERENCES faculties (id), credits INTEGER);
INSERT INTO courses VALUES
  (1, 'Medieval Poetry', 5, 64),
  (2, 'Criminal Law', 2, 83),
  (3, 'Game Theory', 3, 3),
  (4, 'Art History', 7, 35),
  (5, 'Human Anatomy', 2, 49),
  (6, 'Linear Algebra', 7, 40),
  (7, 'Thermodynamics', 1, 48),
  (8, 'Contract Law', 7, 85);
CREATE TABLE students (id INTEGER PRIMARY KEY, full_name TEXT, enrolled_year INTEGER);
INSERT INTO students VALUES
  (1, 'Ulla Moreau', 45),
  (2, 'Celia Nakamura', 68),
  (3, 'Helga Petrov', 51),
  (4, 'Celia Osei', 44),
  (5, 'Bruno Ito', 24),
  (6, 'Ibrahim Baker', 72),
  (7, 'Wanda Kaur', 88),
  (8, 'Esme Nakamura', 66);
CREATE TABLE enrolments (id INTEGER PRIMARY KEY, student_id INTEGER REFERENCES students (id), course_id INTEGER REFERENCES courses (id), grade TEXT);
INSERT INTO enrolments VALUES
  (1, 6, 2, 'C'),
  (2, 4, 1, 'D'),
  (3, 2, 1, 'F'),
  (4, 1, 4, 'D'),
  (5, 8, 5, 'D'),
  (6, 8, 5, 'B'),
  (7, 8, 7, 'C'),
  (8, 1, 3, 'D');
