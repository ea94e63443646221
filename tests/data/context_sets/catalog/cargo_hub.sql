CREATE TABLE depots (id INTEGER PRIMARY KEY, city TEXT);
INSERT INTO depots VALUES
  (1, 'Ghent'),
  (2, 'Turku'),
  (3, 'Wroclaw'),
  (4, 'Lucerne'),
  (5, 'Ypres'),
  (6, 'Brno'),
  (7, 'Wroclaw'),
  (8, 'Salzburg');
CREATE TABLE trucks (id INTEGER PRIMARY KEY, plate TEXT, depot_id INTEGER REFERENCES depots (id), capacity_kg INTEGER);
INSERT INTO trucks VALUES
  (1, 'LR-042', 3, 3),
  (2, 'NR-077', 2, 65),
  (3, 'NR-042', 3, 68),
  (4, 'KS-077', 6, 42),
  (5, 'KT-042', 6, 87),
  (6, 'KT-077', 1, 106),
  (7, 'KS-011', 4, 109),
  (8, 'LR-011', 1, 112);
CREATE TABLE drivers (id INTEGER PRIMARY KEY, full_name TEXT, depot_id INTEGER REFERENCES depots (id));
INSERT INTO drivers VALUES
  (1, 'Tobias Osei', 4),
  (2, 'Kai Baker', 4),
  (3, 'Wanda Castro', 1),
  (4, 'Ada Nakamura', 2),
  (5, 'Celia Grant', 6),
  (6, 'Ada Grant', 6),
  (7, 'Rafael Dunn', 6),
  (8, 'Kai Abbott', 8);
CREATE TABLE deliveries (id INTEGER PRIMARY KEY, truck_id INTEGER REFERENCES trucks (id), driver_id INTEGER REFERENCES drivers (id), delivered_on TEXT, weight_kg INTEGER);
INSERT INTO deliveries VALUES
  (1, 4, 8, '2023-12-18', 50),
  (2, 5, 8, '2023-06-10', 78),
  (3, 2, 6, '2023-05-01', 61),
  (4, 2, 2, '2023-04-23', 48),
  (5, 3, 4, '2023-03-15', 41),
  (6, 8, 2, '2023-06-08', 108),
  (7, 6, 2, '2023-10-29', 90),
  (8, 4, 8, '2023-10-16', 83);
