CREATE TABLE vehicles (id INTEGER PRIMARY KEY, plate TEXT, model TEXT, daily_rate NUMERIC(10, 2));
INSERT INTO vehicles VALUES
  (1, 'LS-011', 'Toyota Corolla', 253.14),
  (2, 'KP-011', 'VW Golf', 389.03),
  (3, 'KS-042', 'Skoda Octavia', 451.84),
  (4, 'MR-077', 'Volvo XC60', 70.35),
  (5, 'LT-042', 'Volvo XC60', 891.4),
  (6, 'MP-077', 'Skoda Octavia', 457.76),
  (7, 'MP-077', 'BMW X1', 27.93),
  (8, 'NT-011', 'Skoda Octavia', 554.5);
CREATE TABLE customers (id INTEGER PRIMARY KEY, full_name TEXT, licence_no TEXT);
INSERT INTO customers VALUES
  (1, 'Ibrahim Baker', 'KP-077'),
  (2, 'Oskar Castro', 'LR-077'),
  (3, 'Xavier Jensen', 'NP-042'),
  (4, 'Viktor Petrov', 'MR-042'),
  (5, 'Esme Eklund', 'LR-042'),
  (6, 'Celia Holm', 'LP-077'),
  (7, 'Selma Eklund', 'LP-077'),
  (8, 'Zeno Osei', 'KT-011');
CREATE TABLE branches (id INTEGER PRIMARY KEY, city TEXT);
INSERT INTO branches VALUES
  (1, 'Malmo'),
  (2, 'Oulu'),
  (3, 'Rijeka'),
  (4, 'Nantes'),
  (5, 'Kaunas'),
  (6, 'Kaunas'),
  (7, 'Oulu'),
  (8, 'Rijeka');
CREATE TABLE rentals (id INTEGER PRIMARY KEY, vehicle_id INTEGER REFERENCES vehicles (id), customer_id INTEGER REFERENCES customers (id), branch_id INTEGER REFERENCES branches (id), start_date TEXT, days INTEGER);
INSERT INTO rentals VALUES
  (1, 1, 4, 6, '2023-05-05', 104),
  (2, 5, 3, 3, '2023-10-27', 16),
  (3, 5, 4, 7, '2023-10-22', 88),
  (4, 7, 5, 4, '2023-06-04', 18),
  (5, 1, 4, 4, '2023-01-26', 6),
  (6, 8, 4, 8, '2023-07-14', 56),
  (7, 8, 2, 4, '2023-05-29', 30),
  (8, 6, 3, 1, '2023-05-01', 16);
