"""Sample rows as CSV: a few rows in key order, long values cut, on both backends."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from collections.abc import Callable

from conftest import BACKENDS, BackendDb, SampleDb, sqlite_config

from nl2sql.config.registry import DbConnectionConfig
from nl2sql.db.base import create_connection
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.inspection.samples import SampleSettings, collect_sample, format_value
from nl2sql.config.sample import ensure_bookstore

LONG = "x" * 200
SCRIPT = f"""
CREATE TABLE notes (
    note_id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    body TEXT,
    price NUMERIC(8, 2)
);
INSERT INTO notes VALUES (3, 'third', NULL, 3.50);
INSERT INTO notes VALUES (1, 'first, with comma', '{LONG}', 1.25);
INSERT INTO notes VALUES (2, 'second', 'line one
line two', NULL);
INSERT INTO notes VALUES (4, 'fourth', 'short', 4.00);
"""


@pytest.fixture(params=BACKENDS)
def notes_db(request: pytest.FixtureRequest, make_db: Callable[..., BackendDb]) -> DbConnectionConfig:
    return make_db(request.param, "notes", script=SCRIPT).config


def test_sample_rows_in_key_order_and_truncated(notes_db: DbConnectionConfig) -> None:
    connection = create_connection(notes_db)
    table = DbSchemaExtractor(connection).extract().table("notes")
    text = collect_sample(connection, table, SampleSettings(rows=3, max_chars=60))
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["note_id", "title", "body", "price"]
    assert [r[0] for r in rows[1:]] == ["1", "2", "3"]  # primary-key order, 3 rows
    assert rows[1][1] == "first, with comma"  # CSV quoting keeps the comma inside the value
    assert rows[1][2] == "x" * 57 + "..." and len(rows[1][2]) == 60
    assert rows[2][2] == "line one line two"  # one CSV line per row
    assert rows[3][2] == ""  # NULL
    assert len(text.strip().splitlines()) == 4
    connection.dispose()


def test_zero_rows_means_no_sample(notes_db: DbConnectionConfig) -> None:
    connection = create_connection(notes_db)
    table = DbSchemaExtractor(connection).extract().table("notes")
    assert collect_sample(connection, table, SampleSettings(rows=0)) is None
    connection.dispose()


def test_sample_on_chinook(chinook: SampleDb) -> None:
    connection = create_connection(chinook.config)
    info = DbSchemaExtractor(connection).extract()
    table = info.table(chinook.table("invoice_line"))
    text = collect_sample(connection, table)
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 4 and rows[0] == [c.name for c in table.columns]
    connection.dispose()


def test_sample_of_a_view(tmp_path: Path) -> None:
    connection = create_connection(
        sqlite_config("bookstore", ensure_bookstore(tmp_path / "bookstore.db")))
    view = DbSchemaExtractor(connection).extract().table("book_sales")
    assert view.is_view
    rows = list(csv.reader(io.StringIO(collect_sample(connection, view))))
    assert rows[0] == ["book_id", "title", "copies_sold", "revenue"] and len(rows) == 4
    connection.dispose()


@pytest.mark.parametrize("value, expected", [
    (None, ""), (b"\x00\x01\x02", "<3 bytes>"), (12.5, "12.5"), ("a\tb\r\nc", "a b c"),
    ("y" * 61, "y" * 57 + "..."), ("z" * 60, "z" * 60),
])
def test_format_value(value: object, expected: str) -> None:
    assert format_value(value, 60) == expected
