CREATE TABLE clubs (id INTEGER PRIMARY KEY, club_name TEXT, city TEXT);
INSERT INTO clubs VALUES
  (1, 'Redcliffe FC', 'Bilbao'),
  (2, 'Mossley Rangers', 'Bilbao'),
  (3, 'Harbour Town FC', 'Jena'),
  (4, 'Mossley Rangers', 'Bilbao'),
  (5, 'Redcliffe FC', 'Eindhoven'),
  (6, 'Rovers United', 'Graz'),
  (7, 'Northfield Wanderers', 'Bilbao'),
  (8, 'Rovers United', 'Eindhoven');
CREATE TABLE players (id INTEGER PRIMARY KEY, full_name TEXT, club_id INTEGER REFERENCES clubs (id), position TEXT);
INSERT INTO players VALUES
  (1, 'Nadia Osei', 5, 'goalkeeper'),
  (2, 'Ada Moreau', 4, 'goalkeeper'),
  (3, 'Nadia Baker', 5, 'forward'),
  (4, 'Leila Abbott', 8, 'midfielder'),
  (5, 'Esme Dunn', 8, 'midfielder'),
  (6, 'Wanda Grant', 1, 'midfielder'),
  (7, 'Bruno Petrov', 3, 'defender'),
  (8, 'Ibrahim Dunn', 7, 'defender');
CREATE TABLE fixtures (id INTEGER PRIMARY KEY, home_club_id INTEGER REFERENCES clubs (id), away_club_id INTEGER REFERENCES clubs (id), kickoff TEXT, home_goals INTEGER, away_goals INTEGER);
INSERT INTO fixtures VALUES
  (1, 2, 7, '2023-08-27', 24, 75),
  (2, 3, 2, '2023-12-23', 56, 42),
  (3, 1, 7, '2023-04-13', 108, 27),
  (4, 6, 5, '2023-02-19', 116, 50),
  (5, 5, 8, '2023-09-06', 36, 58),
  (6, 4, 1, '2023-01-03', 104, 51),
  (7, 7, 5, '2023-11-12', 96, 70),
  (8, 6, 8, '2023-08-02', 113, 120);
CREATE TABLE goals (id INTEGER PRIMARY KEY, fixture_id INTEGER REFERENCES fixtures (id), player_id INTEGER REFERENCES players (id), minute INTEGER);
INSERT INTO goals VALUES
  (1, 2, 3, 63),
  (2, 3, 1, 104),
  (3, 3, 7, 61),
  (4, 1, 4, 29),
  (5, 7, 8, 14),
  (6, 1, 6, 87),
  (7, 8, 3, 117),
  (8, 2, 1, 36);
