CREATE TABLE vehicles (id INTEGER PRIMARY KEY, plate TEXT, model TEXT, daily_rate NUMERIC(10, 2));
INSERT INTO vehicles VALUES
  (1, 'KS-077', 'Volvo XC60', 733.69),
  (2, 'NR-011', 'Fiat 500', 745.35),
  (3, 'MR-042', 'Skoda Octavia', 844.9),
  (4, 'KS-077', 'Toyota Corolla', 752.29),
  (5, 'MP-011', 'BMW X1', 374.64),
  (6, 'NS-011', 'Toyota Corolla', 769.79),
  (7, 'MP-011', 'Volvo XC60', 159.06),
  (8, 'LP-042', 'Volvo XC60', 491.17);
CREATE TABLE customers (id INTEGER PRIMARY KEY, full_name TEXT, licence_no TEXT);
INSERT INTO customers VALUES
  (1, 'Dmitri Castro', 'KP-077'),
  (2, 'Pia Grant', 'MR-011'),
  (3, 'Zeno Dunn', 'MR-077'),
  (4, 'Mateo Moreau', 'KR-011'),
  (5, 'Ulla Petrov', 'LT-011'),
  (6, 'Bruno Eklund', 'KP-011'),
  (7, 'Dmitri Nakamura', 'NP-077'),
  (8, 'Tobias Kaur', 'LP-042');
CREATE TABLE branches (id INTEGER PRIMARY KEY, city TEXT);
INSERT INTO branches VALUES
  (1, 'Izmir'),
  (2, 'Cork'),
  (3, 'Faro'),
  (4, 'Izmir'),
  (5, 'Cork'),
  (6, 'Izmir'),
  (7, 'Bilbao'),
  (8, 'Graz');
CREATE TABLE rentals (id INTEGER PRIMARY KEY, vehicle_id INTEGER REFERENCES vehicles (id), customer_id INTEGER REFERENCES customers (id), branch_id INTEGER REFERENCES branches (id), start_date TEXT, days INTEGER);
INSERT INTO rentals VALUES
  (1, 2, 3, 6, '2023-04-10', 11),
  (2, 3, 7, 7, '2023-11-08', 78),
  (3, 4, 2, 6, '2023-06-24', 18),
  (4, 6, 1, 7, '2023-03-13', 36),
  (5, 1, 3, 1, '2023-08-04', 33),
  (6, 8, 2, 1, '2023-06-07', 93),
  (7, 2, 5, 3, '2023-01-28', 109),
  (8, 4, 6, 1, '2023-04-27', 22);
