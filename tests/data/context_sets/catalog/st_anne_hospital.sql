CREATE TABLE wards (id INTEGER PRIMARY KEY, ward_name TEXT, floor INTEGER);
INSERT INTO wards VALUES
  (1, 'Maternity', 24),
  (2, 'Geriatrics', 48),
  (3, 'Paediatrics', 38),
  (4, 'Radiology', 107),
  (5, 'Neurology', 55),
  (6, 'Dermatology', 69),
  (7, 'Maternity', 36),
  (8, 'Cardiology', 50);
CREATE TABLE doctors (id INTEGER PRIMARY KEY, full_name TEXT, specialty TEXT);
INSERT INTO doctors VALUES
  (1, 'Tobias Ito', 'cardiologist'),
  (2, 'Ulla Lindqvist', 'neurologist'),
  (3, 'Rafael Holm', 'cardiologist'),
  (4, 'Zeno Ferreira', 'neurologist'),
  (5, 'Celia Ito', 'oncologist'),
  (6, 'Kai Jensen', 'oncologist'),
  (7, 'Helga Baker', 'anaesthetist'),
  (8, 'Wanda Grant', 'surgeon');
CREATE TABLE patients (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT, birth_date TEXT);
INSERT INTO patients VALUES
  (1, 'Selma Baker', 'Aarhus', '2023-12-03'),
  (2, 'Rafael Nakamura', 'Cork', '2023-11-27'),
  (3, 'Dmitri Ferreira', 'Hamar', '2023-07-30'),
  (4, 'Goran Grant', 'Aarhus', '2023-03-05'),
  (5, 'Xavier Baker', 'Eindhoven', '2023-06-25'),
  (6, 'Tobias Holm', 'Izmir', '2023-11-15'),
  (7, 'Mateo Castro', 'Dresden', '2023-08-16'),
  (8, 'Esme Petrov', 'Faro', '2023-10-27');
CREATE TABLE admissions (id INTEGER PRIMARY KEY, patient_id INTEGER REFERENCES patients (id), ward_id INTEGER REFERENCES wards (id), doctor_id INTEGER REFERENCES doctors (id), admitted_on TEXT);
INSERT INTO admissions VALUES
  (1, 5, 6, 6, '2023-04-20'),
  (2, 1, 7, 3, '2023-10-21'),
  (3, 7, 5, 1, '2023-12-15'),
  (4, 6, 3, 2, '2023-10-05'),
  (5, 6, 8, 2, '2023-03-05'),
  (6, 7, 8, 6, '2023-08-25'),
  (7, 2, 2, 8, '2023-09-03'),
  (8, 8, 3, 8, '2023-03-10');
