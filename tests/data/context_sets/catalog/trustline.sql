CREATE TABLE policyholders (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT);
INSERT INTO policyholders VALUES
  (1, 'Goran Kaur', 'Ypres'),
  (2, 'Leila Kaur', 'Zadar'),
  (3, 'Leila Ito', 'Salzburg'),
  (4, 'Esme Ito', 'Salzburg'),
  (5, 'Esme Petrov', 'Valletta'),
  (6, 'Yara Osei', 'Turku'),
  (7, 'Esme Eklund', 'Lucerne'),
  (8, 'Yara Holm', 'Turku');
CREATE TABLE policies (id INTEGER PRIMARY KEY, holder_id INTEGER REFERENCES policyholders (id), product TEXT, premium NUMERIC(10, 2), starts_on TEXT);
INSERT INTO policies VALUES
  (1, 5, 'pet cover', 730.06, '2023-01-09'),
  (2, 5, 'travel', 625.22, '2023-05-28'),
  (3, 3, 'travel', 584.68, '2023-06-11'),
  (4, 5, 'home contents', 232.96, '2023-04-20'),
  (5, 6, 'home contents', 470.08, '2023-03-02'),
  (6, 6, 'motor comprehensive', 43.49, '2023-01-09'),
  (7, 2, 'travel', 847.18, '2023-11-15'),
  (8, 8, 'pet cover', 478.74, '2023-04-16');
CREATE TABLE claims (id INTEGER PRIMARY KEY, policy_id INTEGER REFERENCES policies (id), claimed_on TEXT, amount NUMERIC(10, 2), cause TEXT);
INSERT INTO claims VALUES
  (1, 1, '2023-10-14', 137.14, 'theft'),
  (2, 4, '2023-06-05', 443.31, 'storm damage'),
  (3, 5, '2023-10-23', 712.57, 'fire'),
  (4, 1, '2023-03-08', 223.1, 'storm damage'),
  (5, 8, '2023-09-07', 789.95, 'fire'),
  (6, 8, '2023-02-04', 580.15, 'flood'),
  (7, 6, '2023-03-12', 33.32, 'collision'),
  (8, 5, '2023-06-01', 402.21, 'storm damage');
CREATE TABLE adjusters (id INTEGER PRIMARY KEY, full_name TEXT);
INSERT INTO adjusters VALUES
  (1, 'Oskar Petrov'),
  (2, 'Xavier Kaur'),
  (3, 'Tobias Ferreira'),
  (4, 'Fatima Ito'),
  (5, 'Juno Holm'),
  (6, 'Xavier Kaur'),
  (7, 'Fatima Ito'),
  (8, 'Kai Holm');
