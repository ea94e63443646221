CREATE TABLE clubs (id INTEGER PRIMARY KEY, club_name TEXT, city TEXT);
INSERT INTO clubs VALUES
  (1, 'Brookfield Celtic', 'Rijeka'),
  (2, 'Kingsport Albion', 'Kaunas'),
  (3, 'Westmoor Town', 'Porto'),
  (4, 'Harbour Town FC', 'Split'),
  (5, 'Redcliffe FC', 'Porto'),
  (6, 'Saltash United', 'Porto'),
  (7, 'Redcliffe FC', 'Porto'),
  (8, 'Saltash United', 'Nantes');
CREATE TABLE players (id INTEGER PRIMARY KEY, full_name TEXT, club_id INTEGER REFERENCES clubs (id), position TEXT);
INSERT INTO players VALUES
  (1, 'Dmitri Dunn', 8, 'defender'),
  (2, 'Ibrahim Abbott', 8, 'goalkeeper'),
  (3, 'Xavier Dunn', 8, 'forward'),
  (4, 'Nadia Kaur', 3, 'defender'),
  (5, 'Tobias Osei', 6, 'goalkeeper'),
  (6, 'Tobias Grant', 4, 'midfielder'),
  (7, 'Ibrahim Moreau', 4, 'midfielder'),
  (8, 'Pia Kaur', 5, 'goalkeeper');
CREATE TABLE fixtures (id INTEGER PRIMARY KEY, home_club_id INTEGER REFERENCES clubs (id), away_club_id INTEGER REFERENCES clubs (id), kickoff TEXT, home_goals INTEGER, away_goals INTEGER);
INSERT INTO fixtures VALUES
  (1, 6, 3, '2023-04-16', 107, 107),
  (2, 6, 1, '2023-04-27', 102, 68),
  (3, 3, 1, '2023-04-18', 26, 96),
  (4, 8, 4, '2023-01-13', 94, 117),
  (5, 8, 6, '2023-07-09', 41, 23),
  (6, 3, 1, '2023-12-23', 95, 26),
  (7, 4, 1, '2023-03-09', 9, 39),
  (8, 2, 3, '2023-06-17', 61, 58);
CREATE TABLE goals (id INTEGER PRIMARY KEY, fixture_id INTEGER REFERENCES fixtures (id), player_id INTEGER REFERENCES players (id), minute INTEGER);
INSERT INTO goals VALUES
  (1, 3, 4, 117),
  (2, 2, 5, 54),
  (3, 3, 6, 61),
  (4, 2, 2, 3),
  (5, 8, 7, 119),
  (6, 5, 4, 80),
  (7, 1, 8, 29),
  (8, 6, 2, 57);
