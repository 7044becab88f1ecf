-- The demo database of Caddyfile.example. The sqlite connector's `seed`
-- creates demo.db from this file on first start.
CREATE TABLE customers (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	email      TEXT NOT NULL UNIQUE,
	country    TEXT NOT NULL,
	created_at DATETIME NOT NULL
);
CREATE TABLE products (
	id       INTEGER PRIMARY KEY,
	name     TEXT NOT NULL,
	category TEXT NOT NULL,
	price    REAL NOT NULL,
	in_stock BOOLEAN NOT NULL
);
CREATE TABLE orders (
	id          INTEGER PRIMARY KEY,
	customer_id INTEGER NOT NULL REFERENCES customers(id),
	product_id  INTEGER NOT NULL REFERENCES products(id),
	quantity    INTEGER NOT NULL,
	ordered_at  DATETIME NOT NULL
);

INSERT INTO customers VALUES
	(1, 'Ada Lovelace',    'ada@example.com',    'GB', '2024-01-15T09:30:00Z'),
	(2, 'Grace Hopper',    'grace@example.com',  'US', '2024-02-01T14:00:00Z'),
	(3, 'Alan Turing',     'alan@example.com',   'GB', '2024-03-10T08:15:00Z'),
	(4, 'Katherine Johnson','katherine@example.com','US','2024-04-22T16:45:00Z'),
	(5, 'Edsger Dijkstra', 'edsger@example.com', 'NL', '2024-05-05T11:00:00Z');

INSERT INTO products VALUES
	(1, 'Mechanical keyboard', 'hardware', 129.00, 1),
	(2, 'Noise-cancelling headphones', 'hardware', 249.50, 1),
	(3, 'USB-C hub', 'hardware', 39.90, 0),
	(4, 'The Art of Computer Programming', 'books', 189.99, 1),
	(5, 'Structure and Interpretation of Computer Programs', 'books', 45.00, 1),
	(6, 'Standing desk', 'furniture', 599.00, 1),
	(7, 'Ergonomic chair', 'furniture', 449.00, 0);

INSERT INTO orders VALUES
	(1, 1, 4, 1, '2024-06-01T10:00:00Z'),
	(2, 1, 1, 1, '2024-06-03T12:30:00Z'),
	(3, 2, 2, 2, '2024-06-04T09:00:00Z'),
	(4, 3, 5, 3, '2024-06-10T17:20:00Z'),
	(5, 4, 6, 1, '2024-06-12T08:45:00Z'),
	(6, 5, 4, 1, '2024-06-15T13:10:00Z'),
	(7, 2, 3, 4, '2024-06-20T15:55:00Z');
