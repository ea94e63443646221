CREATE TABLE dishes (id INTEGER PRIMARY KEY, dish_name TEXT, price NUMERIC(10, 2), course TEXT);
INSERT INTO dishes VALUES
  (1, 'Miso Ramen', 474.22, 'main'),
  (2, 'Kale Caesar', 194.97, 'drink'),
  (3, 'Osso Buco', 139.43, 'starter'),
  (4, 'Tiramisu', 512.88, 'drink'),
  (5, 'Acai Smoothie', 786.18, 'dessert'),
  (6, 'Carbonara', 417.28, 'main'),
  (7, 'Margherita Pizza', 777.55, 'main'),
  (8, 'Tiramisu', 466.02, 'dessert');
CREATE TABLE tables_ (id INTEGER PRIMARY KEY, table_no INTEGER, seats INTEGER);
INSERT INTO tables_ VALUES
  (1, 38, 40),
  (2, 22, 115),
  (3, 39, 49),
  (4, 101, 117),
  (5, 32, 50),
  (6, 108, 38),
  (7, 111, 71),
  (8, 73, 106);
CREATE TABLE orders (id INTEGER PRIMARY KEY, table_id INTEGER REFERENCES tables_ (id), ordered_at TEXT, waiter TEXT);
INSERT INTO orders VALUES
  (1, 2, '2023-09-04', 'Ibrahim Nakamura'),
  (2, 5, '2023-10-05', 'Ulla Castro'),
  (3, 1, '2023-03-26', 'Leila Grant'),
  (4, 2, '2023-12-27', 'Yara Castro'),
  (5, 6, '2023-09-07', 'Tobias Abbott'),
  (6, 6, '2023-03-15', 'Kai Ferreira'),
  (7, 6, '2023-06-21', 'Bruno Baker'),
  (8, 5, '2023-06-06', 'Juno Ferreira');
CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders (id), dish_id INTEGER REFERENCES dishes (id), qty INTEGER);
INSERT INTO order_items VALUES
  (1, 6, 6, 98),
  (2, 3, 1, 52),
  (3, 7, 4, 81),
  (4, 8, 6, 114),
  (5, 6, 3, 90),
  (6, 3, 4, 33),
  (7, 4, 7, 29),
  (8, 6, 7, 88);
