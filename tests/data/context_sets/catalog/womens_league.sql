CREATE TABLE clubs (id INTEGER PRIMARY KEY, club_name TEXT, city TEXT);
INSERT INTO clubs VALUES
  (1, 'Harbour Town FC', 'Umea'),
  (2, 'Ironbridge City', 'Ghent'),
  (3, 'Mossley Rangers', 'Salzburg'),
  (4, 'Redcliffe FC', 'Ghent'),
  (5, 'Kingsport Albion', 'Wroclaw'),
  (6, 'Athletic Vale', 'Ypres'),
  (7, 'Brookfield Celtic', 'Brno'),
  (8, 'Saltash United', 'Umea');
CREATE TABLE players (id INTEGER PRIMARY KEY, full_name TEXT, club_id INTEGER REFERENCES clubs (id), position TEXT);
INSERT INTO players VALUES
  (1, 'Ibrahim Grant', 4, 'goalkeeper'),
  (2, 'Xavier Abbott', 2, 'forward'),
  (3, 'Oskar Baker', 2, 'midfielder'),
  (4, 'Leila Abbott', 5, 'defender'),
  (5, 'Pia Osei', 1, 'goalkeeper'),
  (6, 'Rafael Petrov', 7, 'goalkeeper'),
  (7, 'Selma Eklund', 7, 'midfielder'),
  (8, 'Oskar Petrov', 1, 'midfielder');
CREATE TABLE fixtures (id INTEGER PRIMARY KEY, home_club_id INTEGER REFERENCES clubs (id), away_club_id INTEGER REFERENCES clubs (id), kickoff TEXT, home_goals INTEGER, away_goals INTEGER);
INSERT INTO fixtures VALUES
  (1, 2, 2, '2023-06-18', 112, 59),
  (2, 2, 8, '2023-04-17', 38, 86),
  (3, 3, 5, '2023-04-30', 6, 14),
  (4, 6, 6, '2023-04-07', 12, 60),
  (5, 2, 8, '2023-07-14', 100, 69),
  (6, 2, 6, '2023-12-14', 5, 40),
  (7, 3, 1, '2023-09-10', 113, 2),
  (8, 7, 6, '2023-11-21', 105, 56);
CREATE TABLE goals (id INTEGER PRIMARY KEY, fixture_id INTEGER REFERENCES fixtures (id), player_id INTEGER REFERENCES players (id), minute INTEGER);
INSERT INTO goals VALUES
  (1, 8, 3, 89),
  (2, 6, 5, 20),
  (3, 6, 7, 32),
  (4, 8, 8, 10),
  (5, 3, 3, 120),
  (6, 4, 2, 34),
  (7, 5, 4, 54),
  (8, 1, 2, 27);
