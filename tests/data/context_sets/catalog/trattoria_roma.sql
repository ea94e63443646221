CREATE TABLE dishes (id INTEGER PRIMARY KEY, dish_name TEXT, price NUMERIC(10, 2), course TEXT);
INSERT INTO dishes VALUES
  (1, 'Salmon Nigiri', 552.7, 'starter'),
  (2, 'Acai Smoothie', 217.43, 'dessert'),
  (3, 'Salmon Nigiri', 483.8, 'dessert'),
  (4, 'Quinoa Bowl', 180.23, 'dessert'),
  (5, 'Matcha Mochi', 127.49, 'drink'),
  (6, 'Margherita Pizza', 595.24, 'main'),
  (7, 'Carbonara', 95.1, 'main'),
  (8, 'Margherita Pizza', 462.16, 'main');
CREATE TABLE tables_ (id INTEGER PRIMARY KEY, table_no INTEGER, seats INTEGER);
INSERT INTO tables_ VALUES
  (1, 18, 65),
  (2, 26, 119),
  (3, 15, 117),
  (4, 1, 99),
  (5, 87, 3),
  (6, 57, 37),
  (7, 96, 12),
  (8, 75, 41);
CREATE TABLE orders (id INTEGER PRIMARY KEY, table_id INTEGER REFERENCES tables_ (id), ordered_at TEXT, waiter TEXT);
INSERT INTO orders VALUES
  (1, 4, '2023-02-25', 'Selma Ferreira'),
  (2, 5, '2023-12-07', 'Mateo Holm'),
  (3, 1, '2023-08-04', 'Pia Petrov'),
  (4, 2, '2023-02-18', 'Helga Holm'),
  (5, 8, '2023-04-11', 'Ulla Jensen'),
  (6, 4, '2023-03-02', 'Kai Holm'),
  (7, 2, '2023-10-11', 'Helga Abbott'),
  (8, 2, '2023-03-28', 'Yara Grant');
CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders (id), dish_id INTEGER REFERENCES dishes (id), qty INTEGER);
INSERT INTO order_items VALUES
  (1, 7, 4, 81),
  (2, 6, 5, 2),
  (3, 8, 2, 66),
  (4, 3, 3, 13),
  (5, 7, 3, 102),
  (6, 7, 2, 52),
  (7, 1, 1, 82),
  (8, 2, 7, 16);
