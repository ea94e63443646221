CREATE TABLE agents (id INTEGER PRIMARY KEY, full_name TEXT);
INSERT INTO agents VALUES
  (1, 'Goran Ferreira'),
  (2, 'Mateo Ito'),
  (3, 'Ulla Holm'),
  (4, 'Ulla Abbott'),
  (5, 'Ada Ferreira'),
  (6, 'Rafael Petrov'),
  (7, 'Leila Grant'),
  (8, 'Mateo Petrov');
CREATE TABLE properties (id INTEGER PRIMARY KEY, address TEXT, city TEXT, bedrooms INTEGER, asking_price NUMERIC(10, 2));
INSERT INTO properties VALUES
  (1, '12 Elm Street', 'Split', 53, 691.78),
  (2, '12 Harbour Road', 'Malmo', 103, 650.69),
  (3, '58 Elm Street', 'Quimper', 35, 713.15),
  (4, '58 Elm Street', 'Porto', 92, 174.26),
  (5, '58 Elm Street', 'Split', 115, 347.5),
  (6, '4 Elm Street', 'Rijeka', 91, 843.7),
  (7, '4 Chapel Row', 'Tartu', 39, 219.39),
  (8, '58 Harbour Road', 'Nantes', 85, 419.41);
CREATE TABLE listings (id INTEGER PRIMARY KEY, property_id INTEGER REFERENCES properties (id), agent_id INTEGER REFERENCES agents (id), listed_on TEXT);
INSERT INTO listings VALUES
  (1, 7, 5, '2023-10-29'),
  (2, 2, 4, '2023-06-04'),
  (3, 5, 6, '2023-07-04'),
  (4, 5, 8, '2023-06-19'),
  (5, 6, 5, '2023-09-10'),
  (6, 6, 2, '2023-06-16'),
  (7, 7, 7, '2023-11-17'),
  (8, 2, 6, '2023-03-27');
CREATE TABLE offers (id INTEGER PRIMARY KEY, listing_id INTEGER REFERENCES listings (id), amount NUMERIC(10, 2), buyer TEXT);
INSERT INTO offers VALUES
  (1, 3, 488.14, 'Juno Grant'),
  (2, 5, 86.25, 'Oskar Holm'),
  (3, 4, 156.35, 'Viktor Holm'),
  (4, 8, 771.07, 'Zeno Abbott'),
  (5, 8, 281.98, 'Bruno Abbott'),
  (6, 1, 442.96, 'Celia Abbott'),
  (7, 1, 261.79, 'Xavier Grant'),
  (8, 8, 301.18, 'Selma Kaur');
