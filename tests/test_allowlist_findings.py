"""Issue 28, findings 1 and 3 and the state-changing lows, on the real engines with the guard on:
Spark's XML/Avro/Protobuf functions fetching files and URLs through their options, DuckDB's SQL
held in a string (serialized SQL, query(), a view in the file that calls one), and DuckDB's
functions that change the engine's state. Each as the audit wrote it and in variants; refused,
nothing fetched or run, and the engine alive after (the next query works). Each has its
control: with the guard off the engine does fetch or run it, so the tests can see a miss."""

from __future__ import annotations

import http.server
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from conftest import build_cache, duckdb_config, rows_of, spark_db
from nl2sql.db.base import create_connection, create_operations
from nl2sql.errors import QueryRejectedError
from nl2sql.mcp import build_server
from nl2sql.schema.models import DbInfo
from nl2sql.sql_guard import validate_read_only


# -- Spark: XML, Avro and Protobuf options that name files and URLs ---------------------------

class _XsdServer:
    """A local HTTP server handing out an XSD whose external entity names a local file; it
    records every request."""

    def __init__(self, secret_file: Path) -> None:
        self.requests: list[str] = []
        body = (f'<?xml version="1.0"?><!DOCTYPE s [<!ENTITY x SYSTEM "file://{secret_file}">]>'
                f'<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">&x;</xs:schema>'
                ).encode()
        requests = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/x.xsd"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def xsd_server(tmp_path: Path) -> Iterator[tuple[_XsdServer, str]]:
    secret = f"NL2SQL-SECRET-{uuid.uuid4().hex}"
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(secret)
    server = _XsdServer(secret_file)
    yield server, secret
    server.close()


def _spark_options_cases(url: str) -> list[str]:
    key = "rowValidationXSDPath"
    return [
        # as the audit wrote them
        f"SELECT from_xml('<a/>', 'b STRING', map('{key}', '{url}')) AS x",
        f"SELECT schema_of_xml('<a/>', map('{key}', '{url}')) AS x",
        # spellings of the function and of the key
        f"SELECT FROM_XML('<a/>', 'b STRING', MAP('{key.upper()}', '{url}')) AS x",
        f"SELECT `from_xml`('<a/>', 'b STRING', map('{key.lower()}', '{url}')) AS x",
        f"SELECT from_xml('<a/>', 'b STRING', map('rowTag', 'a', '{key}', '{url}')) AS x",
        f"SELECT from_xml('<a/>', 'b STRING', map('rowValidation\\u0058SDPath', '{url}')) AS x",
        f"SELECT from_xml('<a/>', 'b STRING', map('rowValidation' 'XSDPath', '{url}')) AS x",
        f"SELECT from_xml('<a/>', 'b STRING', map(concat('rowValidation', 'XSDPath'), "
        f"'{url}')) AS x",
        f"SELECT from_xml('<a/>', 'b STRING', map('{key}', '/etc/passwd')) AS x",
        # the options built some other way than map('key', 'value')
        f"SELECT from_xml('<a/>', 'b STRING', map_from_arrays(array('{key}'), array('{url}')))",
        f"SELECT from_xml('<a/>', 'b STRING', str_to_map('{key}={url}', ',', '=')) AS x",
        f"SELECT from_xml('<a/>', 'b STRING', from_json('{{\"{key}\": \"{url}\"}}', "
        f"'map<string,string>')) AS x",
        f"WITH o AS (SELECT map('{key}', '{url}') AS m) SELECT from_xml('<a/>', 'b STRING', m) "
        f"FROM o",
        f"SELECT from_xml(b, 'b STRING', m) FROM (SELECT '<a/>' AS b, map('{key}', '{url}') AS m)",
        f"SELECT schema_of_xml('<a/>', map_concat(map('rowTag', 'a'), map('{key}', '{url}')))",
        # other functions with options
        f"SELECT to_xml(named_struct('a', 1), map('{key}', '{url}')) AS x",
        f"SELECT from_json('{{}}', 'a INT', map('{key}', '{url}')) AS x",
        f"SELECT from_csv('1', 'a INT', map('{key}', '{url}')) AS x",
        "SELECT from_json('{}', 'a INT', options => map('mode', 'PERMISSIVE')) AS x",
        f"SELECT from_avro(unhex('00'), '{{\"type\": \"int\"}}', map('avroSchemaUrl', '{url}'))",
        f"SELECT schema_of_avro('{{\"type\": \"int\"}}', map('avroSchemaUrl', '{url}')) AS x",
        f"SELECT from_protobuf(unhex('00'), 'M', '{url}') AS x",
        "SELECT xpath('<a/>', 'a') AS x",
    ]


@pytest.mark.spark
def test_spark_options_that_fetch_files_or_urls_are_refused(request: pytest.FixtureRequest,
                                                            xsd_server: Any) -> None:
    server, secret = xsd_server
    db = spark_db(request, "xsd", script="CREATE TABLE t (b STRING);\n"
                                         "INSERT INTO t VALUES ('<a/>')",
                  query_timeout_seconds=60)
    connection = create_connection(db.config)
    ops = create_operations(connection, DbInfo(db_id="xsd", db_type="spark"))
    try:
        for sql in _spark_options_cases(server.url):
            with pytest.raises(QueryRejectedError) as caught:
                rows_of(ops, sql)
            message = str(caught.value)
            assert "\n" not in message and secret not in message, (sql, message)
            assert rows_of(ops, "SELECT count(*) FROM t") == [(1,)]  # the engine is alive
        assert server.requests == []
        # options that only shape the parsing pass and run
        assert rows_of(ops, "SELECT from_xml('<r><a>1</a></r>', 'a INT', map('rowTag', 'r', "
                          "'mode', 'PERMISSIVE')).a AS a") == [(1,)]
        assert rows_of(ops, "SELECT from_json('{\"a\": \"1/2/2024\"}', 'a DATE', "
                          "map('dateFormat', 'M/d/yyyy')).a AS a")[0][0].year == 2024
        # the control: without the guard, Spark fetches the XSD (the audit's finding)
        try:
            rows_of(ops, _spark_options_cases(server.url)[0], validate=False)
        except Exception:  # noqa: BLE001 - the XSD itself may fail to parse
            pass
        assert server.requests, "the control did not reach the server"
        assert rows_of(ops, "SELECT count(*) FROM t") == [(1,)]
    finally:
        connection.dispose()


@pytest.mark.spark
def test_spark_variable_substitution_is_refused_and_off(request: pytest.FixtureRequest) -> None:
    """Spark replaced ${env:HOME}, ${system:user.name} and ${spark.conf} in a query's text,
    strings and comments included: the guard refuses ${, and the session turns it off."""
    db = spark_db(request, "subst", script="CREATE TABLE t (a INT);\nINSERT INTO t VALUES (1)")
    connection = create_connection(db.config)
    ops = create_operations(connection, DbInfo(db_id="subst", db_type="spark"))
    try:
        for sql in ("SELECT '${env:HOME}' AS x", "SELECT '${system:user.name}' AS x",
                    "SELECT '${spark.app.name}' AS x", "SELECT a FROM t -- ${env:PATH}",
                    "SELECT a FROM t WHERE '${spark.sql.warehouse.dir}' <> ''"):
            with pytest.raises(QueryRejectedError, match="replaces"):
                rows_of(ops, sql)
        assert rows_of(ops, "SELECT '$' || '{env:HOME}' AS x") == [("${env:HOME}",)]
        # the engine layer alone: the session does not substitute
        assert rows_of(ops, "SELECT '${env:HOME}' AS x", validate=False) == [("${env:HOME}",)]
        # a session with Spark's default does substitute (the audit's route)
        assert db.text_rows("SELECT '${spark.app.name}' AS x") == [["nl2sql-tests"]]
    finally:
        connection.dispose()


@pytest.mark.spark
def test_spark_global_temp_views_of_other_sessions_are_refused(
        request: pytest.FixtureRequest) -> None:
    """Another session of the server (another application) creates a global temporary view:
    every query spelling that reads it is refused; with the guard off the engine reads it."""
    db = spark_db(request, "gtemp", script="CREATE TABLE t (a INT);\nINSERT INTO t VALUES (1)")
    other = request.getfixturevalue("spark_server").session()
    view, secret = f"shared_{uuid.uuid4().hex[:8]}", f"pw{uuid.uuid4().hex[:8]}x"
    other.sql(f"CREATE GLOBAL TEMP VIEW {view} AS SELECT '{secret}' AS password").collect()
    connection = create_connection(db.config)
    ops = create_operations(connection, DbInfo(db_id="gtemp", db_type="spark"))
    try:
        for sql in (f"SELECT * FROM global_temp.{view}", f"SELECT * FROM GLOBAL_TEMP.{view}",
                    f"SELECT * FROM `global_temp`.`{view}`",
                    f"SELECT * FROM (SELECT password FROM global_temp.{view}) AS r",
                    f"WITH s AS (SELECT * FROM global_temp.{view}) SELECT * FROM s",
                    f"SELECT a FROM t WHERE a IN (SELECT length(password) FROM global_temp.{view})",
                    f"SELECT * FROM t JOIN global_temp.{view} ON true",
                    f"SELECT * FROM t, global_temp.{view} AS v"):
            with pytest.raises(QueryRejectedError, match="global temporary views") as caught:
                rows_of(ops, sql)
            assert secret not in str(caught.value) and "\n" not in str(caught.value), sql
        assert rows_of(ops, "SELECT count(*) FROM t") == [(1,)]  # the database's own tables
        # the engine layer alone refuses it too (the server's name for the database, read
        # from spark.sql.globalTempDatabase), for a query the guard would have let through
        import sqlglot

        from nl2sql.sql_guard import ValidatedQuery
        text = f"SELECT * FROM global_temp.{view}"
        admission = connection.query_admission(ValidatedQuery(
            text, sqlglot.parse_one(text, read="spark"), False, "select"))
        with pytest.raises(QueryRejectedError, match="global temporary views"):
            admission(connection.read_user_functions())
        # the control: the engine alone reads another session's view
        assert rows_of(ops, f"SELECT * FROM global_temp.{view}", validate=False) == [(secret,)]
        # a quoted one-part name with a dot is a table of the current database, no such view
        with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
            rows_of(ops, f"SELECT * FROM `global_temp.{view}`")
        # and no view of the configured database can read it: Spark refuses to create one
        with pytest.raises(Exception, match="INVALID_TEMP_OBJ_REFERENCE"):
            other.sql(f"CREATE VIEW {db.dbname}.over_temp AS SELECT * FROM "
                      f"global_temp.{view}").collect()
    finally:
        connection.dispose()
        other.sql(f"DROP VIEW IF EXISTS global_temp.{view}").collect()
        other.stop()


# -- DuckDB: SQL in a string, views and macros of the file, state changes ----------------------

@pytest.fixture
def duckdb_file(tmp_path: Path) -> Path:
    import duckdb

    path = tmp_path / "lake.duckdb"
    with duckdb.connect(str(path)) as setup:
        setup.execute(
            "CREATE TABLE t AS SELECT 1 AS id; CREATE MACRO answer() AS 42; "
            "CREATE VIEW through_serialized AS SELECT * FROM json_execute_serialized_sql("
            "json_serialize_sql('SELECT 42 AS x')); "
            "CREATE VIEW through_query AS SELECT * FROM query('SELECT 42 AS x'); "
            "CREATE VIEW over_view AS SELECT * FROM through_query; "
            "CREATE VIEW plain AS SELECT id FROM t")
    return path


def _duckdb_cases(path: Path) -> list[str]:
    serialized = "json_serialize_sql('SELECT answer() AS x')"
    return [
        # as the audit wrote them
        f"SELECT * FROM json_execute_serialized_sql({serialized})",
        f"SELECT json_execute_serialized_sql({serialized})",
        "SELECT * FROM query('SELECT answer()')",
        f"SELECT * FROM read_blob('{path}')",
        "SELECT * FROM json_execute_serialized_sql(json_serialize_sql("
        "'SELECT length(repeat(''x'', 2000000000))'))",
        # other spellings and routes
        f'SELECT * FROM "json_execute_serialized_sql"({serialized})',
        f"SELECT * FROM JSON_EXECUTE_SERIALIZED_SQL({serialized})",
        f"SELECT * FROM main.json_execute_serialized_sql({serialized})",
        f"SELECT * FROM system.main.json_execute_serialized_sql({serialized})",
        f"SELECT {serialized}.json_execute_serialized_sql()",
        f"SELECT * FROM json_execute_serialized_sql((SELECT {serialized}))",
        f"WITH s AS (SELECT {serialized} AS j) SELECT * FROM json_execute_serialized_sql("
        f"(SELECT j FROM s))",
        "SELECT * FROM query_table('t')",
        "SELECT * FROM query_table(['t', 't'])",
        "SELECT json_deserialize_sql(json_serialize_sql('SELECT 1'))",
        f"SELECT * FROM read_text('{path}')",
        f"SELECT '{path}'.read_blob()",
        "SELECT * FROM through_serialized",
        "SELECT * FROM through_query",
        "SELECT * FROM over_view",
        "SELECT * FROM main.through_query",
        f"PRAGMA json_execute_serialized_sql({serialized})",
        "SELECT answer()",
        # state: logs, settings, checkpoints, secrets
        "SELECT * FROM truncate_duckdb_logs()",
        "SELECT * FROM enable_logging()",
        "SELECT * FROM checkpoint()",
        "SELECT write_log('x')",
        "SELECT * FROM duckdb_logs",
        "SELECT * FROM duckdb_secrets()",
        "SELECT * FROM which_secret('s3://x', 's3')",
        "SELECT * FROM duckdb_settings()",
        "SELECT * FROM pg_catalog.pg_settings",
        "SELECT current_setting('http_proxy_password')",
        "SELECT current_setting('pass' || 'word')",
        "SELECT getvariable('x')",
        "SELECT sleep_ms(1000)",
        "SELECT list_aggregate([1], 'query')",
        # the method form x.f('name') passes x as argument 1: the name is the first written
        "SELECT [1].list_aggregate('query')",
        "SELECT [1, 2].list_aggr('query_table')",
        "SELECT ([1]).array_aggregate('query')",
        "SELECT [1].\"aggregate\"('que' || 'ry')",
        "SELECT l.array_aggr('query') FROM (SELECT [1] AS l)",
        "SELECT main.list_aggregate('query') FROM (SELECT [1] AS main)",
        "SELECT * FROM histogram_values('pg_settings', value)",  # query_table of a string
        "SELECT * FROM histogram(pg_settings, value)",
    ]


def test_duckdb_sql_in_a_string_and_state_changes_are_refused(duckdb_file: Path) -> None:
    config = duckdb_config("lake", duckdb_file, query_timeout_seconds=5)
    connection = create_connection(config)
    ops = create_operations(connection, DbInfo(db_id="lake", db_type="duckdb"))
    try:
        for sql in _duckdb_cases(duckdb_file):
            with pytest.raises(QueryRejectedError) as caught:
                rows_of(ops, sql)
            assert "\n" not in str(caught.value), sql
            assert rows_of(ops, "SELECT id FROM t") == [(1,)], sql  # the engine is alive
        assert rows_of(ops, "SELECT * FROM plain") == [(1,)]  # a view of built-ins still reads
        # the control: without the guard, serialized SQL runs the macro the guard refuses
        assert rows_of(ops, _duckdb_cases(duckdb_file)[0], validate=False) == [(42,)]
        assert rows_of(ops, "SELECT id FROM t") == [(1,)]
    finally:
        connection.dispose()


def test_a_duckdb_view_of_an_unlisted_function_is_read_when_dbs_yaml_allows_it(
        duckdb_file: Path) -> None:
    """allowed_functions adds to the allowlist for views too, never past the deny list."""
    import duckdb

    with duckdb.connect(str(duckdb_file)) as setup:
        setup.execute("CREATE VIEW engine_info AS SELECT count(*) AS n FROM duckdb_memory()")
    for allowed, refused in (((), True), (("duckdb_memory", "query"), False)):
        config = duckdb_config("lake", duckdb_file, allowed_functions=list(allowed))
        connection = create_connection(config)
        ops = create_operations(connection, DbInfo(db_id="lake", db_type="duckdb"))
        try:
            if refused:
                with pytest.raises(QueryRejectedError, match="engine_info calls duckdb_memory"):
                    rows_of(ops, "SELECT * FROM engine_info")
            else:
                assert rows_of(ops, "SELECT * FROM engine_info")[0][0] > 0
            with pytest.raises(QueryRejectedError, match="through_query calls query"):
                rows_of(ops, "SELECT * FROM through_query")
        finally:
            connection.dispose()


#: list_aggregate and its aliases as a query may write them; {f} is the aggregate it names.
_NAMED_AGGREGATE_FORMS = [
    "SELECT list_aggregate([1, 5], '{f}') AS x",
    "SELECT [1, 5].list_aggregate('{f}') AS x",
    "SELECT ([1, 5]).list_aggr('{f}') AS x",
    "SELECT [1, 5] . \"ARRAY_AGGREGATE\" ('{f}') AS x",
    "SELECT l.aggregate('{f}') AS x FROM (SELECT [1, 5] AS l)",
    "SELECT s.l.array_aggr('{f}') AS x FROM (SELECT [1, 5] AS l) AS s",
    "SELECT main.list_aggregate([1, 5], '{f}') AS x",
    "SELECT system.main.list_aggregate([1, 5], '{f}') AS x",
]


@pytest.mark.parametrize("form", _NAMED_AGGREGATE_FORMS)
def test_duckdb_checks_the_aggregate_the_engine_calls_in_every_form(form: str) -> None:
    """Whatever the form (function, method on a value or a column, schema-qualified), the
    engine calls the aggregate named where the guard reads the name: with max() taken off the
    reviewed list, the guard refuses each form that makes DuckDB call max()."""
    import dataclasses

    import duckdb
    import sqlglot

    from nl2sql.sql_guard import allowlist
    from nl2sql.sql_guard.duckdb_functions import ALLOWLIST

    without_max = dataclasses.replace(ALLOWLIST, admitted=ALLOWLIST.admitted - {"max"})
    engine = sqlglot.Dialect.get_or_raise("duckdb")

    def refusals(text: str) -> list[str]:
        return [message for _, message in allowlist.problems(
            without_max, sqlglot.parse_one(text, read="duckdb"), engine.tokenize(text), text,
            frozenset())]

    with duckdb.connect(config={"autoload_known_extensions": False}) as connection:
        assert connection.execute(form.format(f="max")).fetchall() == [(5,)]
        assert connection.execute(form.format(f="min")).fetchall() == [(1,)]
    assert refusals(form.format(f="max")), form
    if not form.startswith("SELECT main.") and not form.startswith("SELECT system."):
        assert not refusals(form.format(f="min")), form
        validate_read_only(form.format(f="min"), "duckdb")  # the real list admits it


async def test_duckdb_serialized_sql_is_a_tool_error_over_mcp(duckdb_file: Path,
                                                              make_registry: Any) -> None:
    config = duckdb_config("lake", duckdb_file)
    registry = make_registry(config)
    build_cache(config, registry.data_dir)
    server = build_server(registry.config_path, workspace=registry.workspace)
    async with Client(server) as client:
        result = await client.call_tool("db_execute_sql", {
            "db_id": "lake", "query": _duckdb_cases(duckdb_file)[0]})
        assert result.is_error and "json_execute_serialized_sql" in result.content[0].text
        result = await client.call_tool("db_execute_sql", {
            "db_id": "lake", "query": "SELECT * FROM through_serialized"})
        assert result.is_error and "through_serialized" in result.content[0].text
        result = await client.call_tool("db_execute_sql", {"db_id": "lake",
                                                           "query": "SELECT id FROM t"})
        assert not result.is_error
