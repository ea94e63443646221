CREATE TABLE members (id INTEGER PRIMARY KEY, full_name TEXT, plan TEXT);
INSERT INTO members VALUES
  (1, 'Helga Petrov', 'off-peak'),
  (2, 'Ulla Grant', 'monthly'),
  (3, 'Kai Jensen', 'monthly'),
  (4, 'Viktor Ito', 'student'),
  (5, 'Ada Dunn', 'annual'),
  (6, 'Wanda Castro', 'annual'),
  (7, 'Pia Lindqvist', 'pay as you go'),
  (8, 'Celia Abbott', 'monthly');
CREATE TABLE trainers (id INTEGER PRIMARY KEY, full_name TEXT, discipline TEXT);
INSERT INTO trainers VALUES
  (1, 'Leila Dunn', 'spinning'),
  (2, 'Bruno Moreau', 'powerlifting'),
  (3, 'Tobias Moreau', 'pilates'),
  (4, 'Ulla Petrov', 'pilates'),
  (5, 'Selma Grant', 'yoga'),
  (6, 'Kai Ito', 'pilates'),
  (7, 'Helga Nakamura', 'pilates'),
  (8, 'Helga Holm', 'boxing');
CREATE TABLE sessions (id INTEGER PRIMARY KEY, trainer_id INTEGER REFERENCES trainers (id), member_id INTEGER REFERENCES members (id), session_date TEXT, minutes INTEGER);
INSERT INTO sessions VALUES
  (1, 7, 8, '2023-07-19', 55),
  (2, 5, 5, '2023-10-09', 68),
  (3, 4, 8, '2023-02-05', 54),
  (4, 2, 4, '2023-08-25', 63),
  (5, 1, 4, '2023-02-06', 5),
  (6, 2, 7, '2023-10-03', 74),
  (7, 8, 7, '2023-06-13', 119),
  (8, 4, 8, '2023-02-23', 52);
CREATE TABLE payments (id INTEGER PRIMARY KEY, member_id INTEGER REFERENCES members (id), amount NUMERIC(10, 2), paid_on TEXT);
INSERT INTO payments VALUES
  (1, 2, 629.54, '2023-03-22'),
  (2, 4, 854.64, '2023-09-29'),
  (3, 6, 186.26, '2023-08-11'),
  (4, 2, 513.98, '2023-03-25'),
  (5, 4, 618.32, '2023-06-21'),
  (6, 4, 100.37, '2023-01-27'),
  (7, 2, 865.71, '2023-05-11'),
  (8, 8, 610.02, '2023-05-03');
