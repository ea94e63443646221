CREATE TABLE members (id INTEGER PRIMARY KEY, full_name TEXT, plan TEXT);
INSERT INTO members VALUES
  (1, 'Ibrahim Dunn', 'off-peak'),
  (2, 'Wanda Moreau', 'pay as you go'),
  (3, 'Xavier Abbott', 'monthly'),
  (4, 'Xavier Kaur', 'off-peak'),
  (5, 'Ibrahim Jensen', 'annual'),
  (6, 'Helga Lindqvist', 'off-peak'),
  (7, 'Nadia Eklund', 'student'),
  (8, 'Oskar Abbott', 'annual');
CREATE TABLE trainers (id INTEGER PRIMARY KEY, full_name TEXT, discipline TEXT);
INSERT INTO trainers VALUES
  (1, 'Pia Lindqvist', 'crossfit'),
  (2, 'Leila Ferreira', 'boxing'),
  (3, 'Goran Holm', 'powerlifting'),
  (4, 'Ulla Nakamura', 'yoga'),
  (5, 'Bruno Osei', 'pilates'),
  (6, 'Helga Petrov', 'yoga'),
  (7, 'Tobias Abbott', 'crossfit'),
  (8, 'Pia Baker', 'powerlifting');
CREATE TABLE sessions (id INTEGER PRIMARY KEY, trainer_id INTEGER REFERENCES trainers (id), member_id INTEGER REFERENCES members (id), session_date TEXT, minutes INTEGER);
INSERT INTO sessions VALUES
  (1, 3, 3, '2023-08-23', 62),
  (2, 5, 1, '2023-02-04', 23),
  (3, 5, 4, '2023-02-09', 26),
  (4, 8, 1, '2023-08-20', 12),
  (5, 5, 1, '2023-11-14', 32),
  (6, 7, 2, '2023-11-09', 24),
  (7, 4, 8, '2023-11-22', 96),
  (8, 7, 4, '2023-02-14', 27);
CREATE TABLE payments (id INTEGER PRIMARY KEY, member_id INTEGER REFERENCES members (id), amount NUMERIC(10, 2), paid_on TEXT);
INSERT INTO payments VALUES
  (1, 7, 739.69, '2023-08-16'),
  (2, 7, 226.19, '2023-01-31'),
  (3, 2, 169.83, '2023-05-05'),
  (4, 2, 47.9, '2023-03-09'),
  (5, 6, 45.46, '2023-04-10'),
  (6, 3, 531.58, '2023-10-11'),
  (7, 1, 669.25, '2023-07-14'),
  (8, 2, 45.14, '2023-07-10');
