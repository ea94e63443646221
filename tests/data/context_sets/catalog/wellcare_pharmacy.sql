CREATE TABLE medicines (id INTEGER PRIMARY KEY, brand_name TEXT, form TEXT, price NUMERIC(10, 2));
INSERT INTO medicines VALUES
  (1, 'Paracetamol 500', 'inhaler', 814.17),
  (2, 'Ibuprofen 200', 'capsule', 517.61),
  (3, 'Omeprazole 20', 'syrup', 30.89),
  (4, 'Cetirizine 10', 'tablet', 558.76),
  (5, 'Atorvastatin 40', 'capsule', 201.8),
  (6, 'Cetirizine 10', 'tablet', 877.57),
  (7, 'Omeprazole 20', 'tablet', 564.95),
  (8, 'Atorvastatin 40', 'tablet', 869.6);
CREATE TABLE prescriptions (id INTEGER PRIMARY KEY, patient TEXT, medicine_id INTEGER REFERENCES medicines (id), prescriber TEXT, issued_on TEXT);
INSERT INTO prescriptions VALUES
  (1, 'Fatima Baker', 5, 'Tobias Abbott', '2023-09-13'),
  (2, 'Ibrahim Baker', 8, 'Xavier Ferreira', '2023-03-18'),
  (3, 'Dmitri Ito', 3, 'Wanda Kaur', '2023-09-12'),
  (4, 'Mateo Grant', 7, 'Xavier Petrov', '2023-08-29'),
  (5, 'Selma Nakamura', 8, 'Fatima Holm', '2023-01-01'),
  (6, 'Rafael Baker', 4, 'Ulla Nakamura', '2023-05-23'),
  (7, 'Bruno Moreau', 5, 'Goran Abbott', '2023-08-11'),
  (8, 'Goran Ito', 8, 'Nadia Dunn', '2023-02-26');
CREATE TABLE suppliers (id INTEGER PRIMARY KEY, supplier_name TEXT);
INSERT INTO suppliers VALUES
  (1, 'Medisource Ltd'),
  (2, 'Medisource Ltd'),
  (3, 'Nordic Pharma'),
  (4, 'Apex Health Supply'),
  (5, 'Nordic Pharma'),
  (6, 'Medisource Ltd'),
  (7, 'Apex Health Supply'),
  (8, 'Vitalis Trading');
CREATE TABLE stock (id INTEGER PRIMARY KEY, medicine_id INTEGER REFERENCES medicines (id), supplier_id INTEGER REFERENCES suppliers (id), units INTEGER);
INSERT INTO stock VALUES
  (1, 4, 6, 21),
  (2, 1, 1, 20),
  (3, 3, 1, 110),
  (4, 3, 7, 57),
  (5, 8, 7, 44),
  (6, 6, 4, 79),
  (7, 3, 3, 11),
  (8, 2, 1, 82);
