CREATE TABLE medicines (id INTEGER PRIMARY KEY, brand_name TEXT, form TEXT, price NUMERIC(10, 2));
INSERT INTO medicines VALUES
  (1, 'Ibuprofen 200', 'tablet', 866.07),
  (2, 'Ibuprofen 200', 'cream', 96.56),
  (3, 'Ibuprofen 200', 'inhaler', 647.77),
  (4, 'Ibuprofen 200', 'syrup', 890.03),
  (5, 'Atorvastatin 40', 'syrup', 366.71),
  (6, 'Ibuprofen 200', 'cream', 430.47),
  (7, 'Cetirizine 10', 'capsule', 872.0),
  (8, 'Cetirizine 10', 'syrup', 564.58);
CREATE TABLE prescriptions (id INTEGER PRIMARY KEY, patient TEXT, medicine_id INTEGER REFERENCES medicines (id), prescriber TEXT, issued_on TEXT);
INSERT INTO prescriptions VALUES
  (1, 'Yara Eklund', 1, 'Rafael Holm', '2023-01-23'),
  (2, 'Fatima Lindqvist', 3, 'Xavier Dunn', '2023-08-24'),
  (3, 'Ulla Ferreira', 8, 'Fatima Jensen', '2023-12-08'),
  (4, 'Rafael Abbott', 5, 'Kai Petrov', '2023-09-05'),
  (5, 'Ada Holm', 6, 'Wanda Lindqvist', '2023-03-18'),
  (6, 'Mateo Dunn', 3, 'Esme Lindqvist', '2023-12-21'),
  (7, 'Celia Kaur', 8, 'Xavier Dunn', '2023-10-24'),
  (8, 'Esme Baker', 2, 'Oskar Ferreira', '2023-10-07');
CREATE TABLE suppliers (id INTEGER PRIMARY KEY, supplier_name TEXT);
INSERT INTO suppliers VALUES
  (1, 'Apex Health Supply'),
  (2, 'Medisource Ltd'),
  (3, 'Nordic Pharma'),
  (4, 'Apex Health Supply'),
  (5, 'Nordic Pharma'),
  (6, 'Medisource Ltd'),
  (7, 'Medisource Ltd'),
  (8, 'Medisource Ltd');
CREATE TABLE stock (id INTEGER PRIMARY KEY, medicine_id INTEGER REFERENCES medicines (id), supplier_id INTEGER REFERENCES suppliers (id), units INTEGER);
INSERT INTO stock VALUES
  (1, 3, 8, 106),
  (2, 4, 2, 2),
  (3, 2, 4, 49),
  (4, 7, 3, 69),
  (5, 4, 6, 22),
  (6, 4, 5, 93),
  (7, 2, 6, 36),
  (8, 7, 3, 94);
