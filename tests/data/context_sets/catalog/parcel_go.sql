CREATE TABLE depots (id INTEGER PRIMARY KEY, city TEXT);
INSERT INTO depots VALUES
  (1, 'Rijeka'),
  (2, 'Kaunas'),
  (3, 'Tartu'),
  (4, 'Porto'),
  (5, 'Malmo'),
  (6, 'Kaunas'),
  (7, 'Rijeka'),
  (8, 'Rijeka');
CREATE TABLE trucks (id INTEGER PRIMARY KEY, plate TEXT, depot_id INTEGER REFERENCES depots (id), capacity_kg INTEGER);
INSERT INTO trucks VALUES
  (1, 'KS-042', 1, 80),
  (2, 'KS-077', 2, 51),
  (3, 'KP-011', 7, 58),
  (4, 'LS-077', 2, 15),
  (5, 'NP-042', 4, 7),
  (6, 'LT-077', 8, 38),
  (7, 'KS-042', 4, 112),
  (8, 'KP-011', 5, 32);
CREATE TABLE drivers (id INTEGER PRIMARY KEY, full_name TEXT, depot_id INTEGER REFERENCES depots (id));
INSERT INTO drivers VALUES
  (1, 'Selma Grant', 8),
  (2, 'Oskar Abbott', 7),
  (3, 'Yara Lindqvist', 4),
  (4, 'Nadia Grant', 5),
  (5, 'Goran Eklund', 1),
  (6, 'Zeno Dunn', 2),
  (7, 'Mateo Abbott', 6),
  (8, 'Xavier Eklund', 7);
CREATE TABLE deliveries (id INTEGER PRIMARY KEY, truck_id INTEGER REFERENCES trucks (id), driver_id INTEGER REFERENCES drivers (id), delivered_on TEXT, weight_kg INTEGER);
INSERT INTO deliveries VALUES
  (1, 2, 2, '2023-07-27', 116),
  (2, 6, 4, '2023-04-15', 2),
  (3, 2, 6, '2023-06-27', 48),
  (4, 8, 8, '2023-12-27', 33),
  (5, 2, 4, '2023-11-13', 18),
  (6, 3, 2, '2023-05-17', 27),
  (7, 7, 3, '2023-04-30', 94),
  (8, 2, 7, '2023-06-03', 26);
