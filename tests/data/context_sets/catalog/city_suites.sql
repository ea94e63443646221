CREATE TABLE rooms (id INTEGER PRIMARY KEY, room_no INTEGER, room_type TEXT, nightly_rate NUMERIC(10, 2));
INSERT INTO rooms VALUES
  (1, 37, 'twin', 151.43),
  (2, 83, 'family room', 778.25),
  (3, 54, 'twin', 443.42),
  (4, 33, 'single', 897.36),
  (5, 43, 'double', 682.88),
  (6, 65, 'double', 445.53),
  (7, 97, 'single', 893.98),
  (8, 84, 'family room', 287.3);
CREATE TABLE guests (id INTEGER PRIMARY KEY, full_name TEXT, country TEXT);
INSERT INTO guests VALUES
  (1, 'Ulla Ferreira', 'Iceland'),
  (2, 'Leila Dunn', 'Portugal'),
  (3, 'Dmitri Ferreira', 'Iceland'),
  (4, 'Yara Dunn', 'Chile'),
  (5, 'Zeno Moreau', 'Estonia'),
  (6, 'Goran Nakamura', 'Canada'),
  (7, 'Tobias Eklund', 'Iceland'),
  (8, 'Rafael Kaur', 'Kenya');
CREATE TABLE reservations (id INTEGER PRIMARY KEY, guest_id INTEGER REFERENCES guests (id), room_id INTEGER REFERENCES rooms (id), check_in TEXT, nights INTEGER);
INSERT INTO reservations VALUES
  (1, 6, 3, '2023-03-25', 112),
  (2, 8, 1, '2023-01-29', 33),
  (3, 5, 1, '2023-06-18', 63),
  (4, 2, 2, '2023-12-25', 120),
  (5, 4, 4, '2023-03-09', 17),
  (6, 5, 6, '2023-10-05', 52),
  (7, 8, 5, '2023-08-28', 117),
  (8, 4, 8, '2023-09-11', 115);
CREATE TABLE employees (id INTEGER PRIMARY KEY, full_name TEXT, position TEXT);
INSERT INTO employees VALUES
  (1, 'Helga Dunn', 'concierge'),
  (2, 'Zeno Baker', 'housekeeper'),
  (3, 'Kai Grant', 'chef'),
  (4, 'Esme Jensen', 'night manager'),
  (5, 'Oskar Nakamura', 'chef'),
  (6, 'Viktor Nakamura', 'housekeeper'),
  (7, 'Celia Lindqvist', 'concierge'),
  (8, 'Nadia Osei', 'chef');
