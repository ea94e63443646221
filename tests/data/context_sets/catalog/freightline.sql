CREATE TABLE depots (id INTEGER PRIMARY KEY, city TEXT);
INSERT INTO depots VALUES
  (1, 'Hamar'),
  (2, 'Izmir'),
  (3, 'Aarhus'),
  (4, 'Graz'),
  (5, 'Izmir'),
  (6, 'Jena'),
  (7, 'Eindhoven'),
  (8, 'Izmir');
CREATE TABLE trucks (id INTEGER PRIMARY KEY, plate TEXT, depot_id INTEGER REFERENCES depots (id), capacity_kg INTEGER);
INSERT INTO trucks VALUES
  (1, 'LS-011', 6, 44),
  (2, 'NR-011', 8, 87),
  (3, 'NP-077', 8, 40),
  (4, 'LP-011', 3, 42),
  (5, 'KT-077', 5, 113),
  (6, 'MT-042', 8, 12),
  (7, 'KS-077', 4, 40),
  (8, 'KS-011', 6, 28);
CREATE TABLE drivers (id INTEGER PRIMARY KEY, full_name TEXT, depot_id INTEGER REFERENCES depots (id));
INSERT INTO drivers VALUES
  (1, 'Xavier Castro', 4),
  (2, 'Mateo Ferreira', 5),
  (3, 'Kai Holm', 3),
  (4, 'Celia Ito', 2),
  (5, 'Leila Kaur', 1),
  (6, 'Oskar Holm', 5),
  (7, 'Juno Dunn', 4),
  (8, 'Oskar Kaur', 7);
CREATE TABLE deliveries (id INTEGER PRIMARY KEY, truck_id INTEGER REFERENCES trucks (id), driver_id INTEGER REFERENCES drivers (id), delivered_on TEXT, weight_kg INTEGER);
INSERT INTO deliveries VALUES
  (1, 3, 8, '2023-09-28', 61),
  (2, 3, 6, '2023-11-23', 84),
  (3, 1, 1, '2023-11-22', 53),
  (4, 7, 4, '2023-10-07', 79),
  (5, 1, 7, '2023-09-30', 48),
  (6, 4, 3, '2023-11-11', 59),
  (7, 7, 8, '2023-10-29', 61),
  (8, 7, 5, '2023-02-07', 88);
