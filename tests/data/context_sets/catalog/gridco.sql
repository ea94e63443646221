CREATE TABLE customers (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT, tariff TEXT);
INSERT INTO customers VALUES
  (1, 'Tobias Baker', 'Graz', 'economy 7'),
  (2, 'Ulla Lindqvist', 'Hamar', 'fixed rate'),
  (3, 'Celia Moreau', 'Bilbao', 'economy 7'),
  (4, 'Juno Osei', 'Jena', 'green tariff'),
  (5, 'Leila Ito', 'Jena', 'green tariff'),
  (6, 'Leila Osei', 'Dresden', 'economy 7'),
  (7, 'Oskar Castro', 'Hamar', 'variable'),
  (8, 'Fatima Dunn', 'Faro', 'green tariff');
CREATE TABLE meters (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers (id), serial TEXT);
INSERT INTO meters VALUES
  (1, 8, 'MP-011'),
  (2, 2, 'KS-011'),
  (3, 5, 'MS-077'),
  (4, 8, 'KP-042'),
  (5, 6, 'KR-011'),
  (6, 6, 'LT-011'),
  (7, 5, 'LT-077'),
  (8, 3, 'KP-042');
CREATE TABLE readings (id INTEGER PRIMARY KEY, meter_id INTEGER REFERENCES meters (id), read_on TEXT, kwh INTEGER);
INSERT INTO readings VALUES
  (1, 8, '2023-08-10', 93),
  (2, 8, '2023-07-31', 82),
  (3, 2, '2023-12-16', 82),
  (4, 8, '2023-04-25', 105),
  (5, 3, '2023-01-20', 56),
  (6, 8, '2023-07-25', 51),
  (7, 7, '2023-01-28', 11),
  (8, 1, '2023-05-01', 104);
CREATE TABLE bills (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers (id), amount NUMERIC(10, 2), due_on TEXT);
INSERT INTO bills VALUES
  (1, 5, 507.83, '2023-01-22'),
  (2, 3, 805.38, '2023-10-14'),
  (3, 2, 635.1, '2023-01-12'),
  (4, 2, 798.9, '2023-08-30'),
  (5, 4, 705.79, '2023-07-10'),
  (6, 5, 766.75, '2023-05-30'),
  (7, 4, 138.62, '2023-03-07'),
  (8, 5, 758.89, '2023-05-30');
