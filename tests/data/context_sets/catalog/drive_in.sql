CREATE TABLE films (id INTEGER PRIMARY KEY, title TEXT, rating TEXT, minutes INTEGER);
INSERT INTO films VALUES
  (1, 'Dust and Diamonds', '12A', 11),
  (2, 'The Clockmaker''s Son', '18', 114),
  (3, 'The Paper Garden', '12A', 100),
  (4, 'Dust and Diamonds', '15', 75),
  (5, 'Starfall', '18', 24),
  (6, 'The Paper Garden', 'PG', 113),
  (7, 'Echoes of Kyoto', 'U', 67),
  (8, 'The Clockmaker''s Son', 'U', 33);
CREATE TABLE screens (id INTEGER PRIMARY KEY, screen_name TEXT, capacity INTEGER);
INSERT INTO screens VALUES
  (1, 'Screen 1', 109),
  (2, 'Rooftop Screen', 9),
  (3, 'Rooftop Screen', 84),
  (4, 'Screen 2', 2),
  (5, 'Rooftop Screen', 30),
  (6, 'Studio Room', 108),
  (7, 'IMAX Hall', 76),
  (8, 'Screen 2', 16);
CREATE TABLE showings (id INTEGER PRIMARY KEY, film_id INTEGER REFERENCES films (id), screen_id INTEGER REFERENCES screens (id), starts_at TEXT);
INSERT INTO showings VALUES
  (1, 3, 4, '2023-12-08'),
  (2, 3, 3, '2023-06-23'),
  (3, 7, 6, '2023-05-31'),
  (4, 8, 4, '2023-08-27'),
  (5, 4, 1, '2023-05-12'),
  (6, 7, 8, '2023-09-12'),
  (7, 2, 6, '2023-03-24'),
  (8, 5, 2, '2023-01-18');
CREATE TABLE tickets (id INTEGER PRIMARY KEY, showing_id INTEGER REFERENCES showings (id), price NUMERIC(10, 2), buyer TEXT);
INSERT INTO tickets VALUES
  (1, 4, 780.9, 'Zeno Holm'),
  (2, 2, 438.42, 'Xavier Ferreira'),
  (3, 1, 843.62, 'Goran Baker'),
  (4, 4, 331.23, 'Ibrahim Ferreira'),
  (5, 5, 164.84, 'Viktor Kaur'),
  (6, 6, 597.39, 'Leila Ferreira'),
  (7, 3, 43.56, 'Mateo Nakamura'),
  (8, 3, 806.7, 'Oskar Eklund');
