CREATE TABLE policyholders (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT);
INSERT INTO policyholders VALUES
  (1, 'Helga Ito', 'Faro'),
  (2, 'Bruno Lindqvist', 'Eindhoven'),
  (3, 'Nadia Grant', 'Graz'),
  (4, 'Ibrahim Ferreira', 'Hamar'),
  (5, 'Fatima Castro', 'Jena'),
  (6, 'Helga Jensen', 'Hamar'),
  (7, 'Ada Nakamura', 'Izmir'),
  (8, 'Viktor Baker', 'Jena');
CREATE TABLE policies (id INTEGER PRIMARY KEY, holder_id INTEGER REFERENCES policyholders (id), product TEXT, premium NUMERIC(10, 2), starts_on TEXT);
INSERT INTO policies VALUES
  (1, 7, 'motor comprehensive', 116.18, '2023-05-07'),
  (2, 3, 'home contents', 761.23, '2023-10-06'),
  (3, 6, 'life term', 435.55, '2023-08-19'),
  (4, 6, 'home contents', 50.67, '2023-06-23'),
  (5, 7, 'pet cover', 827.53, '2023-10-18'),
  (6, 4, 'home contents', 649.41, '2023-06-27'),
  (7, 4, 'pet cover', 22.13, '2023-10-27'),
  (8, 5, 'motor comprehensive', 444.03, '2023-09-28');
CREATE TABLE claims (id INTEGER PRIMARY KEY, policy_id INTEGER REFERENCES policies (id), claimed_on TEXT, amount NUMERIC(10, 2), cause TEXT);
INSERT INTO claims VALUES
  (1, 4, '2023-04-20', 438.52, 'collision'),
  (2, 3, '2023-07-25', 95.47, 'collision'),
  (3, 6, '2023-03-14', 767.0, 'storm damage'),
  (4, 5, '2023-04-07', 833.33, 'collision'),
  (5, 5, '2023-09-27', 418.4, 'flood'),
  (6, 3, '2023-02-19', 87.66, 'theft'),
  (7, 2, '2023-03-22', 179.46, 'storm damage'),
  (8, 8, '2023-07-07', 784.92, 'storm damage');
CREATE TABLE adjusters (id INTEGER PRIMARY KEY, full_name TEXT);
INSERT INTO adjusters VALUES
  (1, 'Wanda Jensen'),
  (2, 'Viktor Osei'),
  (3, 'Ulla Kaur'),
  (4, 'Esme Ito'),
  (5, 'Ada Jensen'),
  (6, 'Viktor Eklund'),
  (7, 'Esme Jensen'),
  (8, 'Goran Baker');
