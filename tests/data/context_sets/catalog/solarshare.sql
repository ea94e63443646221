CREATE TABLE customers (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT, tariff TEXT);
INSERT INTO customers VALUES
  (1, 'Zeno Kaur', 'Quimper', 'fixed rate'),
  (2, 'Goran Ferreira', 'Leuven', 'green tariff'),
  (3, 'Oskar Baker', 'Oulu', 'economy 7'),
  (4, 'Kai Osei', 'Nantes', 'fixed rate'),
  (5, 'Wanda Nakamura', 'Kaunas', 'variable'),
  (6, 'Wanda Osei', 'Malmo', 'variable'),
  (7, 'Bruno Castro', 'Rijeka', 'green tariff'),
  (8, 'Viktor Castro', 'Malmo', 'fixed rate');
CREATE TABLE meters (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers (id), serial TEXT);
INSERT INTO meters VALUES
  (1, 2, 'LP-077'),
  (2, 6, 'LT-042'),
  (3, 6, 'NS-042'),
  (4, 4, 'LP-011'),
  (5, 8, 'KR-077'),
  (6, 3, 'KR-042'),
  (7, 7, 'NS-011'),
  (8, 5, 'LS-011');
CREATE TABLE readings (id INTEGER PRIMARY KEY, meter_id INTEGER REFERENCES meters (id), read_on TEXT, kwh INTEGER);
INSERT INTO readings VALUES
  (1, 6, '2023-11-30', 42),
  (2, 5, '2023-10-08', 47),
  (3, 5, '2023-04-02', 38),
  (4, 2, '2023-07-08', 2),
  (5, 1, '2023-11-08', 63),
  (6, 3, '2023-03-17', 64),
  (7, 1, '2023-03-21', 75),
  (8, 5, '2023-10-17', 93);
CREATE TABLE bills (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers (id), amount NUMERIC(10, 2), due_on TEXT);
INSERT INTO bills VALUES
  (1, 6, 258.77, '2023-10-07'),
  (2, 2, 86.59, '2023-11-12'),
  (3, 6, 212.9, '2023-08-20'),
  (4, 4, 299.58, '2023-04-28'),
  (5, 6, 801.21, '2023-09-14'),
  (6, 2, 232.6, '2023-09-06'),
  (7, 2, 402.26, '2023-10-20'),
  (8, 5, 826.29, '2023-02-20');
