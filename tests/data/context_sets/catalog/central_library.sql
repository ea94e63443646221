CREATE TABLE authors (id INTEGER PRIMARY KEY, full_name TEXT);
INSERT INTO authors VALUES
  (1, 'Leila Eklund'),
  (2, 'Juno Abbott'),
  (3, 'Fatima Holm'),
  (4, 'Wanda Grant'),
  (5, 'Helga Kaur'),
  (6, 'Tobias Nakamura'),
  (7, 'Bruno Dunn'),
  (8, 'Xavier Eklund');
CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT, author_id INTEGER REFERENCES authors (id), genre TEXT);
INSERT INTO books VALUES
  (1, 'The Glass Cartographer', 2, 'poetry'),
  (2, 'Ashes of the Tern', 4, 'biography'),
  (3, 'Ashes of the Tern', 6, 'biography'),
  (4, 'Salt and Cedar', 7, 'mystery'),
  (5, 'River of Quiet Bells', 2, 'science fiction'),
  (6, 'Salt and Cedar', 5, 'science fiction'),
  (7, 'Nine Lanterns', 7, 'romance'),
  (8, 'River of Quiet Bells', 1, 'history');
CREATE TABLE members (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT);
INSERT INTO members VALUES
  (1, 'Pia Grant', 'Dresden'),
  (2, 'Esme Holm', 'Dresden'),
  (3, 'Ibrahim Kaur', 'Hamar'),
  (4, 'Dmitri Osei', 'Graz'),
  (5, 'Ulla Moreau', 'Hamar'),
  (6, 'Fatima Eklund', 'Bilbao'),
  (7, 'Tobias Baker', 'Izmir'),
  (8, 'Celia Ito', 'Faro');
CREATE TABLE loans (id INTEGER PRIMARY KEY, book_id INTEGER REFERENCES books (id), member_id INTEGER REFERENCES members (id), due_date TEXT);
INSERT INTO loans VALUES
  (1, 8, 7, '2023-06-15'),
  (2, 3, 1, '2023-12-22'),
  (3, 3, 6, '2023-10-21'),
  (4, 5, 3, '2023-01-14'),
  (5, 6, 4, '2023-10-08'),
  (6, 4, 7, '2023-01-21'),
  (7, 8, 4, '2023-12-11'),
  (8, 4, 5, '2023-10-27');
