"""A generated column says what it is computed from (``gross ... GENERATED ALWAYS AS (net +
tax)``), as the database reports it: a model sums ``gross`` instead of adding ``net`` and
``tax`` again, and knows it cannot be told apart from them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conftest import BackendDb
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.operations.ops_context import OpsContext
from nl2sql.schema.formatting import format_schema

SCRIPTS = {
    "postgres": ("CREATE TABLE orders (id integer PRIMARY KEY, net numeric(10,2), "
                 "tax numeric(10,2), gross numeric(10,2) GENERATED ALWAYS AS (net + tax) STORED);"
                 "INSERT INTO orders (id, net, tax) VALUES (1, 10, 2);", "net + tax"),
    "mysql": ("CREATE TABLE orders (id int PRIMARY KEY, net decimal(10,2), tax decimal(10,2), "
              "gross decimal(10,2) AS (net + tax) STORED, label varchar(20) AS "
              "(concat('#', id)) VIRTUAL); INSERT INTO orders (id, net, tax) VALUES (1, 10, 2);",
              "`net` + `tax`"),
    "sqlite": ("CREATE TABLE orders (id INTEGER PRIMARY KEY, net NUMERIC, tax NUMERIC,\n"
               "  gross NUMERIC GENERATED ALWAYS AS (net + tax) VIRTUAL\n);"
               "INSERT INTO orders (id, net, tax) VALUES (1, 10, 2);", "net + tax"),
}


@pytest.mark.parametrize("backend", sorted(SCRIPTS))
def test_a_generated_column_shows_its_expression(
        backend: str, make_db: Callable[..., BackendDb],
        make_registry: Callable[..., DbConnectionConfigs]) -> None:
    script, expression = SCRIPTS[backend]
    db = make_db(backend, "shop", script=script)
    ops = OpsContext(make_registry(db.config))
    try:
        annotate_database(ops.config("shop"), ops.data_dir)
        info = ops.db_info("shop")
        gross = info.table("orders").column("gross")
        assert gross.generated == expression
        assert info.table("orders").column("net").generated is None
        assert f"GENERATED ALWAYS AS ({expression})" in format_schema(info)
    finally:
        ops.close()


def test_a_generated_expression_sqlalchemy_misreads_is_left_out(tmp_path) -> None:  # noqa: ANN001
    """Two generated columns on one line of a SQLite table: SQLAlchemy's reading of the first
    runs into the second (``a * b) VIRTUAL, d TEXT GENERATED ALWAYS AS (upper(x)``); what does
    not parse is not shown."""
    import sqlite3

    from conftest import sqlite_config
    from nl2sql.db.base import create_connection
    from nl2sql.inspection import DbSchemaExtractor

    path = tmp_path / "g.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (a INT, b INT, c INT GENERATED ALWAYS AS (a * b) VIRTUAL, "
                     "d TEXT GENERATED ALWAYS AS (upper('x')) STORED)")
    with create_connection(sqlite_config("g", path)) as connection:
        table = DbSchemaExtractor(connection).extract().table("t")
    assert (table.column("c").generated, table.column("d").generated) == (None, "upper('x')")
