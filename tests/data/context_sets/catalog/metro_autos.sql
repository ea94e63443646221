CREATE TABLE vehicles (id INTEGER PRIMARY KEY, plate TEXT, model TEXT, daily_rate NUMERIC(10, 2));
INSERT INTO vehicles VALUES
  (1, 'LR-042', 'Fiat 500', 207.54),
  (2, 'NS-077', 'Tesla Model 3', 99.42),
  (3, 'MP-077', 'Skoda Octavia', 366.85),
  (4, 'KT-077', 'BMW X1', 479.94),
  (5, 'NR-077', 'Toyota Corolla', 567.2),
  (6, 'MS-011', 'Tesla Model 3', 233.02),
  (7, 'LR-042', 'Tesla Model 3', 112.74),
  (8, 'LP-011', 'Fiat 500', 682.23);
CREATE TABLE customers (id INTEGER PRIMARY KEY, full_name TEXT, licence_no TEXT);
INSERT INTO customers VALUES
  (1, 'Ulla Lindqvist', 'KP-042'),
  (2, 'Kai Lindqvist', 'LP-077'),
  (3, 'Goran Moreau', 'KS-042'),
  (4, 'Esme Baker', 'KP-077'),
  (5, 'Rafael Ferreira', 'NR-077'),
  (6, 'Fatima Petrov', 'LP-011'),
  (7, 'Goran Ito', 'NR-077'),
  (8, 'Pia Baker', 'LT-077');
CREATE TABLE branches (id INTEGER PRIMARY KEY, city TEXT);
INSERT INTO branches VALUES
  (1, 'Turku'),
  (2, 'Umea'),
  (3, 'Brno'),
  (4, 'Umea'),
  (5, 'Salzburg'),
  (6, 'Lucerne'),
  (7, 'Turku'),
  (8, 'Zadar');
CREATE TABLE rentals (id INTEGER PRIMARY KEY, vehicle_id INTEGER REFERENCES vehicles (id), customer_id INTEGER REFERENCES customers (id), branch_id INTEGER REFERENCES branches (id), start_date TEXT, days INTEGER);
INSERT INTO rentals VALUES
  (1, 6, 6, 7, '2023-02-05', 82),
  (2, 5, 3, 1, '2023-11-04', 53),
  (3, 6, 2, 7, '2023-03-07', 62),
  (4, 6, 8, 3, '2023-09-18', 110),
  (5, 5, 2, 7, '2023-07-27', 10),
  (6, 4, 2, 6, '2023-10-05', 33),
  (7, 7, 6, 7, '2023-02-15', 69),
  (8, 4, 1, 7, '2023-06-19', 54);
