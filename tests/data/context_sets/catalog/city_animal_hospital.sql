CREATE TABLE owners (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT);
INSERT INTO owners VALUES
  (1, 'Viktor Lindqvist', 'Ypres'),
  (2, 'Viktor Nakamura', 'Brno'),
  (3, 'Ada Moreau', 'Salzburg'),
  (4, 'Mateo Baker', 'Valletta'),
  (5, 'Bruno Kaur', 'Zadar'),
  (6, 'Fatima Ito', 'Lucerne'),
  (7, 'Helga Lindqvist', 'Ypres'),
  (8, 'Dmitri Dunn', 'Valletta');
CREATE TABLE pets (id INTEGER PRIMARY KEY, pet_name TEXT, species TEXT, owner_id INTEGER REFERENCES owners (id));
INSERT INTO pets VALUES
  (1, 'Pickles', 'dog', 2),
  (2, 'Pepper', 'cat', 4),
  (3, 'Pepper', 'cat', 1),
  (4, 'Juniper', 'cat', 4),
  (5, 'Bramble', 'guinea pig', 8),
  (6, 'Pepper', 'rabbit', 6),
  (7, 'Mochi', 'cat', 5),
  (8, 'Ziggy', 'dog', 3);
CREATE TABLE visits (id INTEGER PRIMARY KEY, pet_id INTEGER REFERENCES pets (id), visit_date TEXT, reason TEXT, fee NUMERIC(10, 2));
INSERT INTO visits VALUES
  (1, 1, '2023-04-21', 'vaccination', 674.01),
  (2, 8, '2023-05-20', 'vaccination', 814.71),
  (3, 7, '2023-10-05', 'neutering', 157.62),
  (4, 8, '2023-10-10', 'annual check-up', 250.0),
  (5, 1, '2023-08-05', 'annual check-up', 549.27),
  (6, 2, '2023-04-12', 'neutering', 496.35),
  (7, 3, '2023-10-10', 'vaccination', 755.39),
  (8, 8, '2023-04-29', 'limping', 707.18);
