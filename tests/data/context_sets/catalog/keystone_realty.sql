CREATE TABLE agents (id INTEGER PRIMARY KEY, full_name TEXT);
INSERT INTO agents VALUES
  (1, 'Mateo Nakamura'),
  (2, 'Ada Dunn'),
  (3, 'Dmitri Abbott'),
  (4, 'Juno Kaur'),
  (5, 'Juno Kaur'),
  (6, 'Pia Kaur'),
  (7, 'Rafael Abbott'),
  (8, 'Fatima Lindqvist');
CREATE TABLE properties (id INTEGER PRIMARY KEY, address TEXT, city TEXT, bedrooms INTEGER, asking_price NUMERIC(10, 2));
INSERT INTO properties VALUES
  (1, '58 Elm Street', 'Dresden', 111, 681.6),
  (2, '4 Elm Street', 'Aarhus', 25, 366.74),
  (3, '4 Elm Street', 'Bilbao', 26, 415.82),
  (4, '27 Harbour Road', 'Bilbao', 63, 391.49),
  (5, '12 Chapel Row', 'Cork', 44, 105.51),
  (6, '58 Elm Street', 'Bilbao', 70, 813.2),
  (7, '27 Elm Street', 'Graz', 120, 477.11),
  (8, '27 Mill Lane', 'Jena', 85, 677.73);
CREATE TABLE listings (id INTEGER PRIMARY KEY, property_id INTEGER REFERENCES properties (id), agent_id INTEGER REFERENCES agents (id), listed_on TEXT);
INSERT INTO listings VALUES
  (1, 5, 6, '2023-12-30'),
  (2, 4, 3, '2023-10-05'),
  (3, 8, 3, '2023-11-07'),
  (4, 4, 2, '2023-05-05'),
  (5, 6, 4, '2023-11-27'),
  (6, 7, 1, '2023-01-08'),
  (7, 3, 2, '2023-10-26'),
  (8, 8, 3, '2023-03-12');
CREATE TABLE offers (id INTEGER PRIMARY KEY, listing_id INTEGER REFERENCES listings (id), amount NUMERIC(10, 2), buyer TEXT);
INSERT INTO offers VALUES
  (1, 2, 739.33, 'Ibrahim Baker'),
  (2, 8, 453.28, 'Bruno Nakamura'),
  (3, 2, 822.46, 'Ada Petrov'),
  (4, 8, 592.57, 'Zeno Dunn'),
  (5, 7, 573.33, 'Yara Petrov'),
  (6, 8, 97.22, 'Ulla Kaur'),
  (7, 2, 835.11, 'Nadia Abbott'),
  (8, 3, 421.06, 'Ibrahim Moreau');
