"""CHECK constraints: kept as the database reports them and shown in the schema; one that
allows a column only a list of strings makes the whole list its enum values (values no row
holds yet included), on SQLite, PostgreSQL, MariaDB (column-level checks too, which
SQLAlchemy's reflection leaves out there) and DuckDB."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import BackendDb, duckdb_config, pg_config, write_dbs_yaml
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.inspection.check_lists import allowed_values
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.schema.cache import load_db_info, save_db_info
from nl2sql.schema.formatting import format_schema
from nl2sql.schema.models import is_label_type

STATUSES = ["new", "paid", "shipped", "refunded"]
SCRIPT = """
CREATE TABLE orders (
    id integer PRIMARY KEY,
    status varchar(10) NOT NULL CHECK (status IN ('new', 'paid', 'shipped', 'refunded')),
    qty integer,
    note varchar(20),
    CONSTRAINT qty_positive CHECK (qty > 0)
);
INSERT INTO orders VALUES {rows};
""".format(rows=", ".join(f"({i}, '{('new', 'paid')[i % 2]}', {i}, 'n{i % 3}')"
                          for i in range(1, 41)))


@pytest.mark.parametrize("backend", ["sqlite", "postgres", "mysql", "duckdb"])
def test_a_check_listing_values_gives_them_all(backend: str, make_db: Callable[..., BackendDb],
                                               tmp_path: Path) -> None:
    db = make_db(backend, "shop", script=SCRIPT)
    registry = DbConnectionConfigs.load(write_dbs_yaml(tmp_path, [db.config]),
                                        data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    annotate_database(db.config, registry.data_dir)
    ops = OpsContext(registry)
    try:
        info = ops.db_info("shop")
        orders = info.table("orders")
        status = orders.column("status")
        # all four, in the constraint's order: screening would see new and paid only
        assert (status.is_enum, status.enum_values, status.enum_decision) == (
            True, STATUSES, "schema")
        assert sorted(orders.column("note").enum_values) == ["n0", "n1", "n2"]  # screened
        schema = format_schema(info)
        assert "NOT NULL,  -- [new, paid, shipped, refunded]" in schema  # VARCHAR(10) or not
        checks = [line.strip() for line in schema.splitlines() if "CHECK" in line]
        assert len(checks) == 1 and checks[0].replace("`", "").endswith("CHECK (qty > 0)")
        if backend in ("postgres", "mysql"):  # named where the database keeps the name
            assert checks[0].startswith("CONSTRAINT qty_positive CHECK")
        # An allowed value no row holds yet is no misspelling.
        result = db_execute_sql_op(ops, "shop", "SELECT id FROM orders WHERE status = 'refunded'")
        assert result.row_count == 0 and result.hint is None
    finally:
        ops.close()


@pytest.mark.parametrize(("condition", "dialect", "expected"), [
    ("status IN ('a', 'b')", "sqlite", ("status", ["a", "b"])),
    ("status = ANY (ARRAY['a'::text, 'b'::text])", "postgres", ("status", ["a", "b"])),
    ("((status)::text = ANY ((ARRAY['a'::character varying, 'b'::character varying])::text[]))",
     "postgres", ("status", ["a", "b"])),
    ("`status` in (_utf8mb4'a',_utf8mb4'b')", "mysql", ("status", ["a", "b"])),
    ("status NOT IN ('a', 'b')", "sqlite", None),
    ("status IN ('a', 'b') OR status IS NULL", "sqlite", None),
    ("lower(status) IN ('a', 'b')", "sqlite", None),
    ("qty IN (1, 2)", "sqlite", None),
    ("qty > 0", "postgres", None),
    ("status IN (SELECT code FROM codes)", "sqlite", None),
    ("not sql at all (", "sqlite", None),
])
def test_which_conditions_list_values(condition: str, dialect: str,
                                      expected: tuple[str, list[str]] | None) -> None:
    assert allowed_values(condition, dialect) == expected


def test_the_list_replaces_a_models_earlier_reading(make_db: Callable[..., BackendDb],
                                                     tmp_path: Path) -> None:
    """A cache annotated before CHECK lists were read holds the model's verdict on the values
    it saw (``llm``); the next annotation takes the constraint's list. A person's stays."""
    db = make_db("sqlite", "shop", script=SCRIPT)
    annotate_database(db.config, tmp_path)
    cached = load_db_info(tmp_path, "shop")
    for name, decision in (("status", "llm"), ("note", "user")):
        column = cached.table("orders").column(name)
        column.enum_decision, column.is_enum, column.enum_values = decision, True, ["new", "x"]
    save_db_info(cached, tmp_path)
    annotate_database(db.config, tmp_path)
    orders = load_db_info(tmp_path, "shop").table("orders")
    assert (orders.column("status").enum_decision, orders.column("status").enum_values) == (
        "schema", STATUSES)
    assert (orders.column("note").enum_decision, orders.column("note").enum_values) == (
        "user", ["new", "x"])


def test_a_duckdb_enum_type_gives_its_labels(tmp_path: Path) -> None:
    """DuckDB reports ``ENUM('sad', 'ok')``: its labels, unused ones too, are the values (it
    was read as a number type, for the ``NUM`` in ``ENUM``, and left unscreened)."""
    import duckdb
    path = tmp_path / "moods.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy', 'it''s fine');"
                     "CREATE TABLE t (id INTEGER PRIMARY KEY, m mood);"
                     "INSERT INTO t SELECT i, (['sad', 'ok'])[1 + i % 2] FROM range(1, 41) r(i)")
    annotate_database(duckdb_config("moods", path), tmp_path / "data")
    column = load_db_info(tmp_path / "data", "moods").table("t").column("m")
    assert (column.enum_decision, column.enum_values) == (
        "schema", ["sad", "ok", "happy", "it's fine"])
    assert is_label_type(column.data_type) and not is_label_type("NUMERIC(10, 2)")


def test_a_postgres_domain_listing_values_gives_them_all(pg_database: Callable[..., str],
                                                         tmp_path: Path) -> None:
    dbname = pg_database(script="""
        CREATE DOMAIN order_status AS text CHECK (VALUE IN ('open', 'closed', 'void'));
        CREATE DOMAIN year AS integer CHECK (VALUE >= 1901 AND VALUE <= 2155);
        CREATE TABLE t (id int PRIMARY KEY, s order_status, y year);
        INSERT INTO t SELECT g, (ARRAY['open', 'closed'])[1 + g % 2], 2000 FROM
            generate_series(1, 40) g;""")
    annotate_database(pg_config("doms", dbname), tmp_path)
    table = load_db_info(tmp_path, "doms").table("t")
    assert (table.column("s").enum_decision, table.column("s").enum_values) == (
        "schema", ["open", "closed", "void"])
    assert not table.column("y").is_enum
