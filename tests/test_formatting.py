"""The annotated schema SQL: keys, foreign keys with actions, enums, indexes, quoting."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SampleDb, sqlite_config

from nl2sql.db.base import create_connection
from nl2sql.schema.formatting import format_schema, format_table, quote_identifier
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.schema.models import (ColumnInfo, DbInfo, ExampleQuery, ForeignKeyInfo, IndexInfo,
                           TableInfo)
from nl2sql.annotation.pipeline import AnnotateOptions, run_offline_steps
from nl2sql.config.sample import ensure_bookstore


def annotated(config) -> DbInfo:  # noqa: ANN001
    connection = create_connection(config)
    info = DbSchemaExtractor(connection).extract()
    for table in info.tables:
        run_offline_steps(connection, table, AnnotateOptions())
    connection.dispose()
    return info


def test_chinook_schema(chinook: SampleDb) -> None:
    text = format_schema(annotated(chinook.config))
    if chinook.backend == "postgres":
        expected = [
            "-- Database: chinook (postgres)",
            "-- Schema: public",
            "CREATE TABLE album (",
            "    album_id INTEGER PRIMARY KEY,",
            "    FOREIGN KEY (artist_id) REFERENCES artist (artist_id)",
            "    PRIMARY KEY (playlist_id, track_id),",
            "-- INDEX album_artist_id_idx ON album (artist_id) USING btree",
            "-- 3,503 rows",
        ]
    else:
        expected = [
            "-- Database: chinook (sqlite)",
            "CREATE TABLE Album (",
            "    AlbumId INTEGER PRIMARY KEY,",
            "    FOREIGN KEY (ArtistId) REFERENCES Artist (ArtistId)",
            "    PRIMARY KEY (PlaylistId, TrackId),",
            "-- INDEX IFK_AlbumArtistId ON Album (ArtistId) USING btree",
            "-- 3,503 rows",
        ]
    lines = text.splitlines()
    for line in expected:
        assert line in lines, line
    assert text.count("CREATE TABLE") == 11
    assert "-- Sample rows (3):" in lines
    assert text == format_schema(annotated(chinook.config))  # deterministic


def test_bookstore_schema(tmp_path: Path) -> None:
    info = annotated(sqlite_config("bookstore", ensure_bookstore(tmp_path / "bookstore.db")))
    info.table("books").column("genre").description = "Main genre of the book."
    info.table("books").description = "Books in the catalog.\nOne row per edition."
    text = format_schema(info)
    lines = text.splitlines()
    for line in [
        "-- Books in the catalog.",
        "-- One row per edition.",
        "-- 200 rows",
        "CREATE TABLE books (",
        "    isbn TEXT NOT NULL UNIQUE,",
        "    PRIMARY KEY (order_id, line_no),",
        "    FOREIGN KEY (order_id, line_no) REFERENCES order_items (order_id, line_no) "
        "ON DELETE CASCADE ON UPDATE CASCADE",
        "-- INDEX idx_books_genre_format ON books (genre, format) USING btree",
        "CREATE VIEW book_sales (",
        "    rating INTEGER,",
    ]:
        assert line in lines, line
    genre = next(line for line in lines if line.startswith("    genre "))
    assert genre.startswith("    genre TEXT NOT NULL,  -- Main genre of the book. [")
    assert set(genre.split("[")[1].rstrip("]").split(", ")) == {
        "fiction", "mystery", "science", "history", "fantasy", "biography", "children"}
    reason = next(line for line in lines if line.startswith("    reason "))
    assert "wrong item" in reason and "not as described" in reason
    countries = [line for line in lines if line.startswith("    country ")]
    assert len(countries) == 2 and not any("[" in line for line in countries)  # open-ended
    assert "sqlite_autoindex" not in text  # the UNIQUE on the column line says it
    assert "-- Sample rows" not in format_schema(info, include_samples=False)


def test_northwind_table_name_with_space(northwind: SampleDb) -> None:
    text = format_schema(annotated(northwind.config))
    if northwind.backend == "sqlite":
        assert 'CREATE TABLE "Order Details" (' in text
        assert "    PRIMARY KEY (OrderID, ProductID)," in text
    else:
        assert "CREATE TABLE order_details (" in text
        assert "    PRIMARY KEY (order_id, product_id)," in text


@pytest.mark.parametrize("name, db_type, expected", [
    ("album_id", "postgres", "album_id"), ("AlbumId", "postgres", '"AlbumId"'),
    ("AlbumId", "sqlite", "AlbumId"), ("Order Details", "sqlite", '"Order Details"'),
    ("order", "postgres", '"order"'), ("order", "sqlite", '"order"'),
    ('say "hi"', "postgres", '"say ""hi"""'),
])
def test_quote_identifier(name: str, db_type: str, expected: str) -> None:
    assert quote_identifier(name, db_type) == expected


def test_hand_built_table_on_postgres() -> None:
    table = TableInfo(
        name="OrderLines", description="Lines of an order.", row_count=1_500_000,
        row_count_is_estimate=True,
        columns=[
            ColumnInfo(name="OrderId", data_type="INTEGER", nullable=False, is_primary_key=True),
            ColumnInfo(name="line", data_type="INTEGER", nullable=False, is_primary_key=True),
            ColumnInfo(name="state", data_type="TEXT", is_enum=True,
                       enum_values=["open", "a, b", "closed"], description="State."),
        ],
        foreign_keys=[ForeignKeyInfo(name="fk", columns=["OrderId"], referenced_table="Orders",
                                     referenced_columns=["Id"], on_delete="SET NULL",
                                     on_update="CASCADE")],
        indexes=[IndexInfo(name="ix_state", columns=["state", "lower(state)"],
                           index_type="gin", is_unique=True),
                 IndexInfo(name="pk", columns=["OrderId", "line"], is_primary=True)])
    lines = format_table(table, "postgres").splitlines()
    assert lines == [
        "-- Lines of an order.",
        "-- about 1,500,000 rows",
        'CREATE TABLE "OrderLines" (',
        '    "OrderId" INTEGER NOT NULL,',
        "    line INTEGER NOT NULL,",
        "    state TEXT,  -- State. [open, 'a, b', closed]",
        '    PRIMARY KEY ("OrderId", line),',
        '    FOREIGN KEY ("OrderId") REFERENCES "Orders" ("Id") ON DELETE SET NULL '
        "ON UPDATE CASCADE",
        ");",
        '-- UNIQUE INDEX ix_state ON "OrderLines" (state, lower(state)) USING gin',
    ]


def test_only_some_columns_is_the_table_holding_only_them() -> None:
    """``format_table(only=...)`` (the context engine's narrow renderings) says what the table
    would with just those columns: their keys, foreign keys (declared and implied) and
    indexes, no sample rows, for any subset."""
    columns = [
        ColumnInfo(name="OrderId", data_type="INTEGER", nullable=False, is_primary_key=True),
        ColumnInfo(name="line", data_type="INTEGER", nullable=False, is_primary_key=True),
        ColumnInfo(name="code", data_type="TEXT", is_unique=True),
        ColumnInfo(name="state", data_type="TEXT", is_enum=True, enum_values=["open", "shut"]),
        ColumnInfo(name="customer_id", data_type="INTEGER"),
    ]
    implied = ForeignKeyInfo(columns=["customer_id"], referenced_table="customers",
                             referenced_columns=["id"], inferred=True, evidence="name, values")
    table = TableInfo(
        name="order_lines", row_count=10, sample_data_csv="OrderId,line\n1,1\n",
        columns=columns,
        foreign_keys=[ForeignKeyInfo(columns=["OrderId"], referenced_table="orders",
                                     referenced_columns=["id"]), implied],
        indexes=[IndexInfo(name="ix_state", columns=["state", "lower(state)"]),
                 IndexInfo(name="ix_code", columns=["code"], is_unique=True),
                 IndexInfo(name="ix_two", columns=["state", "customer_id"]),
                 IndexInfo(name="pk", columns=["OrderId", "line"], is_primary=True)])
    info = DbInfo(db_id="shop", db_type="postgres", tables=[table, TableInfo(
        name="orders", columns=[ColumnInfo(name="id", data_type="INTEGER")])])
    subsets = [{"OrderId"}, {"OrderId", "line"}, {"line", "state"}, {"state", "customer_id"},
               {"code"}, {c.name for c in columns}]
    for only in subsets:
        narrow = table.model_copy(update={
            "columns": [c for c in table.columns if c.name in only],
            "foreign_keys": [fk for fk in table.foreign_keys if set(fk.columns) <= only],
            "indexes": [i for i in table.indexes if set(i.columns) <= only],
            "sample_data_csv": None})
        narrow._db = info
        assert format_table(table, "postgres", only=only) == format_table(narrow, "postgres"), only
    assert "implied FOREIGN KEY (customer_id)" in format_table(table, "postgres",
                                                               only={"customer_id"})
    assert "Sample rows" not in format_table(table, "postgres", only={"OrderId"})


def test_an_empty_tables_header_alone_is_not_shown_as_sample_rows() -> None:
    """A table counted empty shows no "Sample rows (0)" line and no header line under it (two
    lines each for 900 of the 1,000 tables of the wide benchmark schema); one of unknown or
    estimated size keeps them, the only sign it was empty when sampled."""
    columns = [ColumnInfo(name="id", data_type="INTEGER")]
    empty = TableInfo(name="t", row_count=0, sample_data_csv="id\n", columns=columns)
    shown = format_table(empty, "sqlite")
    assert "-- 0 rows" in shown and "Sample rows" not in shown and "--   id" not in shown
    for unsure in (empty.model_copy(update={"row_count": None}),
                   empty.model_copy(update={"row_count_is_estimate": True})):
        assert "-- Sample rows (0):\n--   id" in format_table(unsure, "sqlite")
    filled = empty.model_copy(update={"row_count": 1, "sample_data_csv": "id\n7\n"})
    assert "-- Sample rows (1):\n--   id\n--   7" in format_table(filled, "sqlite")


def test_header_and_examples() -> None:
    info = DbInfo(db_id="shop", db_type="sqlite", description="An online shop.",
                  example_queries=[ExampleQuery(question="How many orders?",
                                                sql="SELECT COUNT(*)\nFROM orders")])
    assert format_schema(info).splitlines() == [
        "-- Database: shop (sqlite)", "-- An online shop.", "",
        "-- Example queries:", "-- Q: How many orders?", "--   SELECT COUNT(*)",
        "--   FROM orders"]
