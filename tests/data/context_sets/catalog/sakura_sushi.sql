CREATE TABLE dishes (id INTEGER PRIMARY KEY, dish_name TEXT, price NUMERIC(10, 2), course TEXT);
INSERT INTO dishes VALUES
  (1, 'Acai Smoothie', 234.05, 'starter'),
  (2, 'Tiramisu', 864.25, 'starter'),
  (3, 'Osso Buco', 255.25, 'drink'),
  (4, 'Carbonara', 459.49, 'dessert'),
  (5, 'Acai Smoothie', 453.57, 'main'),
  (6, 'Margherita Pizza', 396.1, 'starter'),
  (7, 'Matcha Mochi', 84.46, 'drink'),
  (8, 'Acai Smoothie', 429.62, 'main');
CREATE TABLE tables_ (id INTEGER PRIMARY KEY, table_no INTEGER, seats INTEGER);
INSERT INTO tables_ VALUES
  (1, 81, 53),
  (2, 41, 115),
  (3, 88, 115),
  (4, 110, 49),
  (5, 65, 99),
  (6, 91, 88),
  (7, 85, 36),
  (8, 107, 94);
CREATE TABLE orders (id INTEGER PRIMARY KEY, table_id INTEGER REFERENCES tables_ (id), ordered_at TEXT, waiter TEXT);
INSERT INTO orders VALUES
  (1, 4, '2023-02-25', 'Celia Eklund'),
  (2, 4, '2023-06-18', 'Celia Nakamura'),
  (3, 2, '2023-08-18', 'Ada Eklund'),
  (4, 4, '2023-09-07', 'Rafael Baker'),
  (5, 7, '2023-03-08', 'Rafael Holm'),
  (6, 3, '2023-03-15', 'Dmitri Lindqvist'),
  (7, 5, '2023-01-06', 'Nadia Holm'),
  (8, 5, '2023-03-06', 'Nadia Dunn');
CREATE TABLE order_items (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders (id), dish_id INTEGER REFERENCES dishes (id), qty INTEGER);
INSERT INTO order_items VALUES
  (1, 5, 7, 51),
  (2, 2, 6, 13),
  (3, 4, 3, 6),
  (4, 8, 2, 46),
  (5, 2, 2, 37),
  (6, 8, 2, 74),
  (7, 6, 2, 97),
  (8, 3, 1, 2);
