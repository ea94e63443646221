CREATE TABLE films (id INTEGER PRIMARY KEY, title TEXT, rating TEXT, minutes INTEGER);
INSERT INTO films VALUES
  (1, 'Midnight in Lisbon', '18', 31),
  (2, 'A Quiet Storm', '12A', 43),
  (3, 'The Crimson Harbor', '18', 12),
  (4, 'Starfall', 'U', 64),
  (5, 'A Quiet Storm', '15', 19),
  (6, 'Starfall', '18', 80),
  (7, 'Frozen Tide', '18', 63),
  (8, 'Dust and Diamonds', 'PG', 120);
CREATE TABLE screens (id INTEGER PRIMARY KEY, screen_name TEXT, capacity INTEGER);
INSERT INTO screens VALUES
  (1, 'Screen 1', 30),
  (2, 'Studio Room', 25),
  (3, 'Studio Room', 62),
  (4, 'Studio Room', 68),
  (5, 'Screen 1', 36),
  (6, 'Screen 2', 46),
  (7, 'Studio Room', 34),
  (8, 'Screen 1', 83);
CREATE TABLE showings (id INTEGER PRIMARY KEY, film_id INTEGER REFERENCES films (id), screen_id INTEGER REFERENCES screens (id), starts_at TEXT);
INSERT INTO showings VALUES
  (1, 6, 4, '2023-07-09'),
  (2, 7, 4, '2023-11-25'),
  (3, 4, 4, '2023-01-04'),
  (4, 4, 7, '2023-03-11'),
  (5, 6, 7, '2023-02-21'),
  (6, 5, 7, '2023-04-17'),
  (7, 7, 1, '2023-02-19'),
  (8, 7, 7, '2023-11-14');
CREATE TABLE tickets (id INTEGER PRIMARY KEY, showing_id INTEGER REFERENCES showings (id), price NUMERIC(10, 2), buyer TEXT);
INSERT INTO tickets VALUES
  (1, 3, 240.77, 'Dmitri Nakamura'),
  (2, 4, 778.08, 'Pia Eklund'),
  (3, 8, 332.49, 'Mateo Lindqvist'),
  (4, 2, 824.96, 'Pia Moreau'),
  (5, 7, 50.47, 'Pia Dunn'),
  (6, 6, 635.51, 'Ulla Eklund'),
  (7, 7, 785.27, 'Ulla Castro'),
  (8, 8, 257.61, 'Xavier Eklund');
