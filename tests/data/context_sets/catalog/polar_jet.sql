CREATE TABLE airports (id INTEGER PRIMARY KEY, iata_code TEXT, city TEXT);
INSERT INTO airports VALUES
  (1, 'KUN', 'Umea'),
  (2, 'TLL', 'Valletta'),
  (3, 'UME', 'Ypres'),
  (4, 'MLA', 'Salzburg'),
  (5, 'DRS', 'Lucerne'),
  (6, 'OPO', 'Wroclaw'),
  (7, 'MLA', 'Wroclaw'),
  (8, 'GRZ', 'Wroclaw');
CREATE TABLE flights (id INTEGER PRIMARY KEY, flight_no TEXT, origin_id INTEGER REFERENCES airports (id), dest_id INTEGER REFERENCES airports (id), departs_on TEXT);
INSERT INTO flights VALUES
  (1, 'CA111', 1, 8, '2023-07-21'),
  (2, 'CA115', 6, 7, '2023-01-27'),
  (3, 'CA129', 3, 1, '2023-01-23'),
  (4, 'SK109', 7, 7, '2023-12-15'),
  (5, 'CA113', 2, 6, '2023-05-23'),
  (6, 'CA122', 5, 4, '2023-08-23'),
  (7, 'CA104', 1, 4, '2023-07-09'),
  (8, 'CA108', 8, 1, '2023-01-03');
CREATE TABLE passengers (id INTEGER PRIMARY KEY, full_name TEXT, frequent_flyer_tier TEXT);
INSERT INTO passengers VALUES
  (1, 'Ada Holm', 'silver'),
  (2, 'Selma Kaur', 'basic'),
  (3, 'Helga Holm', 'gold'),
  (4, 'Wanda Petrov', 'basic'),
  (5, 'Ada Ferreira', 'silver'),
  (6, 'Juno Ito', 'silver'),
  (7, 'Kai Moreau', 'basic'),
  (8, 'Fatima Jensen', 'platinum');
CREATE TABLE bookings (id INTEGER PRIMARY KEY, flight_id INTEGER REFERENCES flights (id), passenger_id INTEGER REFERENCES passengers (id), fare NUMERIC(10, 2), seat_class TEXT);
INSERT INTO bookings VALUES
  (1, 3, 4, 13.33, 'economy'),
  (2, 6, 8, 419.52, 'first'),
  (3, 5, 3, 852.82, 'economy'),
  (4, 7, 4, 533.77, 'premium economy'),
  (5, 1, 7, 870.92, 'economy'),
  (6, 8, 7, 464.44, 'business'),
  (7, 3, 7, 501.82, 'first'),
  (8, 5, 7, 254.12, 'business');
