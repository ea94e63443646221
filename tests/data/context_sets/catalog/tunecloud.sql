CREATE TABLE artists (id INTEGER PRIMARY KEY, artist_name TEXT);
INSERT INTO artists VALUES
  (1, 'Lunar Tides'),
  (2, 'The Velvet Foxes'),
  (3, 'The Velvet Foxes'),
  (4, 'Indigo Parade'),
  (5, 'Paper Kites Orchestra'),
  (6, 'Glass Animals Club'),
  (7, 'The Velvet Foxes'),
  (8, 'Glass Animals Club');
CREATE TABLE songs (id INTEGER PRIMARY KEY, title TEXT, artist_id INTEGER REFERENCES artists (id), seconds INTEGER);
INSERT INTO songs VALUES
  (1, 'Velvet Rain', 3, 10),
  (2, 'Velvet Rain', 5, 23),
  (3, 'Wildflower Radio', 2, 68),
  (4, 'City of Glass', 6, 10),
  (5, 'Velvet Rain', 3, 109),
  (6, 'Paper Hearts', 2, 76),
  (7, 'Paper Hearts', 7, 73),
  (8, 'Velvet Rain', 7, 8);
CREATE TABLE listeners (id INTEGER PRIMARY KEY, username TEXT, country TEXT);
INSERT INTO listeners VALUES
  (1, 'nightowl88', 'Chile'),
  (2, 'beatfan7', 'Vietnam'),
  (3, 'beatfan21', 'Portugal'),
  (4, 'vinyljunkie21', 'Canada'),
  (5, 'vinyljunkie303', 'Canada'),
  (6, 'groovy88', 'Kenya'),
  (7, 'beatfan7', 'Chile'),
  (8, 'nightowl7', 'Canada');
CREATE TABLE plays (id INTEGER PRIMARY KEY, song_id INTEGER REFERENCES songs (id), listener_id INTEGER REFERENCES listeners (id), played_on TEXT);
INSERT INTO plays VALUES
  (1, 4, 2, '2023-05-21'),
  (2, 1, 8, '2023-08-01'),
  (3, 8, 6, '2023-08-31'),
  (4, 1, 2, '2023-04-27'),
  (5, 2, 3, '2023-11-18'),
  (6, 5, 2, '2023-08-26'),
  (7, 3, 8, '2023-03-03'),
  (8, 8, 4, '2023-08-10');
