"""Enum screening on real databases: the bundled bookstore, small tables on both backends, and
big tables where only statistics or samples may be read (no full COUNT(DISTINCT) scan)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import BACKENDS, BackendDb, pg_config, pg_execute, sqlite_config
from sqlalchemy import event

from nl2sql.config.registry import DbConnectionConfig
from nl2sql.db.base import DbConnection
from nl2sql.db.base import create_connection
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.inspection.enums import (ColumnStats, EnumScreeningSettings, apply_stats,
                                     is_screenable, screen_table)
from nl2sql.schema.models import ColumnInfo, DbInfo, EnumValueCount, TableInfo
from nl2sql.config.sample import ensure_bookstore


@contextmanager
def captured_statements(connection: DbConnection, *, with_params: bool = False) -> Iterator[list]:
    """The SQL the engine sends while the block runs; ``(statement, params)`` with_params."""
    statements: list = []

    def record(_conn, _cursor, statement, params, _context, _many) -> None:  # noqa: ANN001
        statements.append((statement, tuple(params or ())) if with_params else statement)

    event.listen(connection.engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(connection.engine, "before_cursor_execute", record)


def screened(config: DbConnectionConfig,
             settings: EnumScreeningSettings | None = None) -> tuple[DbInfo, DbConnection]:
    connection = create_connection(config)
    info = DbSchemaExtractor(connection).extract()
    for table in info.tables:
        screen_table(connection, table, settings)
    return info, connection


# -- type and key rules --------------------------------------------------------------------

@pytest.mark.parametrize("data_type, expected", [
    ("TEXT", True), ("VARCHAR(20)", True), ("CHARACTER VARYING(40)", True), ("NVARCHAR(40)", True),
    ("CHAR(1)", True), ("", True), ("mood", True),  # untyped SQLite column, Postgres enum type
    ("INTEGER", False), ("NUMERIC(8, 2)", False), ("REAL", False), ("DOUBLE PRECISION", False),
    ("DATE", False), ("TIMESTAMP WITHOUT TIME ZONE", False), ("BOOLEAN", False),
    ("BYTEA", False), ("BLOB", False), ("JSONB", False), ("UUID", False), ("TEXT[]", False),
    ("MAP(VARCHAR, VARCHAR)", False), ("STRUCT(city VARCHAR)", False),  # nested (DuckDB)
    ("MAP<STRING,STRING>", False), ("roadmap_status", True),  # Spark; a user enum type
])
def test_screened_types(data_type: str, expected: bool) -> None:
    column = ColumnInfo(name="c", data_type=data_type)
    assert is_screenable(column, TableInfo(name="t", columns=[column])) is expected


@pytest.mark.parametrize("rows, expected", [(None, False), (5000, False), (1000, True), (9, True)])
def test_a_column_naming_its_rows_is_screened_in_a_lookup_table_only(rows: int | None,
                                                                     expected: bool) -> None:
    """A unique name or a text primary key alone is read only in a small table (its names go
    to the value index: 'Sales' of departments.dept_name); never an enum."""
    key = ColumnInfo(name="code", data_type="TEXT", is_primary_key=True)
    name = ColumnInfo(name="name", data_type="TEXT", is_unique=True)
    table = TableInfo(name="t", columns=[key, name], row_count=rows)
    assert is_screenable(key, table) is expected
    assert is_screenable(name, table) is expected


def test_a_column_of_a_composite_primary_key_is_screened() -> None:
    """``titles(emp_no, title, from_date)``: ``title`` holds seven labels, not one per row."""
    columns = [ColumnInfo(name="emp_no", data_type="INTEGER", is_primary_key=True),
               ColumnInfo(name="title", data_type="VARCHAR(50)", is_primary_key=True)]
    assert is_screenable(columns[1], TableInfo(name="titles", columns=columns,
                                               row_count=300_000))


def test_ratio_counts_non_null_rows_only() -> None:
    # 990 NULLs and 10 values seen once each: a low ratio over all rows, but not an enum.
    column = ColumnInfo(name="c", data_type="TEXT")
    stats = ColumnStats(values=[EnumValueCount(value=None, count=990)]
                        + [EnumValueCount(value=f"v{i}", count=1) for i in range(10)],
                        distinct_count=10, non_null_rows=10, max_length=2)
    assert apply_stats(column, stats, EnumScreeningSettings()) is False
    assert column.is_enum is False and column.enum_candidates is None


def test_llm_decision_is_kept() -> None:
    column = ColumnInfo(name="c", data_type="TEXT", is_enum=False, enum_decision="llm")
    stats = ColumnStats(values=[EnumValueCount(value="a", count=50),
                                EnumValueCount(value="b", count=50)],
                        distinct_count=2, non_null_rows=100, max_length=1)
    assert apply_stats(column, stats, EnumScreeningSettings()) is True
    assert column.is_enum is False and column.enum_decision == "llm"
    assert [v.value for v in column.enum_candidates or []] == ["a", "b"]


# -- bookstore -------------------------------------------------------------------------------

ENUMS = {
    ("books", "genre"): {"fiction", "mystery", "science", "history", "fantasy", "biography",
                         "children"},
    ("books", "format"): {"hardcover", "paperback", "ebook", "audiobook"},
    ("orders", "status"): {"pending", "paid", "shipped", "delivered", "cancelled"},
    ("orders", "channel"): {"web", "store", "phone"},
    ("returns", "reason"): {"damaged", "wrong item", "not as described", "changed mind"},
}


def test_bookstore_enums(tmp_path: Path) -> None:
    path = ensure_bookstore(tmp_path / "bookstore.db")
    info, connection = screened(sqlite_config("bookstore", path))
    found = {(t.name, c.name): set(c.enum_values) for t in info.tables for c in t.columns
             if c.is_enum}
    assert found == ENUMS
    # Each of them is listed by a CHECK constraint: the schema decides, nothing is screened.
    for table_name, column_name in ENUMS:
        column = info.table(table_name).column(column_name)
        assert (column.enum_decision, column.enum_candidates) == ("schema", None)
    # Screened: the authors' countries, a candidate with every row counted.
    authors_country = info.table("authors").column("country")
    assert sum(v.count for v in authors_country.enum_candidates or []) == \
        info.table("authors").row_count
    # Too many values for their rows: stays open text.
    assert info.table("customers").column("country").enum_candidates is None
    assert info.table("customers").column("country").distinct_count == 24
    assert not authors_country.is_enum and authors_country.distinct_count == 20
    # Numeric columns are not looked at; unique ones of these small tables are read for their
    # values (the value index), one per row: never an enum, too many for a domain.
    for table_name, column_name in [("books", "rating"), ("books", "book_id")]:
        assert info.table(table_name).column(column_name).distinct_count is None
    for table_name, column_name in [("books", "isbn"), ("customers", "email")]:
        table = info.table(table_name)
        column = table.column(column_name)
        assert column.distinct_count == table.row_count > 30
        assert (column.is_enum, column.enum_candidates, column.domain_values) == (False, None, None)
    connection.dispose()


# -- small tables on both backends ----------------------------------------------------------

SMALL_SCRIPT = """
CREATE TABLE tickets (
    ticket_id INTEGER PRIMARY KEY,
    priority VARCHAR(10) NOT NULL,
    team VARCHAR(40),
    subject TEXT NOT NULL,
    body TEXT,
    score INTEGER
);
"""


def small_rows() -> str:
    priorities = ["low", "normal", "high", "urgent"]
    teams = [f"team {i}" for i in range(15)]
    rows = []
    for i in range(1, 201):
        team = "NULL" if i % 4 == 0 else f"'{teams[i % 15]}'"
        body = "'" + ("long text " * 10) + str(i) + "'"
        rows.append(f"({i}, '{priorities[i % 4]}', {team}, 'subject {i % 120}', {body}, {i % 5})")
    return "INSERT INTO tickets VALUES " + ", ".join(rows) + ";"


@pytest.fixture(params=BACKENDS)
def small_db(request: pytest.FixtureRequest, make_db: Callable[..., BackendDb]) -> DbConnectionConfig:
    return make_db(request.param, "small", script=SMALL_SCRIPT + small_rows()).config


def test_small_table_screening(small_db: DbConnectionConfig) -> None:
    info, connection = screened(small_db)
    tickets = info.table("tickets")
    priority = tickets.column("priority")
    assert priority.is_enum and priority.enum_decision == "statistics"
    assert set(priority.enum_values) == {"low", "normal", "high", "urgent"}
    assert [v.count for v in priority.enum_candidates] == [50, 50, 50, 50]
    # 15 teams over 150 non-null rows: a candidate, but not clear-cut (more than 10 values).
    team = tickets.column("team")
    assert team.distinct_count == 15 and not team.is_enum
    assert {v.value for v in team.enum_candidates} >= {None, "team 0"}
    assert next(v.count for v in team.enum_candidates if v.value is None) == 50
    assert tickets.column("subject").enum_candidates is None  # 120 values
    assert tickets.column("body").enum_candidates is None  # values longer than 64 chars
    assert tickets.column("score").distinct_count is None  # numeric: skipped
    connection.dispose()


def test_enum_max_values_setting(small_db: DbConnectionConfig) -> None:
    info, connection = screened(small_db, EnumScreeningSettings(max_values=3))
    assert info.table("tickets").column("priority").enum_candidates is None
    assert not info.table("tickets").column("priority").is_enum
    connection.dispose()


def test_one_statement_per_table(small_db: DbConnectionConfig) -> None:
    connection = create_connection(small_db)
    info = DbSchemaExtractor(connection).extract()
    with captured_statements(connection) as statements:
        screen_table(connection, info.table("tickets"))
    # besides the catalogue's version (may a user function be reached by reading it?)
    assert len([s for s in statements if "tickets" in s]) == 1
    connection.dispose()


# -- big tables: statistics and samples, never a full distinct scan -------------------------

BIG_ROWS = 300_000


@pytest.mark.postgres
@pytest.mark.slow
def test_postgres_big_table_uses_sample_then_pg_stats(
        pg_database: Callable[..., str]) -> None:
    dbname = pg_database(script=f"""
        CREATE TABLE big_events (id bigint PRIMARY KEY, kind text NOT NULL, label text)
            WITH (autovacuum_enabled = false);
        INSERT INTO big_events
            SELECT i, (ARRAY['click','view','buy','share','like'])[1 + i % 5], 'label ' || i
            FROM generate_series(1, {BIG_ROWS}) AS i;
    """)
    connection = create_connection(pg_config("big", dbname))
    info = DbSchemaExtractor(connection).extract()
    table = info.table("big_events")
    table.row_count, table.row_count_is_estimate = BIG_ROWS, True

    # Never analyzed: no pg_stats rows, so a TABLESAMPLE of about 50,000 rows is read.
    with captured_statements(connection) as statements:
        screen_table(connection, table)
    assert not any("count(distinct" in s.lower() for s in statements)
    scans = [s for s in statements if "big_events" in s]
    assert scans and all("TABLESAMPLE" in s for s in scans)
    kind = table.column("kind")
    assert kind.is_enum and set(kind.enum_values) == {"click", "view", "buy", "share", "like"}
    assert sum(v.count for v in kind.enum_candidates) < BIG_ROWS  # a sample, not the table
    assert table.column("label").enum_candidates is None

    # Analyzed: pg_stats answers for both columns and the table itself is not read at all.
    pg_execute(dbname, "ANALYZE big_events")
    with captured_statements(connection) as statements:
        screen_table(connection, table)
    statements = [s for s in statements if "xmin" not in s]  # not the catalogue's version
    assert len(statements) == 1 and "pg_stats" in statements[0]
    assert "big_events" not in statements[0]  # the name is a parameter, not a scan
    assert kind.is_enum and set(kind.enum_values) == {"click", "view", "buy", "share", "like"}
    assert table.column("label").enum_candidates is None
    assert table.column("label").distinct_count > 1000
    connection.dispose()


@pytest.mark.slow
@pytest.mark.parametrize("without_rowid", [False, True])
def test_sqlite_big_table_is_sampled(tmp_path: Path, without_rowid: bool) -> None:
    path = tmp_path / "big.db"
    suffix = " WITHOUT ROWID" if without_rowid else ""
    with sqlite3.connect(path) as conn:
        conn.executescript(f"""
            CREATE TABLE big_events (id INTEGER PRIMARY KEY, kind TEXT NOT NULL,
                                     label TEXT){suffix};
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 150000)
            INSERT INTO big_events
            SELECT i, CASE i % 3 WHEN 0 THEN 'red' WHEN 1 THEN 'green' ELSE 'blue' END,
                   'label ' || i FROM n;
        """)
    conn.close()
    connection = create_connection(sqlite_config("big", path))
    info = DbSchemaExtractor(connection).extract()
    table = info.table("big_events")
    assert table.row_count == 150_000
    settings = EnumScreeningSettings(sample_size=20_000)
    with captured_statements(connection) as statements:
        screen_table(connection, table, settings)
    assert not any("count(distinct" in s.lower() for s in statements)
    grouped = [s for s in statements if "GROUP BY" in s]
    assert len(grouped) == 1 and "LIMIT" in grouped[0]
    if not without_rowid:
        assert grouped[0].count("rowid >=") == settings.sqlite_sample_windows
    kind = table.column("kind")
    assert kind.is_enum and set(kind.enum_values) == {"red", "green", "blue"}
    assert sum(v.count for v in kind.enum_candidates) == 20_000
    assert table.column("label").enum_candidates is None
    connection.dispose()


def test_sqlite_annotation_reads_of_a_big_table_are_index_lookups(tmp_path: Path) -> None:
    """Nothing the offline annotation steps (sample rows, enum screening, the value index's
    values) run on a big SQLite table may grow with its row count: the query plan of every
    statement that reads it is an index lookup (SEARCH), or a scan stopped by a LIMIT (the
    sample rows). Grouping then runs over the bounded sample, not the table."""
    from nl2sql.annotation.pipeline import AnnotateOptions, run_offline_steps

    path = tmp_path / "big.db"
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT, label TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
            INSERT INTO events SELECT i, 'kind ' || (i % 5), 'label ' || i FROM n;
        """)
    conn.close()
    connection = create_connection(sqlite_config("big", path))
    try:
        table = DbSchemaExtractor(connection).extract().table("events")
        table.row_count, table.row_count_is_estimate = 3_000_000, True  # the plan is the same
        with captured_statements(connection, with_params=True) as calls:
            run_offline_steps(connection, table, AnnotateOptions())
    finally:
        connection.dispose()
    reads = [(s, p) for s, p in calls if "events" in s]
    bounds = [s for s, _ in reads if "min(rowid)" in s.lower()]
    assert len(bounds) == 1 and bounds[0].lower().count("(select") >= 2  # one subquery each
    with sqlite3.connect(path) as conn:
        for statement, params in reads:
            plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}", params)]
            scans = [line for line in plan if line.startswith("SCAN events")]
            bounded = "LIMIT" in statement and "GROUP BY" not in statement
            assert not scans or bounded, (statement, plan)
    conn.close()
