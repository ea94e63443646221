CREATE TABLE artists (id INTEGER PRIMARY KEY, artist_name TEXT);
INSERT INTO artists VALUES
  (1, 'Lunar Tides'),
  (2, 'Paper Kites Orchestra'),
  (3, 'The Velvet Foxes'),
  (4, 'Glass Animals Club'),
  (5, 'Copper Sky'),
  (6, 'Neon Harbor'),
  (7, 'The Midnight Owls'),
  (8, 'Copper Sky');
CREATE TABLE songs (id INTEGER PRIMARY KEY, title TEXT, artist_id INTEGER REFERENCES artists (id), seconds INTEGER);
INSERT INTO songs VALUES
  (1, 'Velvet Rain', 5, 95),
  (2, 'Velvet Rain', 1, 62),
  (3, 'Paper Hearts', 7, 15),
  (4, 'Wildflower Radio', 1, 40),
  (5, 'Electric Dawn', 3, 63),
  (6, 'Slow Satellites', 5, 49),
  (7, 'Northern Lights', 1, 53),
  (8, 'City of Glass', 5, 68);
CREATE TABLE listeners (id INTEGER PRIMARY KEY, username TEXT, country TEXT);
INSERT INTO listeners VALUES
  (1, 'beatfan21', 'Morocco'),
  (2, 'vinyljunkie88', 'Iceland'),
  (3, 'nightowl7', 'Kenya'),
  (4, 'groovy303', 'Morocco'),
  (5, 'nightowl21', 'Vietnam'),
  (6, 'nightowl21', 'Vietnam'),
  (7, 'vinyljunkie7', 'Norway'),
  (8, 'vinyljunkie21', 'Kenya');
CREATE TABLE plays (id INTEGER PRIMARY KEY, song_id INTEGER REFERENCES songs (id), listener_id INTEGER REFERENCES listeners (id), played_on TEXT);
INSERT INTO plays VALUES
  (1, 8, 6, '2023-04-23'),
  (2, 1, 2, '2023-07-22'),
  (3, 1, 1, '2023-11-27'),
  (4, 5, 2, '2023-12-27'),
  (5, 3, 5, '2023-05-02'),
  (6, 2, 4, '2023-04-11'),
  (7, 6, 8, '2023-08-14'),
  (8, 8, 7, '2023-11-11');
