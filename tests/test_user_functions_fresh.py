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
from conftest import duckdb_config, mysql_config, pg_config
from test_user_functions import _operations, _rows, mariadb_probe_database

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
def mysql_fresh(private_mariadb: Any) -> Iterator[tuple[Any, Any, str, Any]]:
    """A database on the private server (the probes change a global), its operations."""
    with mariadb_probe_database(private_mariadb.address, "nl2sql_new",
                                "CREATE VIEW plain AS SELECT id FROM t") as (
            dbname, admin, before, global_value):
        connection, ops = _operations(mysql_config("mynew", dbname,
                                                   address=private_mariadb.address))

        def admin_run(*statements: str) -> None:
            with admin.cursor() as cursor:
                for statement in statements:
                    cursor.execute(statement.format(lowered=before - 1))

        try:
            assert _rows(ops, "SELECT id FROM plain") == 1  # the catalogue is read (no function)
            yield admin_run, ops, dbname, global_value
        finally:
            connection.dispose()


MY_FUNCTION = ("CREATE FUNCTION format_bytes(x int) RETURNS int DETERMINISTIC "
               "BEGIN SET GLOBAL max_prepared_stmt_count = {lowered}; RETURN x; END")


@pytest.mark.parametrize("sql", ["SELECT format_bytes(1)", "SELECT * FROM fb_view",
                                 "SELECT id FROM plain", "SELECT FORMAT_BYTES(id) FROM t"])
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


def test_mariadb_views_over_views_created_after_the_read(mysql_fresh) -> None:  # noqa: ANN001
    """Three levels of views created after the first call, the middle one in another database
    and named with a backtick and a space: the query, the row lookup and the sample check are
    refused at once (each level is looked up in turn); with the guard off the function runs."""
    admin_run, ops, dbname, global_value = mysql_fresh
    side = f"{dbname}_side"
    before = global_value()
    admin_run(f"CREATE DATABASE `{side}`", MY_FUNCTION,
              "CREATE VIEW fb_view AS SELECT format_bytes(1) AS x",
              f"CREATE VIEW `{side}`.`mid``dle view` AS SELECT x FROM `{dbname}`.fb_view",
              f"CREATE VIEW top_view AS SELECT x FROM `{side}`.`mid``dle view`")
    try:
        from nl2sql.schema.models import ColumnInfo, DbInfo, TableInfo

        refused = f"user-defined function {dbname}.format_bytes"
        for sql in ("SELECT x FROM top_view", f"SELECT x FROM `{side}`.`mid``dle view`",
                    "WITH w AS (SELECT x FROM top_view) SELECT x FROM w"):
            with pytest.raises(QueryRejectedError, match=refused):
                _rows(ops, sql)
        ops.db_info = DbInfo(db_id="mynew", db_type="mysql", tables=[TableInfo(
            name="top_view", columns=[ColumnInfo(name="x", data_type="int",
                                                 is_primary_key=True)])])
        with pytest.raises(QueryRejectedError, match="through the view top_view"):
            ops.fetch_row_by_id("top_view", 1)
        with pytest.raises(QueryRejectedError, match="through the view top_view"):
            ops.connection.check_relation("top_view")  # the annotation's sample check
        assert global_value() == before
        _rows(ops, "SELECT x FROM top_view", validate=False)
        assert global_value() == before - 1
    finally:
        admin_run(f"DROP DATABASE IF EXISTS `{side}`")


def test_mariadb_schema_qualified_call_into_another_database(mysql_fresh, private_mariadb  # noqa: ANN001
                                                           ) -> None:
    """A function of another database, called qualified (any case, quoted or not), or through
    a view of that database (whose definition names it bare) or of this one: refused by the
    next call, unless allowed_functions lists it."""
    admin_run, ops, dbname, global_value = mysql_fresh
    side = f"{dbname}_fn"
    before = global_value()
    admin_run(f"CREATE DATABASE `{side}`", f"USE `{side}`", MY_FUNCTION,
              "CREATE VIEW own_view AS SELECT format_bytes(1) AS x", f"USE `{dbname}`",
              f"CREATE VIEW cross_view AS SELECT `{side}`.format_bytes(1) AS x")
    probes = [f"SELECT `{side}`.`format_bytes`(1) AS x", f"SELECT {side.upper()}.FORMAT_BYTES(1)",
              f"SELECT x FROM `{side}`.own_view", "SELECT x FROM cross_view"]
    try:
        for sql in probes:
            with pytest.raises(QueryRejectedError, match=f"function {side}.format_bytes"):
                _rows(ops, sql)
        assert global_value() == before
        _rows(ops, probes[2], validate=False)
        assert global_value() == before - 1
        connection, allowed = _operations(mysql_config(
            "mynew", dbname, address=private_mariadb.address,
            allowed_functions=[f"{side}.format_bytes"]))
        try:
            assert _rows(allowed, "SELECT x FROM cross_view") == 1
        finally:
            connection.dispose()
    finally:
        admin_run(f"DROP DATABASE IF EXISTS `{side}`")


def test_mariadb_view_whose_definition_the_login_cannot_read_is_refused(  # noqa: ANN001
        mysql_fresh, private_mariadb) -> None:
    """A login with SELECT but without SHOW VIEW sees a view's definition empty, while the view
    runs as its definer: it is refused (guard off: the function runs)."""
    admin_run, _ops, dbname, global_value = mysql_fresh
    user = f"nl2sql_sel_{uuid.uuid4().hex[:6]}"
    before = global_value()
    admin_run(MY_FUNCTION, "CREATE VIEW fb_view AS SELECT format_bytes(1) AS x",
              *(f"CREATE USER '{user}'@'{host}' IDENTIFIED BY 'pw'" for host in ("%", "localhost")),
              *(f"GRANT SELECT ON `{dbname}`.* TO '{user}'@'{host}'" for host in ("%", "localhost")))
    connection, ops = _operations(mysql_config("mysel", dbname, address={
        **private_mariadb.address, "user": user}, password="pw"))
    try:
        assert _rows(ops, "SELECT id FROM t") == 1
        with pytest.raises(QueryRejectedError, match="grant the login SHOW VIEW"):
            _rows(ops, "SELECT x FROM fb_view")
        assert global_value() == before
        _rows(ops, "SELECT x FROM fb_view", validate=False)
        assert global_value() == before - 1
    finally:
        connection.dispose()
        admin_run(*(f"DROP USER IF EXISTS '{user}'@'{host}'" for host in ("%", "localhost")))


def test_mariadb_concurrent_calls_see_a_replaced_view_at_once(mysql_fresh) -> None:  # noqa: ANN001
    """Threads calling on one connection pool while the admin replaces the plain view with one
    calling the function: every call that starts after the replace is refused (nothing is
    kept between calls that could be stale)."""
    import threading

    admin_run, ops, _dbname, _global_value = mysql_fresh
    replaced = threading.Event()
    late_runs: list[str] = []

    def call() -> None:
        for _ in range(15):
            after = replaced.is_set()
            try:
                _rows(ops, "SELECT id FROM plain")
            except QueryRejectedError:
                continue
            if after:
                late_runs.append("ran")

    threads = [threading.Thread(target=call) for _ in range(4)]
    for thread in threads:
        thread.start()
    admin_run(MY_FUNCTION, "CREATE OR REPLACE VIEW plain AS SELECT format_bytes(id) AS id FROM t")
    replaced.set()
    for thread in threads:
        thread.join(30)
    assert not late_runs
    with pytest.raises(QueryRejectedError, match="through the view plain"):
        _rows(ops, "SELECT id FROM plain")


def test_mariadb_view_definitions_name_their_stored_functions() -> None:
    """What a view's definition (as MariaDB prints it) calls and reads: a quoted bare call is a
    stored function of the view's schema, an unquoted one a built-in; text sqlglot cannot
    parse still yields its quoted qualified names."""
    from nl2sql.db.mysql_reach import view_reach

    calls, reads = view_reach("s", "select `f`(`s`.`t`.`id`) AS `y`,lcase('A') AS `l`,"
                                   "`o`.`g`(1) AS `z` from `s`.`t` join `o`.`v`")
    assert {("s", "f"), ("o", "g"), ("", "lcase")} <= set(calls)
    assert ("s", "f") in calls and set(reads) == {("s", "t"), ("o", "v")}
    calls, reads = view_reach("s", "select `o`.`g`(1) ,,, from `o`.`v` ((")
    assert ("o", "g") in calls and ("o", "v") in reads


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

