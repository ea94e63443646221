CREATE TABLE artists (id INTEGER PRIMARY KEY, artist_name TEXT);
INSERT INTO artists VALUES
  (1, 'Glass Animals Club'),
  (2, 'Glass Animals Club'),
  (3, 'Copper Sky'),
  (4, 'Glass Animals Club'),
  (5, 'Copper Sky'),
  (6, 'Lunar Tides'),
  (7, 'The Velvet Foxes'),
  (8, 'Lunar Tides');
CREATE TABLE songs (id INTEGER PRIMARY KEY, title TEXT, artist_id INTEGER REFERENCES artists (id), seconds INTEGER);
INSERT INTO songs VALUES
  (1, 'City of Glass', 5, 49),
  (2, 'Paper Hearts', 2, 111),
  (3, 'Paper Hearts', 5, 37),
  (4, 'Paper Hearts', 2, 105),
  (5, 'Electric Dawn', 7, 23),
  (6, 'Slow Satellites', 8, 99),
  (7, 'Slow Satellites', 1, 5),
  (8, 'Electric Dawn', 7, 93);
CREATE TABLE listeners (id INTEGER PRIMARY KEY, username TEXT, country TEXT);
INSERT INTO listeners VALUES
  (1, 'nightowl88', 'Iceland'),
  (2, 'groovy88', 'Portugal'),
  (3, 'nightowl303', 'Chile'),
  (4, 'groovy21', 'Portugal'),
  (5, 'vinyljunkie21', 'Morocco'),
  (6, 'groovy21', 'Japan'),
  (7, 'nightowl303', 'Norway'),
  (8, 'groovy88', 'Vietnam');
CREATE TABLE plays (id INTEGER PRIMARY KEY, song_id INTEGER REFERENCES songs (id), listener_id INTEGER REFERENCES listeners (id), played_on TEXT);
INSERT INTO plays VALUES
  (1, 7, 5, '2023-05-25'),
  (2, 4, 5, '2023-10-19'),
  (3, 2, 7, '2023-07-14'),
  (4, 1, 8, '2023-10-12'),
  (5, 5, 8, '2023-02-20'),
  (6, 2, 3, '2023-06-16'),
  (7, 5, 7, '2023-06-21'),
  (8, 2, 2, '2023-08-15');
