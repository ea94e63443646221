"""The hint added to a database's refusal of a query naming a table the schema lacks
(``nl2sql/operations/query_hints.py``); end to end on SQLite and PostgreSQL in
``tests/test_mcp.py::test_a_table_the_schema_lacks_gets_the_closest_name``."""

from __future__ import annotations

import pytest

from nl2sql.operations.query_hints import refused_query_hint, unknown_tables_hint
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
