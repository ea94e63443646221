"""A user-defined function created *after* the server read its catalogue is refused by the very
next call ("correct whenever called"): each backend reads a cheap version of its catalogue with
every call and reads the catalogue again when the version moved. Each test starts from a
connection that has already read its catalogue (a query ran), changes the catalogue from a
separate admin connection, and calls at once: refused, no side effect; with the guard off the
same call has the side effect. Dropping the function makes the next call allowed again."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import duckdb_config, mysql_admin, mysql_config, pg_config
from test_user_functions import _operations, _rows

from nl2sql.errors import QueryRejectedError

PG_SETUP = """
CREATE EXTENSION dblink;
CREATE TABLE hits (n int);
CREATE TABLE t (id int PRIMARY KEY, name text);
INSERT INTO t VALUES (1, 'a');
CREATE VIEW plain AS SELECT id FROM t;
"""
# Created by the admin after nl2sql read the catalogue.
PG_HIT = """
CREATE FUNCTION public.log_hit() RETURNS int LANGUAGE sql SECURITY DEFINER AS $$
  SELECT length(dblink_exec('host=127.0.0.1 port=5432 user=postgres dbname='
                            || current_database(), 'INSERT INTO hits VALUES (1)')) $$
"""


@pytest.fixture
def pg_fresh(pg_database) -> Iterator[tuple[Any, Any, Any]]:  # noqa: ANN001
    dbname = pg_database(script=PG_SETUP)
    admin = psycopg.connect(f"host=127.0.0.1 port=5432 user=postgres dbname={dbname}",
                            autocommit=True)
    connection, ops = _operations(pg_config("pgnew", dbname))
    try:
        assert _rows(ops, "SELECT id FROM plain") == 1  # the catalogue is read (no function)
        yield admin, ops, lambda: admin.execute("SELECT count(*) FROM hits").fetchone()[0]
    finally:
        connection.dispose()
        admin.close()


@pytest.mark.parametrize("sql", ["SELECT log_hit()", "SELECT * FROM hit_view",
                                 "SELECT id FROM plain"])
def test_postgres_function_created_after_the_read_is_refused_at_once(pg_fresh, sql: str) -> None:  # noqa: ANN001
    admin, ops, hits = pg_fresh
    admin.execute(PG_HIT)
    admin.execute("CREATE VIEW hit_view AS SELECT log_hit() AS n")
    admin.execute("CREATE OR REPLACE VIEW plain AS SELECT id FROM t WHERE log_hit() > 0")
    with pytest.raises(QueryRejectedError, match="user-defined function public.log_hit"):
        _rows(ops, sql)
    assert hits() == 0
    _rows(ops, sql, validate=False)  # the engine alone runs it: the side effect is real
    assert hits() >= 1


def test_postgres_renamed_view_and_schema_are_known_at_once(pg_fresh) -> None:  # noqa: ANN001
    admin, ops, hits = pg_fresh
    admin.execute(PG_HIT)
    admin.execute("CREATE VIEW hit_view AS SELECT log_hit() AS n")
    with pytest.raises(QueryRejectedError):
        _rows(ops, "SELECT * FROM hit_view")
    admin.execute("ALTER VIEW hit_view RENAME TO renamed_view")
    with pytest.raises(QueryRejectedError, match="through the view renamed_view"):
        _rows(ops, "SELECT * FROM renamed_view")
    admin.execute("CREATE SCHEMA side; ALTER FUNCTION public.log_hit() SET SCHEMA side")
    with pytest.raises(QueryRejectedError, match="side.log_hit"):
        _rows(ops, "SELECT side.log_hit()")
    assert hits() == 0


def test_postgres_dropping_the_function_allows_the_next_call(pg_fresh) -> None:  # noqa: ANN001
    """A user function named like a built-in makes a bare call of that name refused; once it
    is dropped, the next call runs (no stale refusal)."""
    admin, ops, _hits = pg_fresh
    admin.execute("CREATE FUNCTION public.upper(x int) RETURNS int LANGUAGE sql AS $$ SELECT x $$")
    with pytest.raises(QueryRejectedError, match="public.upper"):
        _rows(ops, "SELECT upper(name) FROM t")
    admin.execute("DROP FUNCTION public.upper(int)")
    assert _rows(ops, "SELECT upper(name) FROM t") == 1


def test_postgres_row_lookup_sees_a_replaced_view_at_once(pg_fresh) -> None:  # noqa: ANN001
    admin, ops, hits = pg_fresh
    from nl2sql.schema.models import ColumnInfo, DbInfo, TableInfo

    ops.db_info = DbInfo(db_id="pgnew", db_type="postgres", tables=[TableInfo(
        name="plain", columns=[ColumnInfo(name="id", data_type="integer", is_primary_key=True)])])
    assert ops.fetch_row_by_id("plain", 1) == {"id": 1}
    admin.execute(PG_HIT)
    admin.execute("CREATE OR REPLACE VIEW plain AS SELECT id FROM t WHERE log_hit() > 0")
    with pytest.raises(QueryRejectedError, match="through the view plain"):
        ops.fetch_row_by_id("plain", 1)
    assert hits() == 0


# -- MariaDB ----------------------------------------------------------------------------------

@pytest.fixture
def mysql_fresh(mysql_server: str) -> Iterator[tuple[Any, Any, str, Any]]:
    dbname = f"nl2sql_new_{uuid.uuid4().hex[:8]}"
    admin = mysql_admin()
    with admin.cursor() as cursor:
        cursor.execute("SELECT @@GLOBAL.max_prepared_stmt_count")
        before = cursor.fetchone()[0]
        cursor.execute(f"CREATE DATABASE `{dbname}`")
    admin.select_db(dbname)
    with admin.cursor() as cursor:
        cursor.execute("CREATE TABLE t (id int PRIMARY KEY, name text)")
        cursor.execute("INSERT INTO t VALUES (1, 'a')")
        cursor.execute("CREATE VIEW plain AS SELECT id FROM t")
    connection, ops = _operations(mysql_config("mynew", dbname))

    def global_value() -> int:
        with admin.cursor() as cursor:
            cursor.execute("SELECT @@GLOBAL.max_prepared_stmt_count")
            return cursor.fetchone()[0]

    def admin_run(*statements: str) -> None:
        with admin.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement.format(lowered=before - 1))

    try:
        assert _rows(ops, "SELECT id FROM plain") == 1  # the catalogue is read (no function)
        yield admin_run, ops, dbname, global_value
    finally:
        connection.dispose()
        with admin.cursor() as cursor:
            cursor.execute(f"SET GLOBAL max_prepared_stmt_count = {before}")
            cursor.execute(f"DROP DATABASE IF EXISTS `{dbname}`")
        admin.close()


MY_FUNCTION = ("CREATE FUNCTION format_bytes(x int) RETURNS int DETERMINISTIC "
               "BEGIN SET GLOBAL max_prepared_stmt_count = {lowered}; RETURN x; END")


@pytest.mark.parametrize("sql", ["SELECT format_bytes(1)", "SELECT * FROM fb_view",
                                 "SELECT id FROM plain"])
def test_mariadb_function_created_after_the_read_is_refused_at_once(mysql_fresh, sql: str) -> None:  # noqa: ANN001
    admin_run, ops, _dbname, global_value = mysql_fresh
    before = global_value()
    admin_run(MY_FUNCTION, "CREATE VIEW fb_view AS SELECT format_bytes(1) AS x",
              # CREATE OR REPLACE VIEW leaves no timestamp anywhere: its text is what changed
              "CREATE OR REPLACE VIEW plain AS SELECT id FROM t WHERE format_bytes(id) > 0")
    with pytest.raises(QueryRejectedError, match="user-defined function.*format_bytes"):
        _rows(ops, sql)
    assert global_value() == before
    _rows(ops, sql, validate=False)  # the engine alone: the stored function runs
    assert global_value() == before - 1


def test_mariadb_dropping_the_function_allows_the_next_call(mysql_fresh) -> None:  # noqa: ANN001
    admin_run, ops, _dbname, global_value = mysql_fresh
    admin_run(MY_FUNCTION, "CREATE OR REPLACE VIEW plain AS SELECT format_bytes(id) AS id FROM t")
    with pytest.raises(QueryRejectedError, match="format_bytes"):
        _rows(ops, "SELECT id FROM plain")
    admin_run("CREATE OR REPLACE VIEW plain AS SELECT id FROM t", "DROP FUNCTION format_bytes")
    assert _rows(ops, "SELECT id FROM plain") == 1


# -- DuckDB -----------------------------------------------------------------------------------

def test_duckdb_catalogue_cannot_move_while_open_and_is_read_again_when_reopened(
        tmp_path: Path) -> None:
    """nl2sql holds the file open read-only, so no other process or connection can add a
    macro meanwhile (DuckDB's file lock); once nl2sql closed and reopened it, the new macro is
    known at the first call."""
    import duckdb

    path = tmp_path / "m.duckdb"
    with duckdb.connect(str(path)) as setup:
        setup.execute("CREATE TABLE t AS SELECT 1 AS id; CREATE VIEW v AS SELECT id FROM t")
    connection, ops = _operations(duckdb_config("lake", path))
    try:
        assert _rows(ops, "SELECT * FROM v") == 1
        with pytest.raises(duckdb.Error):  # a writer cannot open the file meanwhile
            duckdb.connect(str(path)).close()
        connection.dispose()  # e.g. the MCP server closing its connections
        with duckdb.connect(str(path)) as admin:
            admin.execute("CREATE MACRO plus_one(a) AS a + 1; "
                          "CREATE OR REPLACE VIEW v AS SELECT plus_one(id) AS id FROM t")
        with pytest.raises(QueryRejectedError, match="main.plus_one"):
            _rows(ops, "SELECT * FROM v")
    finally:
        connection.dispose()

