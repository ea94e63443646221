"""The hint added to a database's refusal of a query naming a table the schema lacks
(``nl2sql/operations/query_hints.py``); end to end on SQLite and PostgreSQL in
``tests/test_mcp.py::test_a_table_the_schema_lacks_gets_the_closest_name``; a name the engine
takes for a keyword, end to end on DuckDB and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import build_cache
from nl2sql.errors import QueryExecutionError
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.config.sample import ensure_bookstore
from nl2sql.operations.query_hints import (keyword_names_hint, refused_query_hint,
                                           unknown_tables_hint, unknown_values_hint)
from nl2sql.schema.models import ColumnInfo, DbInfo, TableInfo
from nl2sql.sql_guard import validate_read_only

ONE_SCHEMA = DbInfo(db_id="shop", db_type="postgres",
                    tables=[TableInfo(name=n) for n in ("customer", "sales_data", "order_line")])
TWO_SCHEMAS = DbInfo(db_id="odd", db_type="postgres", tables=[
    TableInfo(name="public.Order", schema_name="public", table_name="Order"),
    TableInfo(name="Sales Dept.shipment", schema_name="Sales Dept", table_name="shipment")])


@pytest.mark.parametrize(("info", "sql", "error", "hint"), [
    (ONE_SCHEMA, 'SELECT * FROM "sales data"', 'Table with name sales data does not exist!',
     "'sales data' is not a table of database 'shop': did you mean 'sales_data'?"),
    (ONE_SCHEMA, "SELECT * FROM public.Customers", 'relation "public.customers" does not exist',
     "'public.Customers' is not a table of database 'shop': did you mean 'customer'?"),
    (TWO_SCHEMAS, 'SELECT * FROM "Orders"', 'relation "Orders" does not exist',
     "'Orders' is not a table of database 'odd': did you mean 'public.Order'?"),
    (TWO_SCHEMAS, 'SELECT * FROM "Sales Dept".shipments', 'relation "Sales Dept.shipments"',
     "'Sales Dept.shipments' is not a table of database 'odd': did you mean "
     "'Sales Dept.shipment'?"),
    # no hint: the error is about something else, the name is a CTE, nothing is close
    (ONE_SCHEMA, "SELECT nope FROM customer", 'column "nope" does not exist', ""),
    (ONE_SCHEMA, "WITH customers AS (SELECT 1 AS n) SELECT nope FROM customers",
     'column "nope" does not exist in customers', ""),
    (ONE_SCHEMA, "SELECT * FROM zzz", "no such table: zzz", ""),
    (ONE_SCHEMA, "SELECT * FROM customer", "no such table: customer", ""),
])
def test_a_table_the_schema_lacks_and_the_error_names(info: DbInfo, sql: str, error: str,
                                                       hint: str) -> None:
    expression = validate_read_only(sql, "postgres").expression
    assert unknown_tables_hint(info, expression, error) == hint


def _table(name: str, *columns: str) -> TableInfo:
    return TableInfo(name=name, columns=[ColumnInfo(name=c, data_type="TEXT") for c in columns])


CHINOOK = DbInfo(db_id="chinook", db_type="sqlite", tables=[
    _table("Genre", "GenreId", "Name"), _table("Track", "TrackId", "Name", "GenreId", "Milliseconds")])


@pytest.mark.parametrize(("sql", "error", "hint"), [
    ("SELECT count(*) FROM Track t JOIN Genre g ON g.GenreId = t.GenreId "
     "WHERE g.GenreName = 'Rock'", "no such column: g.GenreName",
     "'Genre' (g) has no column 'GenreName'; its columns: GenreId, Name."),
    ("SELECT TrackID, Milisecond FROM Track", "Unknown column 'Milisecond' in 'field list'",
     "'Milisecond' is not a column of the tables the query reads: did you mean 'Milliseconds' "
     "(of 'Track')?"),
    # names the query defines are not columns to correct; an unknown table comes first
    ("SELECT Name AS n FROM Track ORDER BY n", "no such column: n", ""),
    ("WITH c(total) AS (SELECT 1) SELECT totals FROM c", "no such column: totals", ""),
    ("SELECT Nme FROM Tracks", "no such table: Tracks",
     "'Tracks' is not a table of database 'chinook': did you mean 'Track'?"),
    ("SELECT Nme FROM Track", "syntax error near FROM", ""),
])
def test_a_column_no_table_of_the_query_has(sql: str, error: str, hint: str) -> None:
    expression = validate_read_only(sql, "sqlite").expression
    assert refused_query_hint(CHINOOK, expression, error) == hint


@pytest.mark.parametrize(("sql", "error", "hint"), [
    ("SELECT a AS at FROM t ORDER BY at", 'syntax error at or near "LIMIT"',
     "'at' is a keyword of DuckDB, which it may not read as a name where it stands: write "
     '"at" (double quotes) or choose another name.'),
    ('SELECT a AS "at" FROM t ORDER BY "at"', 'syntax error at or near "LIMIT"', ""),  # quoted
    ("SELECT a AS at FROM t", "Binder Error: no column b", ""),  # not a syntax error
    ("SELECT a, b FROM t", 'syntax error at or near "b"', ""),  # no keyword named
])
def test_a_name_the_engine_takes_for_a_keyword(sql: str, error: str, hint: str) -> None:
    expression = validate_read_only(sql, "duckdb").expression
    assert keyword_names_hint(expression, error, frozenset({"at", "order"}), "DuckDB") == hint


@pytest.mark.parametrize("backend", ["duckdb", "postgres"])
def test_the_engines_own_keywords_explain_its_syntax_error(backend: str, make_db: Any,
                                                          make_registry: Any) -> None:
    """DuckDB says only "syntax error at or near LIMIT" for ``ORDER BY at`` ('at' starts ``AT
    TIME ZONE`` there); the hint names 'at' from DuckDB's own keyword list. PostgreSQL's list
    is read from the server too ('user' is reserved there)."""
    db = make_db(backend, "kw", script="CREATE TABLE t (at_time TIMESTAMP, amount INTEGER); "
                                       "INSERT INTO t VALUES ('2024-01-01 10:00:00', 5)")
    registry = make_registry(db.config)
    build_cache(db.config, registry.data_dir)
    ops = OpsContext(registry)
    try:
        keywords = ops.connection("kw").keywords()
        assert {"select", "at" if backend == "duckdb" else "user"} <= keywords
        assert "amount" not in keywords and "name" not in keywords  # fine names unquoted
        if backend == "duckdb":
            with pytest.raises(QueryExecutionError) as refused:
                db_execute_sql_op(ops, "kw", "SELECT at_time AS at FROM t ORDER BY at LIMIT 2")
            assert str(refused.value).endswith(
                "'at' is a keyword of DuckDB, which it may not read as a name where it stands: "
                'write "at" (double quotes) or choose another name.')
            fixed = db_execute_sql_op(ops, "kw",
                                      'SELECT at_time AS "at" FROM t ORDER BY "at" LIMIT 2')
            assert fixed.row_count == 1
    finally:
        ops.close()


SHOP = DbInfo(db_id="shop", db_type="postgres", tables=[
    TableInfo(name="orders", columns=[
        ColumnInfo(name="id", data_type="INTEGER"),
        ColumnInfo(name="status", data_type="TEXT", is_enum=True,
                   enum_values=["new", "paid", "shipped"]),
        ColumnInfo(name="customer_id", data_type="INTEGER")]),
    TableInfo(name="customers", columns=[
        ColumnInfo(name="id", data_type="INTEGER"),
        ColumnInfo(name="country", data_type="TEXT", domain_values=["CA", "CL", "US"]),
        ColumnInfo(name="name", data_type="TEXT")])])


@pytest.mark.parametrize(("sql", "hint"), [
    ("SELECT id FROM orders WHERE status = 'payed'", "'payed' is not a value of orders.status "
     "the schema cache knows (new, paid, shipped): did you mean 'paid'?"),
    ("SELECT id FROM orders WHERE 'Paid' = status", "'Paid' is not a value of orders.status; "
     "'paid' is (the case differs)."),
    ("SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id "
     "WHERE c.country IN ('US', 'Chile')",
     "'Chile' is not a value of customers.country the schema cache knows (CA, CL, US)."),
    # a value the column holds, a column with no known values, a name both tables have
    ("SELECT id FROM orders WHERE status = 'paid'", ""),
    ("SELECT id FROM customers WHERE name = 'Zed'", ""),
    ("SELECT o.id FROM orders o, customers c WHERE id = 'x'", ""),
    ("SELECT id FROM orders WHERE lower(status) = 'payed'", ""),  # not the column itself
])
def test_a_compared_value_the_column_does_not_hold(sql: str, hint: str) -> None:
    expression = validate_read_only(sql, "postgres").expression
    assert unknown_values_hint(SHOP, expression) == hint


def test_an_empty_result_names_the_misspelt_value(tmp_path: Path) -> None:
    """The bundled bookstore annotated (its enum columns screened): a misspelt format returns
    no rows, and the answer says which value was meant; a result with rows gets no hint."""
    path = ensure_bookstore(tmp_path / "bookstore.db")
    (tmp_path / "dbs.yaml").write_text(f"databases:\n  shop:\n    type: sqlite\n"
                                       f"    path: {path}\n")
    registry = DbConnectionConfigs.load(tmp_path / "dbs.yaml", workspace=tmp_path / "ws")
    annotate_database(registry.get("shop"), registry.data_dir)
    ops = OpsContext(registry)
    try:
        empty = db_execute_sql_op(ops, "shop", "SELECT title FROM books WHERE format = 'e-book'")
        assert empty.row_count == 0 and empty.render().splitlines()[-1].startswith(
            "'e-book' is not a value of books.format the schema cache knows (")
        assert empty.render().endswith("did you mean 'ebook'?")
        found = db_execute_sql_op(ops, "shop", "SELECT title FROM books WHERE format = 'ebook'")
        assert found.row_count > 0 and "is not a value" not in found.render()
    finally:
        ops.close()


def test_postgres_refusing_an_enum_value_gets_the_closest(make_db: Any,
                                                        make_registry: Any) -> None:
    """PostgreSQL refuses a value its enum type lacks ("invalid input value for enum"), naming
    neither the column nor the values: the answer adds both, from the annotated cache, where
    the column is an enum by its type (its labels from ``pg_enum``, as MySQL's ENUM)."""
    db = make_db("postgres", "moods", script=(
        "CREATE TYPE mood AS ENUM ('happy', 'sad', 'ok'); CREATE TABLE people (id int, "
        "feeling mood); INSERT INTO people VALUES (1, 'happy'), (2, 'sad'), (3, 'ok')"))
    registry = make_registry(db.config)
    annotate_database(registry.get("moods"), registry.data_dir)
    ops = OpsContext(registry)
    try:
        with pytest.raises(QueryExecutionError) as refused:
            db_execute_sql_op(ops, "moods", "SELECT id FROM people WHERE feeling = 'hapy'")
        assert 'invalid input value for enum mood: "hapy"' in str(refused.value)
        assert str(refused.value).endswith(
            "'hapy' is not a value of people.feeling the schema cache knows (happy, sad, ok): "
            "did you mean 'happy'?")
        # The enum type's labels, in their order: the column is an enum by its type.
        feeling = ops.db_info("moods").table("people").column("feeling")  # type: ignore[union-attr]
        assert (feeling.is_enum, feeling.enum_values, feeling.enum_decision) == (
            True, ["happy", "sad", "ok"], "schema")
    finally:
        ops.close()
