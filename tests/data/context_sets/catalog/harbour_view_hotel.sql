CREATE TABLE rooms (id INTEGER PRIMARY KEY, room_no INTEGER, room_type TEXT, nightly_rate NUMERIC(10, 2));
INSERT INTO rooms VALUES
  (1, 52, 'single', 606.85),
  (2, 111, 'suite', 816.11),
  (3, 113, 'suite', 19.7),
  (4, 27, 'family room', 185.14),
  (5, 39, 'single', 374.35),
  (6, 95, 'double', 50.44),
  (7, 41, 'family room', 253.91),
  (8, 7, 'single', 102.74);
CREATE TABLE guests (id INTEGER PRIMARY KEY, full_name TEXT, country TEXT);
INSERT INTO guests VALUES
  (1, 'Leila Nakamura', 'Portugal'),
  (2, 'Helga Osei', 'Canada'),
  (3, 'Dmitri Petrov', 'Morocco'),
  (4, 'Ada Petrov', 'Norway'),
  (5, 'Viktor Grant', 'Chile'),
  (6, 'Helga Jensen', 'Portugal'),
  (7, 'Selma Moreau', 'Canada'),
  (8, 'Goran Lindqvist', 'Portugal');
CREATE TABLE reservations (id INTEGER PRIMARY KEY, guest_id INTEGER REFERENCES guests (id), room_id INTEGER REFERENCES rooms (id), check_in TEXT, nights INTEGER);
INSERT INTO reservations VALUES
  (1, 4, 8, '2023-03-28', 36),
  (2, 5, 3, '2023-08-16', 73),
  (3, 8, 6, '2023-11-24', 14),
  (4, 6, 4, '2023-03-25', 74),
  (5, 3, 5, '2023-03-01', 48),
  (6, 2, 6, '2023-11-19', 24),
  (7, 5, 4, '2023-07-14', 119),
  (8, 4, 4, '2023-06-22', 74);
CREATE TABLE employees (id INTEGER PRIMARY KEY, full_name TEXT, position TEXT);
INSERT INTO employees VALUES
  (1, 'Nadia Petrov', 'housekeeper'),
  (2, 'Dmitri Moreau', 'housekeeper'),
  (3, 'Selma Dunn', 'receptionist'),
  (4, 'Esme Eklund', 'receptionist'),
  (5, 'Wanda Kaur', 'housekeeper'),
  (6, 'Kai Moreau', 'chef'),
  (7, 'Juno Grant', 'night manager'),
  (8, 'Selma Moreau', 'chef');
