CREATE TABLE agents (id INTEGER PRIMARY KEY, full_name TEXT);
INSERT INTO agents VALUES
  (1, 'Bruno Jensen'),
  (2, 'Leila Kaur'),
  (3, 'Oskar Jensen'),
  (4, 'Xavier Eklund'),
  (5, 'Wanda Ferreira'),
  (6, 'Xavier Petrov'),
  (7, 'Selma Petrov'),
  (8, 'Selma Lindqvist');
CREATE TABLE properties (id INTEGER PRIMARY KEY, address TEXT, city TEXT, bedrooms INTEGER, asking_price NUMERIC(10, 2));
INSERT INTO properties VALUES
  (1, '27 Mill Lane', 'Brno', 72, 528.91),
  (2, '4 Elm Street', 'Brno', 89, 219.05),
  (3, '4 Elm Street', 'Ypres', 51, 706.91),
  (4, '58 Harbour Road', 'Salzburg', 14, 700.78),
  (5, '27 Chapel Row', 'Salzburg', 101, 162.62),
  (6, '4 Elm Street', 'Valletta', 77, 302.61),
  (7, '27 Mill Lane', 'Ypres', 58, 233.26),
  (8, '58 Harbour Road', 'Salzburg', 80, 156.93);
CREATE TABLE listings (id INTEGER PRIMARY KEY, property_id INTEGER REFERENCES properties (id), agent_id INTEGER REFERENCES agents (id), listed_on TEXT);
INSERT INTO listings VALUES
  (1, 5, 3, '2023-07-27'),
  (2, 2, 2, '2023-07-09'),
  (3, 5, 1, '2023-11-08'),
  (4, 5, 1, '2023-04-04'),
  (5, 4, 5, '2023-12-08'),
  (6, 7, 1, '2023-10-25'),
  (7, 6, 4, '2023-10-09'),
  (8, 1, 2, '2023-03-13');
CREATE TABLE offers (id INTEGER PRIMARY KEY, listing_id INTEGER REFERENCES listings (id), amount NUMERIC(10, 2), buyer TEXT);
INSERT INTO offers VALUES
  (1, 2, 547.83, 'Fatima Abbott'),
  (2, 2, 229.89, 'Oskar Abbott'),
  (3, 8, 28.61, 'Celia Ferreira'),
  (4, 1, 218.47, 'Pia Ito'),
  (5, 1, 717.38, 'Selma Abbott'),
  (6, 7, 899.94, 'Selma Osei'),
  (7, 2, 670.97, 'Viktor Ferreira'),
  (8, 8, 253.44, 'Juno Castro');
