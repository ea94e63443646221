CREATE TABLE medicines (id INTEGER PRIMARY KEY, brand_name TEXT, form TEXT, price NUMERIC(10, 2));
INSERT INTO medicines VALUES
  (1, 'Paracetamol 500', 'syrup', 94.39),
  (2, 'Cetirizine 10', 'capsule', 865.57),
  (3, 'Omeprazole 20', 'inhaler', 385.33),
  (4, 'Paracetamol 500', 'cream', 797.92),
  (5, 'Paracetamol 500', 'capsule', 520.19),
  (6, 'Atorvastatin 40', 'cream', 672.86),
  (7, 'Paracetamol 500', 'cream', 481.08),
  (8, 'Ibuprofen 200', 'capsule', 332.78);
CREATE TABLE prescriptions (id INTEGER PRIMARY KEY, patient TEXT, medicine_id INTEGER REFERENCES medicines (id), prescriber TEXT, issued_on TEXT);
INSERT INTO prescriptions VALUES
  (1, 'Juno Moreau', 5, 'Fatima Osei', '2023-07-07'),
  (2, 'Leila Eklund', 3, 'Helga Dunn', '2023-05-08'),
  (3, 'Celia Ito', 8, 'Fatima Ferreira', '2023-10-07'),
  (4, 'Yara Ito', 8, 'Goran Ito', '2023-04-19'),
  (5, 'Wanda Grant', 8, 'Dmitri Holm', '2023-03-11'),
  (6, 'Tobias Ito', 1, 'Goran Nakamura', '2023-12-31'),
  (7, 'Viktor Holm', 8, 'Rafael Dunn', '2023-03-12'),
  (8, 'Yara Osei', 7, 'Ada Holm', '2023-09-02');
CREATE TABLE suppliers (id INTEGER PRIMARY KEY, supplier_name TEXT);
INSERT INTO suppliers VALUES
  (1, 'Vitalis Trading'),
  (2, 'Nordic Pharma'),
  (3, 'Medisource Ltd'),
  (4, 'Medisource Ltd'),
  (5, 'Vitalis Trading'),
  (6, 'Medisource Ltd'),
  (7, 'Medisource Ltd'),
  (8, 'Medisource Ltd');
CREATE TABLE stock (id INTEGER PRIMARY KEY, medicine_id INTEGER REFERENCES medicines (id), supplier_id INTEGER REFERENCES suppliers (id), units INTEGER);
INSERT INTO stock VALUES
  (1, 7, 7, 30),
  (2, 3, 6, 54),
  (3, 8, 4, 10),
  (4, 2, 3, 115),
  (5, 8, 8, 111),
  (6, 2, 4, 11),
  (7, 3, 2, 116),
  (8, 8, 7, 117);
