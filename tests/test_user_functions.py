"""User-defined functions are refused unless dbs.yaml lists them (``allowed_functions``): a
PostgreSQL ``SECURITY DEFINER`` function that writes a row through dblink, and a MariaDB stored
function named like a built-in that runs ``SET GLOBAL``, called directly, schema-qualified and
through views. Each probe is also run with the parser guard off, to show the side effect is
real: only the user-function check (or a read-only login) stops it. The MariaDB probes run on a
private server of the session's own (``private_mariadb``): their global is not one that tests
running beside them on the shared server see, or change."""

from __future__ import annotations

import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from conftest import mysql_admin, mysql_config, pg_config, run_mysql_script

from nl2sql.annotation.pipeline import annotate_database
from nl2sql.db.base import DbOperations
from nl2sql.db.base import create_connection, create_operations
from nl2sql.errors import QueryRejectedError
from nl2sql.schema.models import DbInfo
from nl2sql.sql_guard import validate_read_only
from nl2sql.sql_guard.user_functions import UserFunctions, check_user_functions

PG_SETUP = """
CREATE EXTENSION dblink;
CREATE TABLE hits (n int);
CREATE TABLE t (id int PRIMARY KEY, name text);
INSERT INTO t VALUES (1, 'a');
CREATE FUNCTION public.log_hit() RETURNS int LANGUAGE sql SECURITY DEFINER AS $$
  SELECT length(dblink_exec('host=127.0.0.1 port=5432 user=postgres dbname='
                            || current_database(), 'INSERT INTO hits VALUES (1)')) $$;
CREATE FUNCTION public.twice(x int) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 2 * x $$;
CREATE FUNCTION public.row_hit(r t) RETURNS int LANGUAGE sql SECURITY DEFINER AS $$
  SELECT length(dblink_exec('host=127.0.0.1 port=5432 user=postgres dbname='
                            || current_database(), 'INSERT INTO hits VALUES (2)')) $$;
CREATE FUNCTION public.any_hit(r record, n int DEFAULT 0) RETURNS int LANGUAGE plpgsql
  SECURITY DEFINER AS $$ BEGIN RETURN public.log_hit(); END $$;
CREATE FUNCTION public.date_trunc(unit text, d date) RETURNS date LANGUAGE sql
  SECURITY DEFINER AS $$ SELECT d + public.log_hit() * 0 $$;
CREATE TABLE days (d date);
INSERT INTO days VALUES ('2024-05-17');
CREATE VIEW hit_view AS SELECT log_hit() AS n;
CREATE VIEW outer_view AS SELECT * FROM hit_view;
CREATE VIEW policy_free AS SELECT id, twice(id) AS d FROM t;
"""
PG_PROBES = ["SELECT log_hit()", "SELECT public.log_hit()", 'SELECT "log_hit"()',
             "SELECT LOG_HIT() AS x FROM t", "SELECT * FROM hit_view",
             "SELECT n FROM public.outer_view", "SELECT * FROM t WHERE id = log_hit()",
             "SELECT * FROM (SELECT 1 AS a) s JOIN LATERAL (SELECT log_hit()) x ON true",
             "EXPLAIN SELECT * FROM hit_view"]


def _rows(ops: DbOperations, sql: str, *, validate: bool = True) -> int:
    from test_engine_guard import DiscardingRowSink

    sink = DiscardingRowSink()
    ops.execute_select_query(sql, sink, validate=validate)
    return sink.rows


@pytest.fixture
def pg_functions(pg_database) -> Iterator[tuple[str, Any]]:  # noqa: ANN001
    dbname = pg_database(script=PG_SETUP)

    def hits() -> int:
        with psycopg.connect(f"host=127.0.0.1 port=5432 user=postgres dbname={dbname}") as c:
            return c.execute("SELECT count(*) FROM hits").fetchone()[0]

    yield dbname, hits


def _operations(config: Any) -> tuple[Any, DbOperations]:
    connection = create_connection(config)
    return connection, create_operations(connection, DbInfo(db_id=config.db_id,
                                                            db_type=config.type.value))


def _refused_then_run_unguarded(config: Any, sql: str, refusal: str,
                                untouched: Callable[[], bool],
                                touched: Callable[[], bool]) -> None:
    """Guard on: ``sql`` is refused (``refusal``) and the probe's side effect did not happen
    (``untouched``); guard off: the engine alone runs it and it happens (``touched``), so the
    probe is real."""
    connection, ops = _operations(config)
    try:
        with pytest.raises(QueryRejectedError, match=refusal):
            _rows(ops, sql)
        assert untouched()
        _rows(ops, sql, validate=False)
        assert touched()
    finally:
        connection.dispose()


@pytest.mark.parametrize("sql", PG_PROBES)
def test_postgres_user_function_is_refused_and_writes_nothing(pg_functions, sql: str) -> None:  # noqa: ANN001
    dbname, hits = pg_functions
    connection, ops = _operations(pg_config("pgfn", dbname))
    try:
        with pytest.raises(QueryRejectedError, match="user-defined function public.log_hit"
                                                     ".*allowed_functions for database 'pgfn'"):
            _rows(ops, sql)
        assert hits() == 0
        if not sql.startswith("EXPLAIN"):  # the side effect is real: the engine alone runs it
            _rows(ops, sql, validate=False)
            assert hits() >= 1
    finally:
        connection.dispose()


@pytest.mark.parametrize(("sql", "function"), [
    ("SELECT t.row_hit FROM t", "row_hit"), ("SELECT (t).row_hit FROM t", "row_hit"),
    ("SELECT x.row_hit FROM t AS x", "row_hit"), ("SELECT public.t.row_hit FROM t", "row_hit"),
    ("SELECT id FROM t WHERE t.row_hit > 0", "row_hit"),
    ("SELECT ((x)).any_hit FROM t AS x", "any_hit"),
    ("SELECT (ROW(1, 'a')::t).row_hit", "row_hit")])
def test_postgres_function_written_as_a_column_is_refused(pg_functions, sql: str,  # noqa: ANN001
                                                          function: str) -> None:
    """PostgreSQL's functional notation: ``t.f`` and ``(t).f`` call ``f(t)`` without the
    function's name followed by a parenthesis anywhere in the text."""
    dbname, hits = pg_functions
    _refused_then_run_unguarded(
        pg_config("pgfn", dbname), sql,
        f"function public.{function} \\(written as the column {function}",
        lambda: hits() == 0, lambda: hits() >= 1)
    allowed, ops = _operations(pg_config("pgfn", dbname, allowed_functions=[
        "public.row_hit", "public.any_hit", "public.log_hit"]))
    try:
        assert _rows(ops, sql) == 1
        assert _rows(ops, "SELECT t.id, t.name, (t).name FROM t") == 1  # real columns
    finally:
        allowed.dispose()


@pytest.mark.parametrize("sql", [
    "SELECT date_trunc('month', d) FROM days",
    "SELECT DATE_TRUNC('month', d) AS m FROM days",
    "SELECT count(*) FROM days WHERE date_trunc('year', d) IS NOT NULL"])
def test_postgres_user_function_named_like_a_built_in_sqlglot_renames(
        pg_functions, sql: str) -> None:  # noqa: ANN001
    """sqlglot parses date_trunc as TIMESTAMP_TRUNC; PostgreSQL calls public.date_trunc(text,
    date) for a date column (a better match than the built-in's timestamp): the name written
    in the text counts."""
    dbname, hits = pg_functions
    _refused_then_run_unguarded(pg_config("pgfn", dbname), sql,
                                "user-defined function public.date_trunc",
                                lambda: hits() == 0, lambda: hits() >= 1)


def test_postgres_allowed_functions_run_and_others_stay_refused(pg_functions) -> None:  # noqa: ANN001
    dbname, hits = pg_functions
    connection, ops = _operations(pg_config("pgfn", dbname, allowed_functions=["public.twice"]))
    try:
        assert _rows(ops, "SELECT twice(2), d FROM policy_free") == 1
        with pytest.raises(QueryRejectedError, match="log_hit"):
            _rows(ops, "SELECT twice(log_hit())")
        with pytest.raises(QueryRejectedError, match="through the view"):
            connection.check_relation("hit_view")  # row lookups and samples: the same rule
        assert hits() == 0
        # built-in and extension functions are not user-defined
        assert _rows(ops, "SELECT lower(name), now(), md5(name) FROM t") == 1
    finally:
        connection.dispose()


def test_postgres_annotation_does_not_sample_a_view_that_calls_a_user_function(
        pg_functions, tmp_path: Path) -> None:  # noqa: ANN001
    dbname, hits = pg_functions
    info = annotate_database(pg_config("pgfn", dbname), tmp_path).db_info
    assert hits() == 0
    names = {table.name for table in info.tables}
    assert {"hit_view", "outer_view", "t"} <= names
    assert not info.table("hit_view").sample_data_csv
    assert info.table("t").sample_data_csv


# -- MariaDB ----------------------------------------------------------------------------------

@contextmanager
def mariadb_probe_database(address: dict[str, Any], prefix: str, *statements: str
                           ) -> Iterator[tuple[str, Any, int, Callable[[], int]]]:
    """A throwaway database on the MariaDB server at ``address`` (the private one: the probes
    change a global) holding ``t (id, name)`` with one row, then
    ``statements`` (``{lowered}``: the global ``max_prepared_stmt_count`` minus one, what the
    probes' stored functions set it to: their side effect). Yields the database's name, the
    admin connection (in it), the global's value before, and a reader of it; drops the
    database and restores the global after."""
    dbname = f"{prefix}_{uuid.uuid4().hex[:8]}"
    admin = mysql_admin(address=address)
    with admin.cursor() as cursor:
        cursor.execute("SELECT @@GLOBAL.max_prepared_stmt_count")
        before = cursor.fetchone()[0]
        cursor.execute(f"CREATE DATABASE `{dbname}`")
    admin.select_db(dbname)

    def global_value() -> int:
        with admin.cursor() as cursor:
            cursor.execute("SELECT @@GLOBAL.max_prepared_stmt_count")
            return cursor.fetchone()[0]

    try:
        with admin.cursor() as cursor:
            for statement in ("CREATE TABLE t (id int PRIMARY KEY, name text)",
                              "INSERT INTO t VALUES (1, 'a')", *statements):
                cursor.execute(statement.format(lowered=before - 1))
        yield dbname, admin, before, global_value
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"SET GLOBAL max_prepared_stmt_count = {before}")
            cursor.execute(f"DROP DATABASE IF EXISTS `{dbname}`")
        admin.close()


@pytest.fixture
def mysql_functions(private_mariadb: Any) -> Iterator[tuple[str, Any, dict[str, Any]]]:
    with mariadb_probe_database(
            private_mariadb.address, "nl2sql_fn",
            "CREATE FUNCTION format_bytes(x int) RETURNS int DETERMINISTIC "
            "BEGIN SET GLOBAL max_prepared_stmt_count = {lowered}; RETURN x; END",
            "CREATE FUNCTION strpos(a text, b text) RETURNS int DETERMINISTIC "
            "BEGIN SET GLOBAL max_prepared_stmt_count = {lowered}; RETURN 1; END",
            "CREATE VIEW fb_view AS SELECT format_bytes(1) AS x",
            "CREATE VIEW outer_view AS SELECT * FROM fb_view") as (dbname, _admin, _before,
                                                                   global_value):
        yield dbname, global_value, private_mariadb.address


@pytest.mark.parametrize(("sql", "function"), [
    ("SELECT {db}.format_bytes(1)", "format_bytes"), ("SELECT format_bytes(1)", "format_bytes"),
    ("SELECT `{db}`.`format_bytes`(1) AS x", "format_bytes"),
    ("SELECT * FROM fb_view", "format_bytes"), ("SELECT x FROM {db}.outer_view", "format_bytes"),
    ("SELECT name FROM t WHERE id IN (SELECT format_bytes(1))", "format_bytes"),
    # sqlglot parses strpos (not a MariaDB built-in) as STR_POSITION; MariaDB calls the stored
    # function: the name written in the text is looked up
    ("SELECT strpos(name, 'a') FROM t", "strpos"), ("SELECT STRPOS('ab', 'b') AS p", "strpos")])
def test_mariadb_stored_function_is_refused_and_global_unchanged(mysql_functions,  # noqa: ANN001
                                                                 sql: str, function: str) -> None:
    dbname, global_value, address = mysql_functions
    before = global_value()
    _refused_then_run_unguarded(mysql_config("myfn", dbname, address=address),
                                sql.format(db=dbname),
                                f"user-defined function.*{function}",
                                lambda: global_value() == before,
                                lambda: global_value() == before - 1)


def test_mariadb_annotation_skips_the_views_and_goes_on(mysql_functions, tmp_path: Path,  # noqa: ANN001
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """A view calling the SET GLOBAL function is not sampled; one calling a function that
    writes a table (MariaDB cannot even describe it to a read-only session: error 1792) is
    left out with one line; the other tables are annotated."""
    dbname, global_value, address = mysql_functions
    run_mysql_script(dbname, "CREATE TABLE log (n int); CREATE FUNCTION ins() RETURNS int "
                             "BEGIN INSERT INTO log VALUES (1); RETURN 1; END; "
                             "CREATE VIEW ins_view AS SELECT ins() AS x, name FROM t",
                     address=address)
    before = global_value()
    info = annotate_database(mysql_config("myfn", dbname, address=address), tmp_path).db_info
    assert global_value() == before
    assert info.table("t").sample_data_csv and not info.table("fb_view").sample_data_csv
    assert info.table("ins_view") is None
    left_out = [r.getMessage() for r in caplog.records if "ins_view" in r.getMessage()]
    assert len(left_out) == 1 and "1792" in left_out[0] and "\n" not in left_out[0]
    assert any("no sample rows for fb_view" in r.getMessage() for r in caplog.records)


# -- the check itself ---------------------------------------------------------------------------

def test_qualified_calls_and_allow_list_forms() -> None:
    catalogue = UserFunctions.from_catalogue(
        [("s", "f"), ("other", "f"), ("s", "g")], [("s", "v", "s", "g")],
        [("s", "w", "s", "v")])
    tree = validate_read_only("SELECT f(1)", "postgres").expression
    with pytest.raises(QueryRejectedError):
        check_user_functions(tree, catalogue, ["s.f"], db_id="x")  # other.f is not listed
    check_user_functions(tree, catalogue, ["s.f", "other.f"], db_id="x")
    check_user_functions(tree, catalogue, ["F"], db_id="x")
    for sql in ("SELECT * FROM w", "SELECT * FROM s.v", "SELECT s.g()"):
        with pytest.raises(QueryRejectedError, match="s.g"):
            check_user_functions(validate_read_only(sql, "postgres").expression, catalogue,
                                 ["s.f"], db_id="x")
    strict = UserFunctions(qualified_calls_are_user=True)
    with pytest.raises(QueryRejectedError, match="db.anything"):
        check_user_functions(validate_read_only("SELECT db.anything(1)", "postgres").expression,
                             strict, [], db_id="x")
    check_user_functions(validate_read_only("SELECT upper('a')", "mysql").expression,
                         strict, [], db_id="x")
    check_user_functions(validate_read_only("SELECT db.anything(1)", "postgres").expression,
                         strict, ["db.anything"], db_id="x")


def test_duckdb_macros_and_views_that_call_them(tmp_path: Path) -> None:
    import duckdb
    from conftest import duckdb_config

    path = tmp_path / "m.duckdb"
    with duckdb.connect(str(path)) as setup:
        setup.execute("CREATE MACRO plus_one(a) AS a + 1; CREATE TABLE t AS SELECT 1 AS id; "
                      "CREATE VIEW v AS SELECT plus_one(id) AS x FROM t; "
                      "CREATE VIEW w AS SELECT * FROM v")
    for allowed, refused in (((), True), (("plus_one",), False)):
        connection, ops = _operations(duckdb_config("lake", path, allowed_functions=allowed))
        try:
            for sql in ("SELECT plus_one(1)", "SELECT main.plus_one(1)", "SELECT * FROM w"):
                if refused:  # a call: no DuckDB built-in (guard); the view: a macro (catalogue)
                    with pytest.raises(QueryRejectedError, match="plus_one"):
                        _rows(ops, sql)
                else:
                    assert _rows(ops, sql) == 1
            assert _rows(ops, "SELECT id + 1 FROM t") == 1  # built-ins and tables as before
        finally:
            connection.dispose()


@pytest.mark.spark
def test_spark_sql_function_body_is_not_run(request: pytest.FixtureRequest,
                                            tmp_path: Path) -> None:
    """A Spark SQL function's body is never seen by the guard: one that calls reflect() to set
    a JVM property is refused, called directly or through a view; with the guard off it runs."""
    from conftest import spark_db

    prop = f"nl2sql_udf_{uuid.uuid4().hex[:8]}"
    db = spark_db(request, "spfn", script=(
        "CREATE TABLE t (id INT);\nINSERT INTO t VALUES (1);\n"
        f"CREATE FUNCTION set_prop() RETURNS STRING RETURN "
        f"reflect('java.lang.System', 'setProperty', '{prop}', 'ran');\n"
        "CREATE VIEW prop_view AS SELECT set_prop() AS p, id FROM t"))
    probe = f"SELECT reflect('java.lang.System', 'getProperty', '{prop}')"
    connection, ops = _operations(db.config)
    try:
        for sql in ("SELECT set_prop()", "SELECT p FROM prop_view", "SELECT upper(set_prop())"):
            with pytest.raises(QueryRejectedError,  # the guard's word first, or the catalogue's
                               match="set_prop .*user-defined function|user-defined function .*set_prop"):
                _rows(ops, sql)
        assert db.text_rows(probe) == [["null"]]  # not set
        assert _rows(ops, "SELECT id FROM t") == 1
        _rows(ops, "SELECT set_prop()", validate=False)  # the engine alone runs the body
        assert db.text_rows(probe) == [["ran"]]
    finally:
        connection.dispose()


def test_a_catalogue_read_is_kept_per_version_and_read_once_by_concurrent_calls() -> None:
    """Concurrent first calls wait for one read; the read is kept while the version stays the
    same and read again, in the call, as soon as it moved (no background thread)."""
    import threading

    from nl2sql.db.catalogue_reads import CatalogueRead

    reads: list[int] = []
    first = threading.Event()

    def read(_conn: object) -> int:
        first.wait(5)  # hold the first read until every thread has asked
        reads.append(len(reads) + 1)
        return len(reads)

    kept = CatalogueRead(read)
    assert kept.known() is None
    answers: list[int] = []
    threads = [threading.Thread(target=lambda: answers.append(kept.get("v1")))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(0.1)
    first.set()
    for thread in threads:
        thread.join(5)
    assert answers == [1] * 8 and reads == [1]
    assert kept.get("v1") == 1 and reads == [1]  # same version: no read
    assert kept.get("v2") == 2 and kept.get("v2") == 2 and reads == [1, 2]  # moved: read now
