CREATE TABLE authors (id INTEGER PRIMARY KEY, full_name TEXT);
INSERT INTO authors VALUES
  (1, 'Fatima Grant'),
  (2, 'Xavier Kaur'),
  (3, 'Selma Ferreira'),
  (4, 'Fatima Moreau'),
  (5, 'Helga Moreau'),
  (6, 'Zeno Castro'),
  (7, 'Yara Ito'),
  (8, 'Dmitri Petrov');
CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT, author_id INTEGER REFERENCES authors (id), genre TEXT);
INSERT INTO books VALUES
  (1, 'Under the Tamarind', 5, 'history'),
  (2, 'River of Quiet Bells', 7, 'poetry'),
  (3, 'The Glass Cartographer', 8, 'poetry'),
  (4, 'The Last Lighthouse Keeper', 2, 'mystery'),
  (5, 'The Last Lighthouse Keeper', 6, 'history'),
  (6, 'The Last Lighthouse Keeper', 8, 'poetry'),
  (7, 'The Copper Meridian', 2, 'mystery'),
  (8, 'Nine Lanterns', 1, 'history');
CREATE TABLE members (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT);
INSERT INTO members VALUES
  (1, 'Xavier Castro', 'Malmo'),
  (2, 'Pia Ferreira', 'Quimper'),
  (3, 'Juno Baker', 'Rijeka'),
  (4, 'Yara Ito', 'Split'),
  (5, 'Celia Ito', 'Split'),
  (6, 'Zeno Jensen', 'Nantes'),
  (7, 'Bruno Dunn', 'Oulu'),
  (8, 'Juno Dunn', 'Nantes');
CREATE TABLE loans (id INTEGER PRIMARY KEY, book_id INTEGER REFERENCES books (id), member_id INTEGER REFERENCES members (id), due_date TEXT);
INSERT INTO loans VALUES
  (1, 8, 2, '2023-02-26'),
  (2, 5, 4, '2023-09-09'),
  (3, 8, 3, '2023-05-15'),
  (4, 6, 7, '2023-08-11'),
  (5, 4, 1, '2023-06-15'),
  (6, 2, 7, '2023-05-05'),
  (7, 5, 3, '2023-03-25'),
  (8, 4, 3, '2023-08-24');
