CREATE TABLE owners (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT);
INSERT INTO owners VALUES
  (1, 'Rafael Castro', 'Eindhoven'),
  (2, 'Xavier Ferreira', 'Faro'),
  (3, 'Selma Petrov', 'Izmir'),
  (4, 'Kai Dunn', 'Hamar'),
  (5, 'Esme Ito', 'Bilbao'),
  (6, 'Ibrahim Abbott', 'Graz'),
  (7, 'Wanda Castro', 'Bilbao'),
  (8, 'Esme Grant', 'Izmir');
CREATE TABLE pets (id INTEGER PRIMARY KEY, pet_name TEXT, species TEXT, owner_id INTEGER REFERENCES owners (id));
INSERT INTO pets VALUES
  (1, 'Biscuit', 'parrot', 6),
  (2, 'Pickles', 'parrot', 2),
  (3, 'Rocky', 'horse', 7),
  (4, 'Pepper', 'rabbit', 4),
  (5, 'Juniper', 'guinea pig', 6),
  (6, 'Juniper', 'parrot', 3),
  (7, 'Mochi', 'parrot', 2),
  (8, 'Pepper', 'parrot', 1);
CREATE TABLE visits (id INTEGER PRIMARY KEY, pet_id INTEGER REFERENCES pets (id), visit_date TEXT, reason TEXT, fee NUMERIC(10, 2));
INSERT INTO visits VALUES
  (1, 4, '2023-11-07', 'limping', 665.38),
  (2, 1, '2023-05-13', 'limping', 431.46),
  (3, 5, '2023-03-31', 'skin allergy', 830.66),
  (4, 3, '2023-09-23', 'neutering', 107.41),
  (5, 3, '2023-07-29', 'dental check', 859.67),
  (6, 8, '2023-07-09', 'vaccination', 803.29),
  (7, 5, '2023-11-16', 'neutering', 856.64),
  (8, 7, '2023-02-24', 'vaccination', 496.9);
