"""Schema inspection and extraction against real SQLite files and a real Postgres server.

Expected counts come from independent catalog queries (sqlite_master / PRAGMA functions,
information_schema / pg_catalog), not from SQLAlchemy.
"""

from __future__ import annotations

import shutil
import sqlite3
import warnings
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from conftest import (BACKENDS, PG_HOST, PG_PORT, PG_USER, BackendDb, SampleDb, mysql_admin,
                      pg_config, pg_execute, sqlite_config, write_dbs_yaml)

from nl2sql.annotation.pipeline import annotate_database
from nl2sql.schema.cache import load_db_info, save_db_info
from nl2sql.config.registry import DbConnectionConfig, DbConnectionConfigs
from nl2sql.db.base import create_connection
from nl2sql.db.lookup import resolve_table
from nl2sql.errors import ConfigError, DatabaseConnectionError, UnknownTableError
from nl2sql.inspection import DbSchemaExtractor, DbSchemaInspector, create_inspector
from nl2sql.inspection.postgres import PostgresSchemaInspector
from nl2sql.inspection.sqlite import SqliteSchemaInspector
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.schema.models import DbInfo


def extract(config: DbConnectionConfig, **inspector_attrs: object) -> DbInfo:
    with create_connection(config) as connection:
        inspector = create_inspector(connection)
        for name, value in inspector_attrs.items():
            setattr(inspector, name, value)
        return DbSchemaExtractor(connection, inspector).extract()


# -- independent catalog queries ------------------------------------------------------------

def sqlite_catalog(path: Path) -> dict[str, object]:
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        views = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'")]
        fks = sum(conn.execute("SELECT count(DISTINCT id) FROM pragma_foreign_key_list(?)",
                               (t,)).fetchone()[0] for t in tables)
        indexes = sum(conn.execute("SELECT count(*) FROM pragma_index_list(?)",
                                   (t,)).fetchone()[0] for t in tables)
        pks = {t: [r[0] for r in conn.execute(
            "SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", (t,))]
            for t in tables}
    conn.close()
    return {"tables": sorted(tables), "views": sorted(views), "fks": fks, "indexes": indexes,
            "pks": pks}


def pg_catalog(dbname: str, schema: str = "public") -> dict[str, object]:
    dsn = f"host={PG_HOST} port={PG_PORT} user={PG_USER} dbname={dbname}"
    with psycopg.connect(dsn) as conn:
        def names(kind: str) -> list[str]:
            return sorted(r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = %s AND table_type = %s", (schema, kind)))

        tables, views = names("BASE TABLE"), names("VIEW")
        fks = conn.execute("SELECT count(*) FROM information_schema.table_constraints "
                           "WHERE table_schema = %s AND constraint_type = 'FOREIGN KEY'",
                           (schema,)).fetchone()[0]
        indexes = conn.execute(
            "SELECT count(*) FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
            "JOIN pg_namespace n ON n.oid = t.relnamespace "
            "WHERE n.nspname = %s AND t.relkind IN ('r', 'p')", (schema,)).fetchone()[0]
        pks: dict[str, list[str]] = {t: [] for t in tables}
        for table, column in conn.execute(
                "SELECT t.relname, a.attname FROM pg_index i "
                "JOIN pg_class t ON t.oid = i.indrelid "
                "JOIN pg_namespace n ON n.oid = t.relnamespace "
                "JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, pos) ON true "
                "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum "
                "WHERE n.nspname = %s AND i.indisprimary ORDER BY t.relname, k.pos",
                (schema,)):
            pks[table].append(column)
    return {"tables": tables, "views": views, "fks": fks, "indexes": indexes, "pks": pks}


def mysql_catalog(dbname: str) -> dict[str, object]:
    conn = mysql_admin(dbname)
    with conn.cursor() as cursor:
        def rows(sql: str) -> list[tuple]:
            cursor.execute(sql, (dbname,))
            return list(cursor.fetchall())

        tables = sorted(r[0] for r in rows("SELECT TABLE_NAME FROM information_schema.TABLES "
                                           "WHERE TABLE_SCHEMA = %s AND TABLE_TYPE = 'BASE TABLE'"))
        views = sorted(r[0] for r in rows("SELECT TABLE_NAME FROM information_schema.TABLES "
                                          "WHERE TABLE_SCHEMA = %s AND TABLE_TYPE = 'VIEW'"))
        fks = rows("SELECT count(*) FROM information_schema.TABLE_CONSTRAINTS WHERE "
                   "TABLE_SCHEMA = %s AND CONSTRAINT_TYPE = 'FOREIGN KEY'")[0][0]
        indexes = rows("SELECT count(DISTINCT TABLE_NAME, INDEX_NAME) FROM "
                       "information_schema.STATISTICS WHERE TABLE_SCHEMA = %s")[0][0]
        pks = {t: [] for t in tables}
        for table, column in rows("SELECT TABLE_NAME, COLUMN_NAME FROM information_schema."
                                  "KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = %s AND CONSTRAINT_NAME "
                                  "= 'PRIMARY' ORDER BY TABLE_NAME, ORDINAL_POSITION"):
            pks[table].append(column)
    conn.close()
    return {"tables": tables, "views": views, "fks": fks, "indexes": indexes, "pks": pks}


def duckdb_catalog(path: Path) -> dict[str, object]:
    import duckdb

    copy = path.with_name("catalog_copy.duckdb")  # nl2sql may hold the file read-only
    shutil.copyfile(path, copy)
    with duckdb.connect(str(copy), read_only=True) as conn:
        def rows(sql: str) -> list[tuple]:
            return conn.execute(sql).fetchall()

        tables = sorted(r[0] for r in rows("SELECT table_name FROM duckdb_tables()"))
        views = sorted(r[0] for r in rows("SELECT view_name FROM duckdb_views() "
                                          "WHERE NOT internal"))
        fks = rows("SELECT count(*) FROM duckdb_constraints() "
                   "WHERE constraint_type = 'FOREIGN KEY'")[0][0]
        # explicit indexes plus the ART indexes behind PRIMARY KEY and UNIQUE
        indexes = rows("SELECT count(*) FROM duckdb_indexes()")[0][0] + rows(
            "SELECT count(*) FROM duckdb_constraints() "
            "WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE')")[0][0]
        pks = {t: [] for t in tables}
        for table, names in rows("SELECT table_name, constraint_column_names FROM "
                                 "duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'"):
            pks[table] = list(names)
    copy.unlink()
    return {"tables": tables, "views": views, "fks": fks, "indexes": indexes, "pks": pks}


def catalog(sample: SampleDb) -> dict[str, object]:
    """What the backend's own catalog says, read without nl2sql."""
    if sample.backend == "sqlite":
        assert sample.config.path is not None
        return sqlite_catalog(sample.config.path)
    if sample.backend == "mysql":
        return mysql_catalog(sample.config.dbname)
    if sample.backend == "duckdb":
        return duckdb_catalog(sample.config.path)
    assert sample.pg_dbname is not None
    return pg_catalog(sample.pg_dbname)


def assert_matches_catalog(info: DbInfo, expected: dict[str, object]) -> None:
    assert sorted(t.name for t in info.tables if not t.is_view) == expected["tables"]
    assert sorted(t.name for t in info.tables if t.is_view) == expected["views"]
    assert info.foreign_key_count == expected["fks"]
    assert sum(len(t.indexes) for t in info.tables) == expected["indexes"]
    assert {t.name: t.primary_key for t in info.tables if not t.is_view} == expected["pks"]
    assert [t.name for t in info.tables] == sorted(t.name for t in info.tables)


# -- a scratch database per backend, from a DDL script ----------------------------------------

@pytest.fixture(params=["sqlite", "postgres"])  # the DDL scripts below are written for these
def scratch(request: pytest.FixtureRequest,
            make_db: Callable[..., BackendDb]) -> Callable[[str], DbConnectionConfig]:
    """Factory: a fresh database on the parametrized backend built from a DDL script."""
    return lambda script: make_db(request.param, "scratch", script=script).config


# -- sample databases -------------------------------------------------------------------------

@pytest.mark.parametrize("chinook", BACKENDS, indirect=True)
def test_chinook_matches_catalog(chinook: SampleDb) -> None:
    info = extract(chinook.config)
    assert_matches_catalog(info, catalog(chinook))
    assert len(info.tables) == 11 and info.foreign_key_count == 11
    playlist_track = info.table(chinook.table("playlist_track"))
    assert playlist_track is not None
    expected_pk = (["PlaylistId", "TrackId"] if chinook.naming == "sqlite"
                   else ["playlist_id", "track_id"])
    assert playlist_track.primary_key == expected_pk
    assert [i.columns for i in playlist_track.indexes if i.is_primary] == [expected_pk]
    track = info.table(chinook.table("track"))
    assert track is not None
    assert (track.row_count, track.row_count_is_estimate) == (3503, False)
    unit_price = {"mysql": "DECIMAL(10, 2)", "duckdb": "DECIMAL(10,2)"}
    assert track.column("unit_price" if chinook.naming == "postgres" else "UnitPrice"
                        ).data_type == unit_price.get(chinook.backend, "NUMERIC(10, 2)")
    assert info.db_type == chinook.backend


@pytest.mark.parametrize("northwind", BACKENDS, indirect=True)
def test_northwind_matches_catalog(northwind: SampleDb) -> None:
    info = extract(northwind.config)
    assert_matches_catalog(info, catalog(northwind))
    details = info.table(northwind.table("order_details"))
    assert details is not None and details.row_count == 2155
    expected_pk = (["OrderID", "ProductID"] if northwind.naming == "sqlite"
                   else ["order_id", "product_id"])
    assert details.primary_key == expected_pk
    if northwind.naming == "sqlite":
        assert details.name == "Order Details"
    if northwind.backend == "sqlite":  # (loaded copies keep the views sqlglot translates)
        assert sum(t.is_view for t in info.tables) == 16
        view = info.table("Alphabetical list of products")
        assert view is not None and view.is_view and view.row_count is None
        assert view.column("ProductName") is not None


def test_cache_round_trip_rebuilds_parents(chinook: SampleDb, tmp_path: Path) -> None:
    info = extract(chinook.config)
    save_db_info(info, tmp_path)
    loaded = load_db_info(tmp_path, info.db_id)
    assert loaded.model_dump() == info.model_dump()
    for table in loaded.tables:
        assert table.db is loaded
        assert all(column.table is table for column in table.columns)


def test_bundled_bookstore_composite_foreign_key(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = DbConnectionConfigs.load(None, data_dir=tmp_path / "data").get("bookstore")
    info = extract(config)
    returns = info.table("returns")
    assert returns is not None
    [fk] = [fk for fk in returns.foreign_keys if fk.referenced_table == "order_items"]
    assert (fk.columns, fk.referenced_columns) == (["order_id", "line_no"],
                                                   ["order_id", "line_no"])
    assert (fk.on_delete, fk.on_update) == ("CASCADE", "CASCADE")
    # Inline REFERENCES clauses keep their actions too (SQLAlchemy alone drops them).
    orders, books = info.table("orders"), info.table("books")
    assert orders is not None and books is not None
    assert [fk.on_delete for fk in orders.foreign_keys] == ["CASCADE"]
    assert [fk.on_delete for fk in books.foreign_keys] == ["RESTRICT"]
    order_items = info.table("order_items")
    assert order_items is not None and order_items.primary_key == ["order_id", "line_no"]
    book_sales = info.table("book_sales")
    assert book_sales is not None and book_sales.is_view
    assert_matches_catalog(info, sqlite_catalog(config.path))


# -- structure details on both backends ---------------------------------------------------

FK_SCRIPT = """
CREATE TABLE parent (id INTEGER PRIMARY KEY, code VARCHAR(20) NOT NULL UNIQUE);
CREATE TABLE child (
    id INTEGER PRIMARY KEY,
    parent_id INTEGER REFERENCES parent (id) ON DELETE CASCADE ON UPDATE SET NULL,
    other_id INTEGER REFERENCES parent (id),
    label VARCHAR(160) DEFAULT 'none',
    price NUMERIC(10, 2),
    email TEXT
);
CREATE UNIQUE INDEX child_email_key ON child (email);
CREATE INDEX child_lower_email ON child (lower(email));
CREATE UNIQUE INDEX child_partial ON child (label) WHERE price > 0;
CREATE VIEW child_view AS SELECT id, label FROM child;
INSERT INTO parent VALUES (1, 'a'), (2, 'b');
"""


def test_foreign_key_actions_round_trip(scratch: Callable[[str], DbConnectionConfig]) -> None:
    info = extract(scratch(FK_SCRIPT))
    child = info.table("child")
    assert child is not None
    by_column = {fk.columns[0]: fk for fk in child.foreign_keys}
    assert (by_column["parent_id"].on_delete, by_column["parent_id"].on_update) == (
        "CASCADE", "SET NULL")
    # Nothing declared is NO ACTION, reported as None.
    assert (by_column["other_id"].on_delete, by_column["other_id"].on_update) == (None, None)
    assert by_column["parent_id"].referenced_table == "parent"
    assert by_column["parent_id"].referenced_schema is None


def test_columns_indexes_and_views(scratch: Callable[[str], DbConnectionConfig]) -> None:
    info = extract(scratch(FK_SCRIPT))
    parent, child, view = info.table("parent"), info.table("child"), info.table("child_view")
    assert parent is not None and child is not None and view is not None
    assert parent.column("code").is_unique and not parent.column("id").is_unique
    assert parent.column("id").is_primary_key and not parent.column("code").nullable
    assert child.column("email").is_unique
    assert not child.column("label").is_unique  # only a partial unique index
    assert child.column("label").data_type == "VARCHAR(160)"
    assert child.column("price").data_type == "NUMERIC(10, 2)"
    assert "none" in (child.column("label").default or "")
    indexes = {i.name: i for i in child.indexes}
    assert [c.lower() for c in indexes["child_lower_email"].columns] == ["lower(email)"]
    assert indexes["child_email_key"].is_unique and not indexes["child_email_key"].is_primary
    assert all(i.index_type == "btree" for i in child.indexes)
    assert view.is_view and not parent.is_view and view.row_count is None
    assert [c.name for c in view.columns] == ["id", "label"]
    assert (parent.row_count, parent.row_count_is_estimate) == (2, False)
    assert (child.row_count, child.row_count_is_estimate) == (0, False)


def test_inspector_per_backend(scratch: Callable[[str], DbConnectionConfig]) -> None:
    config = scratch("CREATE TABLE t (id INTEGER PRIMARY KEY);")
    with create_connection(config) as connection:
        inspector = create_inspector(connection)
        assert isinstance(inspector, DbSchemaInspector)
        expected = {"sqlite": SqliteSchemaInspector, "postgres": PostgresSchemaInspector}
        assert type(inspector) is expected[config.type.value]
        assert inspector.supports_comments is (config.type.value == "postgres")
        reflected = inspector.reflect()
    assert reflected.tables == ["t"] and reflected.row_counts["t"].value == 0


def test_row_count_estimates_above_threshold(
        scratch: Callable[[str], DbConnectionConfig]) -> None:
    rows = ", ".join(f"({i})" for i in range(1, 101))
    config = scratch(f"CREATE TABLE big (id INTEGER PRIMARY KEY); "
                     f"INSERT INTO big VALUES {rows}; ANALYZE big;")
    threshold = ({"exact_count_max_rows": 10} if config.type.value == "sqlite"
                 else {"exact_count_max_bytes": 0})
    big = extract(config, **threshold).table("big")
    assert big is not None and big.row_count_is_estimate
    assert big.row_count == 100  # sqlite_stat1 / reltuples after ANALYZE


def test_awkward_names(scratch: Callable[[str], DbConnectionConfig]) -> None:
    info = extract(scratch("""
        CREATE TABLE "Order Details" ("Order ID" INTEGER, "Line" INTEGER, "pct%" REAL,
                                      PRIMARY KEY ("Order ID", "Line"));
        CREATE TABLE "rate%:x" ("Id" INTEGER PRIMARY KEY,
            "Order ID" INTEGER, "Line" INTEGER,
            FOREIGN KEY ("Order ID", "Line") REFERENCES "Order Details" ("Order ID", "Line"));
        INSERT INTO "Order Details" VALUES (1, 1, 0.5), (1, 2, 0.25);
        INSERT INTO "rate%:x" VALUES (1, 1, 2);
    """))
    details, rate = info.table("Order Details"), info.table("rate%:x")
    assert details is not None and rate is not None
    assert details.primary_key == ["Order ID", "Line"]
    assert [(fk.columns, fk.referenced_table) for fk in rate.foreign_keys] == [
        (["Order ID", "Line"], "Order Details")]
    assert (details.row_count, rate.row_count) == (2, 1)
    assert not details.row_count_is_estimate


# -- Postgres only: comments and non-public schemas --------------------------------------

COMMENTS_SCRIPT = """
CREATE TABLE artist (artist_id int PRIMARY KEY, name varchar(120));
CREATE TABLE plain (id int);
COMMENT ON TABLE artist IS 'People and bands who record albums.';
COMMENT ON COLUMN artist.name IS 'Display name, as printed on the cover.';
"""


def test_postgres_comments_round_trip(pg_database: Callable[..., str]) -> None:
    dbname = pg_database(script=COMMENTS_SCRIPT)
    pg_execute(dbname, f"COMMENT ON DATABASE \"{dbname}\" IS 'A small music catalogue.'")
    info = extract(pg_config("music", dbname))
    assert (info.description, info.description_source) == ("A small music catalogue.",
                                                           "comment")
    artist, plain = info.table("artist"), info.table("plain")
    assert artist is not None and plain is not None
    assert (artist.description, artist.description_source) == (
        "People and bands who record albums.", "comment")
    name = artist.column("name")
    assert (name.description, name.description_source) == (
        "Display name, as printed on the cover.", "comment")
    assert artist.column("artist_id").description is None
    assert (plain.description, plain.description_source) == (None, None)


SALES_SCRIPT = """
CREATE SCHEMA sales;
CREATE TABLE public.customer (id int PRIMARY KEY);
CREATE TABLE sales.customer (customer_id int PRIMARY KEY, name text);
CREATE TABLE sales."order" (
    order_id int, line int,
    customer_id int REFERENCES sales.customer (customer_id) ON DELETE CASCADE,
    PRIMARY KEY (order_id, line));
CREATE INDEX order_customer_idx ON sales."order" USING hash (customer_id);
CREATE VIEW sales.big_orders AS SELECT * FROM sales."order";
CREATE MATERIALIZED VIEW sales.order_totals AS SELECT customer_id, count(*) AS n
    FROM sales."order" GROUP BY customer_id;
INSERT INTO sales.customer VALUES (1, 'Ada'), (2, 'Bob');
INSERT INTO sales."order" VALUES (1, 1, 1), (1, 2, 1), (2, 1, 2);
"""


def test_postgres_non_public_schema(pg_database: Callable[..., str]) -> None:
    dbname = pg_database(script=SALES_SCRIPT)
    info = extract(pg_config("shop", dbname, schema="sales"))
    assert info.schema_name == "sales"
    assert [(t.name, t.is_view) for t in info.tables] == [
        ("big_orders", True), ("customer", False), ("order", False), ("order_totals", True)]
    order, customer = info.table("order"), info.table("customer")
    assert order is not None and customer is not None
    assert customer.column("customer_id") is not None  # sales.customer, not public.customer
    assert order.primary_key == ["order_id", "line"]
    [fk] = order.foreign_keys
    assert (fk.referenced_table, fk.referenced_columns, fk.on_delete) == (
        "customer", ["customer_id"], "CASCADE")
    assert fk.referenced_schema is None
    indexes = {i.name: i for i in order.indexes}
    assert indexes["order_customer_idx"].index_type == "hash"
    assert indexes["order_pkey"].is_primary and indexes["order_pkey"].columns == [
        "order_id", "line"]
    assert (order.row_count, customer.row_count) == (3, 2)
    assert all(t.schema_name == "sales" for t in info.tables)
    expected = pg_catalog(dbname, "sales")
    assert info.foreign_key_count == expected["fks"]
    assert sum(len(t.indexes) for t in info.tables) == expected["indexes"]


def test_postgres_unknown_schema_is_a_config_error(pg_database: Callable[..., str]) -> None:
    dbname = pg_database(script=SALES_SCRIPT)
    with pytest.raises(ConfigError, match="no schema 'sale'.*sales.*fix 'schema'"):
        extract(pg_config("shop", dbname, schema="sale"))
    public = extract(pg_config("shop", dbname, schema="public"))
    assert [t.name for t in public.tables] == ["customer"]


def test_postgres_types_sqlalchemy_does_not_know(pg_database: Callable[..., str]) -> None:
    dbname = pg_database(script="""
        CREATE TYPE pair AS (a int, b int);
        CREATE TYPE mood AS ENUM ('sad', 'ok');
        CREATE TABLE t (p pair, x xml, pt point, m mood, arr int[], tz timestamptz);
    """)
    table = extract(pg_config("types", dbname)).table("t")
    assert table is not None
    assert [c.data_type for c in table.columns] == [
        "pair", "xml", "point", "mood", "INTEGER[]", "TIMESTAMP WITH TIME ZONE"]


def test_mysql_types_sqlalchemy_does_not_know(make_db: Callable[..., BackendDb]) -> None:
    """POINT and GEOMETRY reflect as NullType (no name): the catalogue's type, in a table and
    in a view over it, and no 'Did not recognize type' warning on stderr."""
    db = make_db("mysql", "types", script=(
        "CREATE TABLE t (id int PRIMARY KEY, pt POINT, g GEOMETRY, b VARBINARY(4));"
        "CREATE VIEW v AS SELECT * FROM t;"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        info = extract(db.config)
    for name in ("t", "v"):
        table = info.table(name)
        assert table is not None
        assert [c.data_type for c in table.columns][1:] == ["POINT", "GEOMETRY",
                                                            "VARBINARY(4)"], name


def test_mariadb_json_columns_are_json(make_db: Callable[..., BackendDb]) -> None:
    """MariaDB's JSON is LONGTEXT with a ``json_valid`` check: the schema says JSON (so the
    model uses JSON functions); a LONGTEXT with another check, or none, stays LONGTEXT."""
    db = make_db("mysql", "json", script=(
        "CREATE TABLE t (id int PRIMARY KEY, doc JSON, `odd name` JSON, note LONGTEXT,"
        " x LONGTEXT CHECK (json_valid(x) AND length(x) > 2));"
        "CREATE TABLE u (doc LONGTEXT);"))
    info = extract(db.config)
    t, u = info.table("t"), info.table("u")
    assert t is not None and u is not None
    types = {c.name: c.data_type for c in t.columns}
    assert types["doc"] == types["odd name"] == "JSON", types
    assert types["note"].startswith("LONGTEXT") and types["x"].startswith("LONGTEXT")
    assert u.columns[0].data_type.startswith("LONGTEXT")  # same name, another table


def test_sqlite_declared_types(tmp_path: Path) -> None:
    path = tmp_path / "untyped.db"
    with sqlite3.connect(path) as conn:
        conn.executescript("CREATE TABLE t (a, b BLOB, c MONEY(8), d NVARCHAR(20), "
                           "e DOUBLE PRECISION, f numeric(10,2));"
                           "CREATE VIEW v AS SELECT a || 'x' AS ax, d FROM t;")
    conn.close()
    info = extract(sqlite_config("untyped", path))
    table, view = info.table("t"), info.table("v")
    assert table is not None and view is not None
    # Known type names are spelled by SQLAlchemy; unknown ones stay as declared.
    assert [c.data_type for c in table.columns] == [
        "", "BLOB", "MONEY(8)", "NVARCHAR(20)", "DOUBLE PRECISION", "NUMERIC(10, 2)"]
    assert [c.data_type for c in view.columns] == ["", "NVARCHAR(20)"]


HR_SCRIPT = SALES_SCRIPT + """
CREATE SCHEMA hr;
CREATE TABLE hr.employee (employee_id int PRIMARY KEY, name text,
    customer_id int REFERENCES sales.customer (customer_id));
INSERT INTO hr.employee VALUES (1, 'Eve', 1);
CREATE SCHEMA empty_one;
"""


def test_postgres_empty_schema_names_the_schemas_with_tables(
        pg_database: Callable[..., str]) -> None:
    """Tables outside `public` (the default) are not silently '0 tables': one line names the
    schemas that have tables and how to select them."""
    dbname = pg_database(script=HR_SCRIPT.replace("CREATE TABLE public.customer (id int "
                                                  "PRIMARY KEY);", ""))
    with pytest.raises(ConfigError) as caught:
        extract(pg_config("shop", dbname))
    message = str(caught.value)
    assert "\n" not in message
    assert "no tables or views in schema 'public'" in message
    assert "hr (1), sales (4)" in message and "'schema: sales'" in message and "'*'" in message
    # An empty database stays a valid, empty result.
    assert extract(pg_config("shop", pg_database())).tables == []


def test_postgres_schema_list_and_star(pg_database: Callable[..., str], tmp_path: Path) -> None:
    from sqlalchemy import text as sql_text

    from nl2sql.db.base import create_operations
    from nl2sql.schema.formatting import format_schema

    dbname = pg_database(script=HR_SCRIPT)
    listed = extract(pg_config("shop", dbname, schema=["sales", "hr"]))
    assert listed.schemas == ["sales", "hr"]
    assert [t.name for t in listed.tables] == [
        "hr.employee", "sales.big_orders", "sales.customer", "sales.order", "sales.order_totals"]
    employee = listed.table("hr.employee")
    assert employee is not None and listed.table("employee") is employee  # unique bare name
    assert (employee.schema_name, employee.table_name, employee.row_count) == ("hr", "employee", 1)
    [fk] = employee.foreign_keys
    assert fk.referenced_table == "sales.customer" and listed.table(fk.referenced_table)
    order = listed.table("sales.order")
    assert order is not None and order.foreign_keys[0].referenced_table == "sales.customer"
    text = format_schema(listed)
    assert 'CREATE TABLE sales."order" (' in text
    assert "REFERENCES sales.customer (customer_id)" in text
    assert "-- Schemas: sales, hr" in text

    star = extract(pg_config("shop", dbname, schema="*"))
    assert [t.name for t in star.tables] == [
        "hr.employee", "public.customer", "sales.big_orders", "sales.customer", "sales.order",
        "sales.order_totals"]
    assert star.schemas == ["hr", "public", "sales"]  # empty_one has no tables
    assert star.table("customer") is None  # two schemas have one: ambiguous
    with pytest.raises(UnknownTableError) as raised:  # the lookup names both
        resolve_table(star, "customer")
    assert "did you mean 'public.customer' or 'sales.customer'?" in str(raised.value)

    # Queries and row lookups work with qualified names (and unqualified through search_path).
    config = pg_config("shop", dbname, schema=["sales", "hr"])
    with create_connection(config) as connection:
        ops = create_operations(connection, listed)
        row = ops.fetch_row_by_id("hr.employee", 1)
        assert row is not None and row["name"] == "Eve"
        with connection.connect() as conn:
            assert conn.execute(sql_text("SELECT name FROM employee")).scalar() == "Eve"


@pytest.mark.parametrize("value", [[], ["sales", "*"], ["", "hr"]])
def test_schema_setting_shapes(value: object) -> None:
    with pytest.raises(ValueError, match="one name, a list of names or '\\*'"):
        pg_config("shop", "x", schema=value)
    assert pg_config("shop", "x", schema=["sales"]).schema_name == "sales"


@pytest.mark.parametrize("backend", ["sqlite", "mysql", "duckdb"])
def test_a_view_of_a_dropped_table_is_left_out_with_a_warning(
        backend: str, make_db: Callable[..., BackendDb], tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    """SQLite, MySQL and DuckDB keep a view whose table was dropped; annotate-schema stopped
    with "internal error (OperationalError)" (SQLite, MariaDB) or listed it with its old
    columns (DuckDB), a view no query could read."""
    db = make_db(backend, "legacy", script=(
        "CREATE TABLE kept (id INTEGER PRIMARY KEY, name VARCHAR(20));"
        "CREATE TABLE gone (x INTEGER);"
        "CREATE VIEW broken AS SELECT x FROM gone;"
        "CREATE VIEW names AS SELECT name FROM kept;"
        "DROP TABLE gone;"))
    info, warned = annotated_and_warned(db, tmp_path, caplog)
    assert [t.name for t in info.tables] == ["kept", "names"] and info.table("names").is_view
    assert [message.split(" (")[0] for message in warned] == [
        "broken left out of the schema: the database cannot describe it"]


def annotated_and_warned(db: BackendDb, data_dir: Path, caplog: pytest.LogCaptureFixture
                         ) -> tuple[DbInfo, list[str]]:
    """The database annotated, and the inspection's warnings while it was."""
    with caplog.at_level("WARNING", logger="nl2sql.inspection.base"):
        result = annotate_database(db.config, data_dir)
    return result.db_info, [record.getMessage() for record in caplog.records]


def test_sqlite_virtual_tables_without_their_shadow_tables(
        make_db: Callable[..., BackendDb], tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    """An R*Tree table stopped annotate-schema with "internal error (DatabaseError)" (the
    module prepares writes when it connects, which the read-only authorizer refuses), and an
    FTS5 table's five shadow tables (docs_data, docs_idx...) were listed as the user's."""
    db = make_db("sqlite", "search", script=(
        "CREATE VIRTUAL TABLE docs USING fts5(title, body);"
        "INSERT INTO docs VALUES ('Hello', 'world of text');"
        "CREATE VIRTUAL TABLE boxes USING rtree(id, minx, maxx);"
        "CREATE TABLE kept (id INTEGER PRIMARY KEY);"))
    info, warned = annotated_and_warned(db, tmp_path, caplog)
    assert [t.name for t in info.tables] == ["docs", "kept"]
    assert [c.name for c in info.table("docs").columns] == ["title", "body"]
    assert warned == [
        "boxes left out of the schema: the database cannot describe it (not authorized)"]


@pytest.mark.postgres
def test_postgres_foreign_tables_are_tables(make_db: Callable[..., BackendDb],
                                            tmp_path: Path) -> None:
    """A foreign table (postgres_fdw, here back into the same database) was not listed at all
    (SQLAlchemy lists foreign tables apart); it is a table, read through its server. A server
    the query cannot reach as the role it runs as (a superuser login reads as
    pg_read_all_data) is a set-up error naming the user mapping, not "fix the SQL"."""
    db = make_db("postgres", "fdw", script=(
        "CREATE EXTENSION postgres_fdw;"
        "CREATE SCHEMA far; CREATE TABLE far.orders (id int PRIMARY KEY, amount numeric(8,2));"
        "INSERT INTO far.orders SELECT g, g * 1.5 FROM generate_series(1, 40) g;"
        "DO $$ BEGIN EXECUTE format('CREATE SERVER loop FOREIGN DATA WRAPPER postgres_fdw "
        "OPTIONS (host %L, port %L, dbname %L)', '127.0.0.1', current_setting('port'), "
        "current_database()); END $$;"
        "CREATE USER MAPPING FOR CURRENT_USER SERVER loop OPTIONS (user 'postgres');"
        "CREATE FOREIGN TABLE orders_far (id int, amount numeric(8,2)) SERVER loop "
        "OPTIONS (schema_name 'far', table_name 'orders');"
        "CREATE TABLE notes (id int PRIMARY KEY);"))
    info = extract(db.config)
    assert [t.name for t in info.tables] == ["notes", "orders_far"]
    assert [c.name for c in info.table("orders_far").columns] == ["id", "amount"]
    ctx = OpsContext(DbConnectionConfigs.load(write_dbs_yaml(tmp_path, [db.config]),
                                              data_dir=tmp_path / "data",
                                              workspace=tmp_path / "ws"))
    try:
        query = "SELECT count(*), sum(amount) FROM orders_far"
        with pytest.raises(DatabaseConnectionError) as raised:
            db_execute_sql_op(ctx, db.config.db_id, query)
        assert "a foreign table's server has no user mapping for role 'pg_read_all_data' (the " \
               "role a superuser login reads as); fix its user mapping" in str(raised.value)
        db.execute("CREATE USER MAPPING FOR PUBLIC SERVER loop OPTIONS (user 'postgres')")
        with pytest.raises(DatabaseConnectionError, match="refuses the connection "
                                                          r"\(password is required: "):
            db_execute_sql_op(ctx, db.config.db_id, query)
        db.execute("ALTER USER MAPPING FOR PUBLIC SERVER loop "
                   "OPTIONS (ADD password_required 'false')")
        result = db_execute_sql_op(ctx, db.config.db_id, query)
        assert (ctx.workspace / result.csv_filename).read_text() == "count,sum\n40,1230.00\n"
    finally:
        ctx.close()


@pytest.mark.postgres
def test_postgres_partitions_are_their_partitioned_table(
        make_db: Callable[..., BackendDb]) -> None:
    """A partitioned table was listed with each partition as a table of its own (a schema of
    monthly partitions: every month a table for the model to choose from), and a big one had
    no row estimate (autovacuum never analyzes the parent)."""
    db = make_db("postgres", "weather", script=(
        "CREATE TABLE reading (id int, day date NOT NULL, peak int) PARTITION BY RANGE (day);"
        "CREATE TABLE reading_2024 PARTITION OF reading FOR VALUES FROM ('2024-01-01') "
        "TO ('2025-01-01');"
        "CREATE TABLE reading_2025 PARTITION OF reading FOR VALUES FROM ('2025-01-01') "
        "TO ('2026-01-01');"
        "INSERT INTO reading SELECT g, DATE '2024-01-01' + g, g FROM generate_series(0, 499) g;"
        "ANALYZE reading_2024; ANALYZE reading_2025;"
        "CREATE TABLE station (id int PRIMARY KEY);"))
    info = extract(db.config)
    assert [t.name for t in info.tables] == ["reading", "station"]
    assert info.table("reading").row_count == 500
    estimated = extract(db.config, exact_count_max_bytes=0).table("reading")
    assert (estimated.row_count, estimated.row_count_is_estimate) == (500, True)
