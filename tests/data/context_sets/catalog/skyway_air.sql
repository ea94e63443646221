CREATE TABLE airports (id INTEGER PRIMARY KEY, iata_code TEXT, city TEXT);
INSERT INTO airports VALUES
  (1, 'MLA', 'Jena'),
  (2, 'SPU', 'Aarhus'),
  (3, 'SPU', 'Faro'),
  (4, 'GRZ', 'Dresden'),
  (5, 'WRO', 'Bilbao'),
  (6, 'KUN', 'Eindhoven'),
  (7, 'MLA', 'Hamar'),
  (8, 'MLA', 'Eindhoven');
CREATE TABLE flights (id INTEGER PRIMARY KEY, flight_no TEXT, origin_id INTEGER REFERENCES airports (id), dest_id INTEGER REFERENCES airports (id), departs_on TEXT);
INSERT INTO flights VALUES
  (1, 'SK123', 7, 1, '2023-01-18'),
  (2, 'CA118', 7, 6, '2023-07-10'),
  (3, 'SK118', 5, 2, '2023-11-13'),
  (4, 'PJ106', 7, 6, '2023-12-11'),
  (5, 'PJ105', 1, 2, '2023-12-18'),
  (6, 'SK107', 2, 5, '2023-08-31'),
  (7, 'SK100', 3, 8, '2023-06-21'),
  (8, 'CA123', 4, 8, '2023-10-26');
CREATE TABLE passengers (id INTEGER PRIMARY KEY, full_name TEXT, frequent_flyer_tier TEXT);
INSERT INTO passengers VALUES
  (1, 'Ibrahim Castro', 'gold'),
  (2, 'Rafael Lindqvist', 'platinum'),
  (3, 'Celia Castro', 'gold'),
  (4, 'Selma Eklund', 'gold'),
  (5, 'Rafael Petrov', 'basic'),
  (6, 'Ulla Dunn', 'basic'),
  (7, 'Xavier Jensen', 'basic'),
  (8, 'Mateo Eklund', 'gold');
CREATE TABLE bookings (id INTEGER PRIMARY KEY, flight_id INTEGER REFERENCES flights (id), passenger_id INTEGER REFERENCES passengers (id), fare NUMERIC(10, 2), seat_class TEXT);
INSERT INTO bookings VALUES
  (1, 6, 2, 431.31, 'premium economy'),
  (2, 2, 5, 108.46, 'first'),
  (3, 7, 3, 62.82, 'premium economy'),
  (4, 3, 3, 643.9, 'business'),
  (5, 1, 5, 511.81, 'premium economy'),
  (6, 6, 6, 15.8, 'economy'),
  (7, 4, 5, 526.73, 'economy'),
  (8, 3, 8, 81.29, 'premium economy');
