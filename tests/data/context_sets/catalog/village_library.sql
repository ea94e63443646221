CREATE TABLE authors (id INTEGER PRIMARY KEY, full_name TEXT);
INSERT INTO authors VALUES
  (1, 'Xavier Grant'),
  (2, 'Oskar Petrov'),
  (3, 'Bruno Petrov'),
  (4, 'Bruno Jensen'),
  (5, 'Oskar Holm'),
  (6, 'Pia Nakamura'),
  (7, 'Helga Moreau'),
  (8, 'Kai Kaur');
CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT, author_id INTEGER REFERENCES authors (id), genre TEXT);
INSERT INTO books VALUES
  (1, 'The Glass Cartographer', 7, 'romance'),
  (2, 'The Glass Cartographer', 4, 'history'),
  (3, 'The Silent Orchard', 8, 'history'),
  (4, 'River of Quiet Bells', 4, 'mystery'),
  (5, 'The Copper Meridian', 2, 'science fiction'),
  (6, 'The Last Lighthouse Keeper', 6, 'poetry'),
  (7, 'The Copper Meridian', 4, 'biography'),
  (8, 'The Last Lighthouse Keeper', 5, 'poetry');
CREATE TABLE members (id INTEGER PRIMARY KEY, full_name TEXT, city TEXT);
INSERT INTO members VALUES
  (1, 'Tobias Lindqvist', 'Ypres'),
  (2, 'Bruno Petrov', 'Ypres'),
  (3, 'Selma Grant', 'Salzburg'),
  (4, 'Zeno Lindqvist', 'Turku'),
  (5, 'Ulla Lindqvist', 'Salzburg'),
  (6, 'Viktor Grant', 'Turku'),
  (7, 'Mateo Ito', 'Lucerne'),
  (8, 'Pia Osei', 'Lucerne');
CREATE TABLE loans (id INTEGER PRIMARY KEY, book_id INTEGER REFERENCES books (id), member_id INTEGER REFERENCES members (id), due_date TEXT);
INSERT INTO loans VALUES
  (1, 6, 7, '2023-03-23'),
  (2, 8, 2, '2023-04-28'),
  (3, 3, 4, '2023-02-08'),
  (4, 8, 4, '2023-10-05'),
  (5, 3, 1, '2023-01-11'),
  (6, 7, 3, '2023-05-17'),
  (7, 1, 1, '2023-12-20'),
  (8, 5, 7, '2023-08-30');
