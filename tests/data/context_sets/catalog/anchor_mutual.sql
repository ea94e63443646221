CREATE TABLE policyholders (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT);
INSERT INTO policyholders VALUES
  (1, 'Rafael Petrov', 'Split'),
  (2, 'Oskar Lindqvist', 'Oulu'),
  (3, 'Rafael Ferreira', 'Oulu'),
  (4, 'Rafael Abbott', 'Tartu'),
  (5, 'Bruno Castro', 'Oulu'),
  (6, 'Ibrahim Holm', 'Split'),
  (7, 'Zeno Grant', 'Rijeka'),
  (8, 'Leila Petrov', 'Porto');
CREATE TABLE policies (id INTEGER PRIMARY KEY, holder_id INTEGER REFERENCES policyholders (id), product TEXT, premium NUMERIC(10, 2), starts_on TEXT);
INSERT INTO policies VALUES
  (1, 4, 'life term', 648.37, '2023-02-27'),
  (2, 1, 'home contents', 319.58, '2023-05-08'),
  (3, 2, 'pet cover', 823.63, '2023-11-28'),
  (4, 2, 'life term', 428.12, '2023-04-03'),
  (5, 8, 'travel', 501.25, '2023-05-06'),
  (6, 8, 'pet cover', 683.68, '2023-10-10'),
  (7, 6, 'life term', 487.5, '2023-10-06'),
  (8, 8, 'life term', 582.64, '2023-06-17');
CREATE TABLE claims (id INTEGER PRIMARY KEY, policy_id INTEGER REFERENCES policies (id), claimed_on TEXT, amount NUMERIC(10, 2), cause TEXT);
INSERT INTO claims VALUES
  (1, 2, '2023-07-04', 58.15, 'burst pipe'),
  (2, 8, '2023-08-15', 714.59, 'theft'),
  (3, 5, '2023-05-07', 756.71, 'burst pipe'),
  (4, 4, '2023-12-25', 574.87, 'collision'),
  (5, 4, '2023-01-15', 831.07, 'flood'),
  (6, 2, '2023-03-16', 861.76, 'burst pipe'),
  (7, 5, '2023-05-18', 472.95, 'theft'),
  (8, 4, '2023-09-29', 568.02, 'burst pipe');
CREATE TABLE adjusters (id INTEGER PRIMARY KEY, full_name TEXT);
INSERT INTO adjusters VALUES
  (1, 'Selma Abbott'),
  (2, 'Helga Nakamura'),
  (3, 'Mateo Eklund'),
  (4, 'Fatima Ferreira'),
  (5, 'Celia Grant'),
  (6, 'Goran Moreau'),
  (7, 'Mateo Osei'),
  (8, 'Celia Petrov');
