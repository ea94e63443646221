CREATE TABLE films (id INTEGER PRIMARY KEY, title TEXT, rating TEXT, minutes INTEGER);
INSERT INTO films VALUES
  (1, 'Echoes of Kyoto', '12A', 66),
  (2, 'The Crimson Harbor', 'U', 46),
  (3, 'The Clockmaker''s Son', 'PG', 57),
  (4, 'The Crimson Harbor', '15', 79),
  (5, 'Frozen Tide', 'U', 22),
  (6, 'Starfall', '15', 91),
  (7, 'A Quiet Storm', '15', 41),
  (8, 'The Crimson Harbor', 'U', 78);
CREATE TABLE screens (id INTEGER PRIMARY KEY, screen_name TEXT, capacity INTEGER);
INSERT INTO screens VALUES
  (1, 'Screen 1', 101),
  (2, 'Rooftop Screen', 53),
  (3, 'Rooftop Screen', 105),
  (4, 'Screen 1', 15),
  (5, 'IMAX Hall', 12),
  (6, 'Rooftop Screen', 32),
  (7, 'Studio Room', 26),
  (8, 'IMAX Hall', 29);
CREATE TABLE showings (id INTEGER PRIMARY KEY, film_id INTEGER REFERENCES films (id), screen_id INTEGER REFERENCES screens (id), starts_at TEXT);
INSERT INTO showings VALUES
  (1, 7, 5, '2023-09-26'),
  (2, 1, 6, '2023-12-08'),
  (3, 7, 2, '2023-10-30'),
  (4, 5, 3, '2023-04-22'),
  (5, 3, 2, '2023-11-07'),
  (6, 3, 7, '2023-10-07'),
  (7, 4, 3, '2023-05-11'),
  (8, 5, 6, '2023-06-19');
CREATE TABLE tickets (id INTEGER PRIMARY KEY, showing_id INTEGER REFERENCES showings (id), price NUMERIC(10, 2), buyer TEXT);
INSERT INTO tickets VALUES
  (1, 3, 305.15, 'Leila Nakamura'),
  (2, 8, 256.57, 'Pia Lindqvist'),
  (3, 1, 438.75, 'Viktor Nakamura'),
  (4, 2, 649.31, 'Xavier Nakamura'),
  (5, 8, 362.81, 'Tobias Dunn'),
  (6, 7, 579.86, 'Helga Baker'),
  (7, 5, 637.15, 'Ibrahim Grant'),
  (8, 6, 492.11, 'Leila Dunn');
