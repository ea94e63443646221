CREATE TABLE customers (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT, tariff TEXT);
INSERT INTO customers VALUES
  (1, 'Xavier Lindqvist', 'Wroclaw', 'fixed rate'),
  (2, 'Kai Eklund', 'Lucerne', 'fixed rate'),
  (3, 'Ulla Osei', 'Salzburg', 'variable'),
  (4, 'Ada Eklund', 'Valletta', 'green tariff'),
  (5, 'Viktor Lindqvist', 'Turku', 'fixed rate'),
  (6, 'Juno Eklund', 'Umea', 'variable'),
  (7, 'Wanda Castro', 'Lucerne', 'fixed rate'),
  (8, 'Selma Castro', 'Brno', 'green tariff');
CREATE TABLE meters (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers (id), serial TEXT);
INSERT INTO meters VALUES
  (1, 7, 'KR-077'),
  (2, 6, 'LS-042'),
  (3, 7, 'NT-011'),
  (4, 4, 'LR-042'),
  (5, 6, 'LP-042'),
  (6, 8, 'MS-042'),
  (7, 8, 'MS-077'),
  (8, 5, 'MR-077');
CREATE TABLE readings (id INTEGER PRIMARY KEY, meter_id INTEGER REFERENCES meters (id), read_on TEXT, kwh INTEGER);
INSERT INTO readings VALUES
  (1, 7, '2023-12-26', 9),
  (2, 8, '2023-08-26', 79),
  (3, 7, '2023-04-02', 24),
  (4, 2, '2023-09-24', 78),
  (5, 7, '2023-10-01', 84),
  (6, 1, '2023-11-19', 91),
  (7, 2, '2023-08-20', 7),
  (8, 7, '2023-12-05', 68);
CREATE TABLE bills (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers (id), amount NUMERIC(10, 2), due_on TEXT);
INSERT INTO bills VALUES
  (1, 4, 196.69, '2023-03-23'),
  (2, 7, 229.02, '2023-08-29'),
  (3, 5, 260.91, '2023-06-21'),
  (4, 3, 435.46, '2023-10-24'),
  (5, 5, 529.72, '2023-12-25'),
  (6, 8, 17.15, '2023-11-14'),
  (7, 7, 80.57, '2023-12-13'),
  (8, 4, 636.32, '2023-01-04');
