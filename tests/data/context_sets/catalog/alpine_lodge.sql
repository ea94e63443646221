CREATE TABLE rooms (id INTEGER PRIMARY KEY, room_no INTEGER, room_type TEXT, nightly_rate NUMERIC(10, 2));
INSERT INTO rooms VALUES
  (1, 109, 'double', 15.04),
  (2, 19, 'single', 379.53),
  (3, 107, 'double', 827.95),
  (4, 41, 'twin', 110.55),
  (5, 19, 'family room', 81.99),
  (6, 58, 'twin', 71.58),
  (7, 98, 'single', 544.16),
  (8, 106, 'double', 131.18);
CREATE TABLE guests (id INTEGER PRIMARY KEY, full_name TEXT, country TEXT);
INSERT INTO guests VALUES
  (1, 'Ada Eklund', 'Iceland'),
  (2, 'Bruno Ferreira', 'Norway'),
  (3, 'Kai Castro', 'Iceland'),
  (4, 'Wanda Ferreira', 'Japan'),
  (5, 'Mateo Nakamura', 'Norway'),
  (6, 'Selma Ito', 'Kenya'),
  (7, 'Esme Lindqvist', 'Portugal'),
  (8, 'Yara Grant', 'Iceland');
CREATE TABLE reservations (id INTEGER PRIMARY KEY, guest_id INTEGER REFERENCES guests (id), room_id INTEGER REFERENCES rooms (id), check_in TEXT, nights INTEGER);
INSERT INTO reservations VALUES
  (1, 8, 6, '2023-06-18', 17),
  (2, 1, 1, '2023-06-08', 109),
  (3, 7, 6, '2023-04-19', 8),
  (4, 3, 7, '2023-10-12', 58),
  (5, 4, 8, '2023-07-08', 43),
  (6, 4, 7, '2023-06-29', 40),
  (7, 8, 2, '2023-12-02', 45),
  (8, 3, 8, '2023-01-19', 101);
CREATE TABLE employees (id INTEGER PRIMARY KEY, full_name TEXT, position TEXT);
INSERT INTO employees VALUES
  (1, 'Tobias Dunn', 'concierge'),
  (2, 'Celia Ferreira', 'housekeeper'),
  (3, 'Ulla Eklund', 'night manager'),
  (4, 'Wanda Castro', 'receptionist'),
  (5, 'Viktor Ferreira', 'receptionist'),
  (6, 'Viktor Eklund', 'night manager'),
  (7, 'Leila Ferreira', 'concierge'),
  (8, 'Selma Jensen', 'night manager');
