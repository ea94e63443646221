CREATE TABLE members (id INTEGER PRIMARY KEY, full_name TEXT, plan TEXT);
INSERT INTO members VALUES
  (1, 'Mateo Ito', 'monthly'),
  (2, 'Celia Baker', 'off-peak'),
  (3, 'Mateo Petrov', 'off-peak'),
  (4, 'Leila Petrov', 'off-peak'),
  (5, 'Selma Jensen', 'off-peak'),
  (6, 'Yara Grant', 'monthly'),
  (7, 'Oskar Nakamura', 'annual'),
  (8, 'Helga Moreau', 'student');
CREATE TABLE trainers (id INTEGER PRIMARY KEY, full_name TEXT, discipline TEXT);
INSERT INTO trainers VALUES
  (1, 'Ulla Castro', 'boxing'),
  (2, 'Wanda Lindqvist', 'crossfit'),
  (3, 'Viktor Eklund', 'pilates'),
  (4, 'Zeno Holm', 'powerlifting'),
  (5, 'Pia Eklund', 'crossfit'),
  (6, 'Selma Osei', 'boxing'),
  (7, 'Selma Nakamura', 'yoga'),
  (8, 'Goran Dunn', 'pilates');
CREATE TABLE sessions (id INTEGER PRIMARY KEY, trainer_id INTEGER REFERENCES trainers (id), member_id INTEGER REFERENCES members (id), session_date TEXT, minutes INTEGER);
INSERT INTO sessions VALUES
  (1, 6, 8, '2023-09-02', 87),
  (2, 2, 1, '2023-12-21', 56),
  (3, 4, 8, '2023-12-30', 83),
  (4, 1, 5, '2023-09-20', 24),
  (5, 8, 5, '2023-06-03', 14),
  (6, 6, 8, '2023-04-28', 106),
  (7, 1, 2, '2023-06-11', 46),
  (8, 7, 5, '2023-07-02', 119);
CREATE TABLE payments (id INTEGER PRIMARY KEY, member_id INTEGER REFERENCES members (id), amount NUMERIC(10, 2), paid_on TEXT);
INSERT INTO payments VALUES
  (1, 4, 626.43, '2023-08-26'),
  (2, 5, 195.75, '2023-09-23'),
  (3, 2, 376.85, '2023-09-04'),
  (4, 2, 500.61, '2023-01-31'),
  (5, 2, 546.1, '2023-11-03'),
  (6, 5, 757.93, '2023-04-26'),
  (7, 5, 176.74, '2023-10-10'),
  (8, 3, 79.14, '2023-12-02');
