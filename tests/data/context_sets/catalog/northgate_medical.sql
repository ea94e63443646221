CREATE TABLE wards (id INTEGER PRIMARY KEY, ward_name TEXT, floor INTEGER);
INSERT INTO wards VALUES
  (1, 'Oncology', 85),
  (2, 'Dermatology', 41),
  (3, 'Radiology', 3),
  (4, 'Neurology', 91),
  (5, 'Cardiology', 49),
  (6, 'Orthopaedics', 36),
  (7, 'Cardiology', 60),
  (8, 'Orthopaedics', 48);
CREATE TABLE doctors (id INTEGER PRIMARY KEY, full_name TEXT, specialty TEXT);
INSERT INTO doctors VALUES
  (1, 'Fatima Kaur', 'surgeon'),
  (2, 'Juno Baker', 'surgeon'),
  (3, 'Selma Grant', 'neurologist'),
  (4, 'Celia Kaur', 'surgeon'),
  (5, 'Nadia Castro', 'surgeon'),
  (6, 'Fatima Dunn', 'neurologist'),
  (7, 'Esme Nakamura', 'oncologist'),
  (8, 'Wanda Abbott', 'cardiologist');
CREATE TABLE patients (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT, birth_date TEXT);
INSERT INTO patients VALUES
  (1, 'Ibrahim Holm', 'Salzburg', '2023-10-01'),
  (2, 'Ibrahim Jensen', 'Brno', '2023-06-14'),
  (3, 'Pia Ito', 'Valletta', '2023-03-09'),
  (4, 'Fatima Castro', 'Ypres', '2023-03-19'),
  (5, 'Ada Jensen', 'Salzburg', '2023-11-09'),
  (6, 'Ada Castro', 'Wroclaw', '2023-05-08'),
  (7, 'Mateo Holm', 'Zadar', '2023-08-26'),
  (8, 'Wanda Kaur', 'Salzburg', '2023-01-25');
CREATE TABLE admissions (id INTEGER PRIMARY KEY, patient_id INTEGER REFERENCES patients (id), ward_id INTEGER REFERENCES wards (id), doctor_id INTEGER REFERENCES doctors (id), admitted_on TEXT);
INSERT INTO admissions VALUES
  (1, 4, 7, 4, '2023-08-21'),
  (2, 1, 4, 5, '2023-03-07'),
  (3, 5, 6, 7, '2023-12-10'),
  (4, 5, 3, 1, '2023-05-04'),
  (5, 8, 5, 2, '2023-05-13'),
  (6, 7, 3, 1, '2023-11-01'),
  (7, 5, 1, 2, '2023-08-30'),
  (8, 6, 7, 1, '2023-11-06');
