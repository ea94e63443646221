CREATE TABLE owners (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT);
INSERT INTO owners VALUES
  (1, 'Bruno Dunn', 'Porto'),
  (2, 'Juno Abbott', 'Rijeka'),
  (3, 'Kai Eklund', 'Quimper'),
  (4, 'Tobias Osei', 'Kaunas'),
  (5, 'Helga Lindqvist', 'Leuven'),
  (6, 'Ulla Moreau', 'Kaunas'),
  (7, 'Fatima Moreau', 'Rijeka'),
  (8, 'Mateo Dunn', 'Split');
CREATE TABLE pets (id INTEGER PRIMARY KEY, pet_name TEXT, species TEXT, owner_id INTEGER REFERENCES owners (id));
INSERT INTO pets VALUES
  (1, 'Luna', 'guinea pig', 3),
  (2, 'Juniper', 'horse', 1),
  (3, 'Luna', 'dog', 4),
  (4, 'Mochi', 'horse', 3),
  (5, 'Mochi', 'rabbit', 8),
  (6, 'Nala', 'guinea pig', 6),
  (7, 'Luna', 'parrot', 2),
  (8, 'Ziggy', 'guinea pig', 4);
CREATE TABLE visits (id INTEGER PRIMARY KEY, pet_id INTEGER REFERENCES pets (id), visit_date TEXT, reason TEXT, fee NUMERIC(10, 2));
INSERT INTO visits VALUES
  (1, 4, '2023-07-23', 'annual check-up', 499.62),
  (2, 5, '2023-07-18', 'neutering', 273.34),
  (3, 7, '2023-10-18', 'skin allergy', 761.34),
  (4, 2, '2023-07-25', 'limping', 896.87),
  (5, 8, '2023-02-25', 'dental check', 673.14),
  (6, 8, '2023-05-10', 'neutering', 412.25),
  (7, 8, '2023-02-13', 'skin allergy', 475.76),
  (8, 4, '2023-04-27', 'skin allergy', 562.28);
