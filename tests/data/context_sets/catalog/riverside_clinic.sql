CREATE TABLE wards (id INTEGER PRIMARY KEY, ward_name TEXT, floor INTEGER);
INSERT INTO wards VALUES
  (1, 'Oncology', 74),
  (2, 'Maternity', 116),
  (3, 'Cardiology', 69),
  (4, 'Radiology', 91),
  (5, 'Orthopaedics', 18),
  (6, 'Radiology', 42),
  (7, 'Radiology', 28),
  (8, 'Paediatrics', 16);
CREATE TABLE doctors (id INTEGER PRIMARY KEY, full_name TEXT, specialty TEXT);
INSERT INTO doctors VALUES
  (1, 'Fatima Grant', 'cardiologist'),
  (2, 'Oskar Ferreira', 'neurologist'),
  (3, 'Ada Castro', 'anaesthetist'),
  (4, 'Kai Grant', 'anaesthetist'),
  (5, 'Ibrahim Moreau', 'surgeon'),
  (6, 'Viktor Ferreira', 'surgeon'),
  (7, 'Ulla Nakamura', 'oncologist'),
  (8, 'Yara Dunn', 'anaesthetist');
CREATE TABLE patients (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT, birth_date TEXT);
INSERT INTO patients VALUES
  (1, 'Zeno Holm', 'Rijeka', '2023-07-20'),
  (2, 'Mateo Dunn', 'Kaunas', '2023-10-23'),
  (3, 'Goran Ito', 'Tartu', '2023-04-22'),
  (4, 'Zeno Baker', 'Malmo', '2023-12-27'),
  (5, 'Mateo Holm', 'Quimper', '2023-01-03'),
  (6, 'Selma Castro', 'Tartu', '2023-08-15'),
  (7, 'Xavier Castro', 'Split', '2023-11-14'),
  (8, 'Bruno Moreau', 'Quimper', '2023-03-14');
CREATE TABLE admissions (id INTEGER PRIMARY KEY, patient_id INTEGER REFERENCES patients (id), ward_id INTEGER REFERENCES wards (id), doctor_id INTEGER REFERENCES doctors (id), admitted_on TEXT);
INSERT INTO admissions VALUES
  (1, 2, 5, 1, '2023-07-22'),
  (2, 4, 8, 2, '2023-02-05'),
  (3, 4, 6, 2, '2023-06-12'),
  (4, 3, 6, 1, '2023-11-17'),
  (5, 2, 4, 3, '2023-11-22'),
  (6, 1, 1, 7, '2023-02-16'),
  (7, 6, 6, 7, '2023-08-02'),
  (8, 3, 7, 8, '2023-11-28');
