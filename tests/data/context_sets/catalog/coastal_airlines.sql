CREATE TABLE airports (id INTEGER PRIMARY KEY, iata_code TEXT, city TEXT);
INSERT INTO airports VALUES
  (1, 'WRO', 'Oulu'),
  (2, 'WRO', 'Leuven'),
  (3, 'OPO', 'Tartu'),
  (4, 'MLA', 'Split'),
  (5, 'AAR', 'Rijeka'),
  (6, 'LIS', 'Leuven'),
  (7, 'UME', 'Rijeka'),
  (8, 'SPU', 'Tartu');
CREATE TABLE flights (id INTEGER PRIMARY KEY, flight_no TEXT, origin_id INTEGER REFERENCES airports (id), dest_id INTEGER REFERENCES airports (id), departs_on TEXT);
INSERT INTO flights VALUES
  (1, 'CA129', 8, 6, '2023-07-24'),
  (2, 'SK107', 3, 4, '2023-02-16'),
  (3, 'CA103', 8, 7, '2023-02-16'),
  (4, 'SK109', 3, 2, '2023-10-11'),
  (5, 'CA129', 1, 4, '2023-02-28'),
  (6, 'PJ122', 6, 6, '2023-04-27'),
  (7, 'PJ116', 1, 7, '2023-03-28'),
  (8, 'SK120', 3, 5, '2023-02-01');
CREATE TABLE passengers (id INTEGER PRIMARY KEY, full_name TEXT, frequent_flyer_tier TEXT);
INSERT INTO passengers VALUES
  (1, 'Zeno Ito', 'gold'),
  (2, 'Nadia Ferreira', 'platinum'),
  (3, 'Celia Castro', 'silver'),
  (4, 'Juno Jensen', 'silver'),
  (5, 'Ulla Baker', 'basic'),
  (6, 'Wanda Kaur', 'platinum'),
  (7, 'Selma Petrov', 'platinum'),
  (8, 'Goran Baker', 'silver');
CREATE TABLE bookings (id INTEGER PRIMARY KEY, flight_id INTEGER REFERENCES flights (id), passenger_id INTEGER REFERENCES passengers (id), fare NUMERIC(10, 2), seat_class TEXT);
INSERT INTO bookings VALUES
  (1, 3, 2, 889.93, 'first'),
  (2, 5, 3, 285.92, 'premium economy'),
  (3, 2, 2, 598.79, 'economy'),
  (4, 6, 6, 16.86, 'economy'),
  (5, 2, 4, 118.6, 'first'),
  (6, 1, 4, 92.67, 'business'),
  (7, 8, 5, 663.84, 'economy'),
  (8, 4, 4, 816.5, 'premium economy');
