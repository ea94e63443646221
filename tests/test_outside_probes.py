"""Outside probes (issues 28 and 31): queries written by an auditor, not taken from the other
guard tests, run through every layer on the real engines with a privileged login (the
PostgreSQL superuser, MariaDB's root), a DuckDB file and a Spark Connect server. Each must be
refused in one sentence with no secret in it, and the next query must still answer; a probe
that got through when it was written is named in a comment with what it leaked.

The corpus covers other credential catalogues (statistics that sample a credential table's
values, per-role and per-database settings, other sessions' SQL in sys views), other setting
names, other spellings of refused functions and option maps, and XML input that names external
entities (Spark's parser refuses DTDs: those are kept as probes that must stay harmless)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from agent_scripts import Script, final, tool
from mcp import Client

import nl2sql
from conftest import (build_cache, duckdb_config, mysql_admin, mysql_config, pg_config, rows_of,
                      spark_db, sqlite_config)
from nl2sql.cli.eval import main as eval_main
from nl2sql.config.registry import DbConnectionConfig
from nl2sql.db.base import create_connection, create_operations
from nl2sql.mcp import build_server
from nl2sql.operations.ops_context import OpsContext
from nl2sql.errors import QueryExecutionError, QueryRejectedError
from nl2sql.schema.models import DbInfo


@contextmanager
def _operations(config: DbConnectionConfig) -> Iterator[Any]:
    """The query operations of ``config`` (every layer), disposed after."""
    connection = create_connection(config)
    try:
        yield create_operations(connection, DbInfo(db_id=config.db_id,
                                                   db_type=config.type.value))
    finally:
        connection.dispose()


def _probe(ops: Any, cases: list[str], secret: str, alive: str, *,
           engine_refuses: bool = False) -> list[str]:
    """The cases that were not refused (or leaked ``secret`` in their message); after each,
    ``alive`` must still answer one row. ``engine_refuses``: a refusal by the engine layer
    (SQLite's authorizer) counts as refused too."""
    through = []
    for sql in cases:
        try:
            rows = rows_of(ops, sql)
        except QueryRejectedError as refused:
            message = str(refused)
            if secret in message or "\n" in message:
                through.append(f"{sql}  (message: {message})")
        except QueryExecutionError as failed:  # the guard let it reach the engine
            if not engine_refuses or secret in str(failed):
                through.append(f"{sql}  (engine: {str(failed)[:80]})")
        else:
            through.append(f"{sql}  ({'LEAKED' if secret in str(rows) else 'ran'})")
        assert len(rows_of(ops, alive)) == 1, sql
    return through


async def _through_the_faces(config: DbConnectionConfig, registry: Any, probes: list[str],
                             secret: str, tmp_path: Path, alive: str) -> None:
    """``probes`` through an MCP client session, ``nl2sql.ask()`` with a model that sends each
    as its query, and ``nl2sql-eval --predictions``: each refused, the secret nowhere (tool
    results, what the model is sent, the evaluation's report), the database answering after."""
    build_cache(config, registry.data_dir)
    db_id = config.db_id
    async with Client(build_server(registry.config_path, workspace=registry.workspace)) as client:
        for sql in probes:
            result = await client.call_tool("db_execute_sql", {"db_id": db_id, "query": sql})
            text = result.content[0].text
            assert result.is_error and secret not in text, (sql, text)
        after = await client.call_tool("db_execute_sql", {"db_id": db_id, "query": alive})
        assert not after.is_error, after.content[0].text
    ops = OpsContext(registry)
    try:
        for start in range(0, len(probes), 4):  # an ask allows 5 SQL attempts
            chunk = probes[start:start + 4]
            script = Script([tool("db_execute_sql", query=sql) for sql in chunk]
                            + [final(alive)])
            answer = nl2sql.ask("How many rows has t?", db_id=db_id, model=script.model,
                                config=ops)
            assert answer.sql == alive and len(script.requests) == len(chunk) + 1
            assert all("not allowed" in script.feedback(n) or "may not" in script.feedback(n)
                       or "may read only" in script.feedback(n)
                       for n in range(1, len(chunk) + 1)), script.requests
            assert secret not in str(script.requests) and secret not in str(answer.df)
    finally:
        ops.close()
    questions, predictions = tmp_path / "questions.jsonl", tmp_path / "predictions.jsonl"
    questions.write_text("".join(json.dumps({"id": str(n), "db_id": db_id, "question": "q?",
                                             "query": alive}) + "\n"
                                 for n in range(len(probes))))
    predictions.write_text("".join(json.dumps({"id": str(n), "sql": sql}) + "\n"
                                   for n, sql in enumerate(probes)))
    out = tmp_path / "eval"
    eval_main([str(questions), "--predictions", str(predictions), "--out", str(out),
               "--config", str(registry.config_path), "--no-context"])
    report = json.loads((out / "report.json").read_text())
    assert report["correct"] == 0 and report["broken_gold"] == 0, report
    for written in out.iterdir():
        assert secret not in written.read_text(errors="replace"), written


# -- PostgreSQL, as the superuser ----------------------------------------------------------------

PG_PROBES = [
    # statistics sample a credential catalogue's values (ANALYZE pg_authid / pg_subscription):
    # got through, the SCRAM verifiers and the subscription's connection string
    "SELECT histogram_bounds::text FROM pg_stats WHERE tablename = 'pg_authid'",
    "SELECT most_common_vals::text, histogram_bounds::text FROM pg_catalog.pg_stats "
    "WHERE tablename = 'pg_subscription'",
    "SELECT * FROM \"pg_stats\" WHERE attname = 'subconninfo'",
    "SELECT stavalues1::text FROM pg_statistic",
    "SELECT * FROM pg_stats_ext",
    "SELECT * FROM pg_stats_ext_exprs",
    "SELECT * FROM pg_statistic_ext_data",
    # per-role and per-database settings (pg_db_role_setting is refused; these are its views)
    "SELECT rolconfig::text FROM pg_roles",
    "SELECT useconfig::text FROM pg_user",
    "SELECT r.rolconfig FROM pg_catalog.pg_roles r",
    # settings named like credentials, in other words than the refused ones
    "SELECT current_setting('nl2sql_probe.pwd')",
    "SELECT current_setting('nl2sql_probe.pass', true)",
    "SELECT current_setting('NL2SQL_PROBE.DB_PASS')",
    "SELECT current_setting('nl2sql_probe.dsn')",
    "SELECT current_setting('nl2sql_probe.jwt')",
    "SELECT current_setting('nl2sql_probe.creds')",
    "SELECT current_setting('nl2sql_probe.private_pem')",
    "SELECT current_setting('nl2sql_probe.api_key')",
    "SELECT pg_catalog.current_setting('nl2sql_probe.secret')",
    "SELECT * FROM current_setting('nl2sql_probe.token') AS s",
    # other routes to refused catalogues and functions
    "SELECT table_to_xml('pg_authid', true, true, '')",
    "SELECT table_to_xml('pg_catalog.pg_subscription'::regclass, true, true, '')",
    "SELECT query_to_xml('SELECT 1', true, true, '')",
    "SELECT * FROM ts_stat('SELECT to_tsvector(rolpassword) FROM pg_authid')",
    "SELECT pg_authid FROM pg_authid",
    "SELECT * FROM ONLY pg_authid",
    "SELECT * FROM pg_subscription TABLESAMPLE SYSTEM (100)",
    "SELECT * FROM postgres.pg_catalog.pg_shadow",
    "SELECT * FROM pg_show_all_file_settings()",
    "SELECT * FROM pg_hba_file_rules()",
    "SELECT pg_read_file('postgresql.auto.conf')",
    "SELECT convert_from(pg_read_binary_file('postgresql.auto.conf'), 'UTF8')",
    "SELECT * FROM pg_ls_dir('.')",
    "SELECT pg_stat_file('postgresql.conf')",
    "SELECT * FROM pg_ls_logdir()",
    "SELECT lo_import('/etc/hostname')",
    "SELECT lo_export(1, '/tmp/nl2sql_probe')",
    "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(a int)",
    "SELECT set_config('role', 'postgres', true)",
    "SELECT pg_reload_conf()",
    "EXPLAIN ANALYSE SELECT 1",
    "EXPLAIN (ANALYSE) SELECT 1",
    "EXPLAIN (FORMAT JSON, ANALYZE on) SELECT 1",
]


@pytest.fixture
def pg_probe_secrets(pg_database: Any, pg_server: str) -> Iterator[tuple[str, str]]:
    """A database whose cluster holds the secret in two roles' passwords, two subscriptions'
    connection strings (each catalogue analysed, so its statistics sample them), a role's and the
    database's own settings; all dropped after."""
    dbname = pg_database(script="CREATE TABLE t (id int); INSERT INTO t VALUES (1);")
    secret, suffix = f"pw{uuid.uuid4().hex}", uuid.uuid4().hex[:8]
    roles = [f"nl2sql_probe_{suffix}_{n}" for n in range(2)]
    subscriptions = [f"nl2sql_probe_sub_{suffix}_{n}" for n in range(2)]
    dsn = pg_server.replace("dbname=postgres", f"dbname={dbname}")
    with psycopg.connect(dsn, autocommit=True) as admin:
        for n, role in enumerate(roles):
            admin.execute(f"CREATE ROLE {role} PASSWORD '{secret}{n}'")
        admin.execute(f"ALTER ROLE {roles[0]} SET nl2sql_probe.api_pwd = '{secret}'")
        for name in ("pwd", "pass", "db_pass", "dsn", "jwt", "creds", "private_pem", "api_key",
                     "secret", "token"):
            admin.execute(f"ALTER DATABASE {dbname} SET nl2sql_probe.{name} = '{secret}'")
        for n, subscription in enumerate(subscriptions):
            admin.execute(f"CREATE SUBSCRIPTION {subscription} CONNECTION 'host=127.0.0.1 "
                          f"dbname=nowhere{n} user=nobody password={secret}' PUBLICATION p "
                          f"WITH (connect = false)")
        admin.execute("ANALYZE pg_authid")
        admin.execute("ANALYZE pg_subscription")
    try:
        yield dbname, secret
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            for subscription in subscriptions:
                admin.execute(f"ALTER SUBSCRIPTION {subscription} SET (slot_name = NONE)")
                admin.execute(f"DROP SUBSCRIPTION {subscription}")
            for role in roles:
                admin.execute(f"DROP ROLE {role}")
            admin.execute("ANALYZE pg_authid")
            admin.execute("ANALYZE pg_subscription")


def test_postgres_outside_probes_as_the_superuser(pg_probe_secrets: tuple[str, str]) -> None:
    dbname, secret = pg_probe_secrets
    with _operations(pg_config("pg", dbname)) as ops:
        through = _probe(ops, PG_PROBES, secret, "SELECT count(*) FROM t")
        assert through == [], "\n".join(through)
        # the controls: the engine alone hands the secrets out
        assert "SCRAM-SHA-256$" in str(rows_of(ops, PG_PROBES[0], validate=False))  # hashes
        assert secret in str(rows_of(ops, PG_PROBES[1], validate=False))
        assert secret in str(rows_of(ops, "SELECT rolconfig::text FROM pg_roles",
                                   validate=False))
        assert secret in str(rows_of(ops, "SELECT current_setting('nl2sql_probe.pwd')",
                                   validate=False))
        # what a question about the data needs still runs
        assert rows_of(ops, "SELECT current_setting('TimeZone') IS NOT NULL AS tz") == [(True,)]
        assert rows_of(ops, "SELECT current_user IS NOT NULL AS u") == [(True,)]


def test_postgres_annotation_samples_no_credential(pg_probe_secrets: tuple[str, str],
                                                    pg_server: str, make_registry: Any) -> None:
    """annotate-schema samples rows and screens enum values of every table and view: views in
    the user's schema over the credential catalogues (and the catalogue's statistics, role
    settings) are neither sampled nor screened, so no secret reaches the cached schema that
    db_show_schema shows to every client."""
    from nl2sql.annotation.pipeline import annotate_database

    dbname, secret = pg_probe_secrets
    dsn = pg_server.replace("dbname=postgres", f"dbname={dbname}")
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("CREATE VIEW subs AS SELECT subname, subconninfo FROM pg_subscription")
        admin.execute("CREATE VIEW sub_stats AS SELECT attname, most_common_vals::text AS v, "
                      "histogram_bounds::text AS h FROM pg_stats "
                      "WHERE tablename = 'pg_subscription'")
        admin.execute("CREATE VIEW role_settings AS SELECT rolname, rolconfig::text AS c "
                      "FROM pg_roles WHERE rolconfig IS NOT NULL")
    config = pg_config("pg", dbname)
    registry = make_registry(config)
    annotate_database(registry.get("pg"), registry.data_dir)
    written = [p for p in registry.data_dir.rglob("*") if p.is_file()]
    assert "role_settings" in "".join(p.read_text(errors="replace") for p in written)
    for path in written:
        assert secret not in path.read_text(errors="replace"), path


async def test_postgres_probes_through_the_faces(pg_probe_secrets: tuple[str, str],
                                                 make_registry: Any, tmp_path: Path) -> None:
    dbname, secret = pg_probe_secrets
    config = pg_config("pg", dbname)
    probes = [PG_PROBES[n] for n in (1, 3, 7, 10, 12, 13)]
    await _through_the_faces(config, make_registry(config), probes, secret, tmp_path,
                             "SELECT count(*) AS n FROM t")


# -- MariaDB, as root ---------------------------------------------------------------------------

MYSQL_PROBES = [
    # engine-independent statistics keep each column's smallest and largest value: after an
    # ANALYZE TABLE mysql.servers (PERSISTENT FOR ALL, or any ANALYZE with use_stat_tables), the
    # federated server's password. Got through.
    "SELECT min_value, max_value FROM mysql.column_stats WHERE table_name = 'servers'",
    "SELECT * FROM `mysql`.`COLUMN_STATS`",
    "SELECT (SELECT max(max_value) FROM mysql.column_stats) AS v",
    # other sessions' SQL: sys views over performance_schema's statements and the query cache
    "SELECT * FROM sys.schema_table_lock_waits",
    "SELECT waiting_query FROM sys.x$schema_table_lock_waits",
    "SELECT * FROM information_schema.QUERY_CACHE_INFO",
    # spellings of refused tables
    "SELECT * FROM `mysql`.`user`",
    "SELECT * FROM mysql . global_priv",
    "SELECT * FROM MYSQL.Servers",
    "SELECT * FROM information_schema . PROCESSLIST",
    "SELECT * FROM `information_schema`.`processlist`",
    "SELECT * FROM performance_schema.events_statements_history_long",
    "SELECT * FROM sys.x$statement_analysis",
    "SELECT LOAD_FILE('/etc/hostname')",
    "SELECT `load_file`('/etc/hostname')",
    "SELECT GET_LOCK('nl2sql_probe', 0)",
    "SELECT RELEASE_ALL_LOCKS()",
    "SELECT MASTER_GTID_WAIT('0-1-1', 0)",
    "SELECT BENCHMARK(1000, MD5('a'))",
    "SELECT @x := 1",
    "SELECT NEXTVAL(s)",
    "SELECT * FROM t FOR UPDATE",
    "SELECT * FROM t LOCK IN SHARE MODE",
]


@pytest.fixture
def mysql_probe_secrets(private_mariadb: Any) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """A database and a federated server whose password the server's statistics then hold
    (ANALYZE TABLE mysql.servers); the server, its statistics and the database dropped after.
    On the private server: mysql.servers' statistics are server-wide, and a concurrent run
    deleting them after its own test would take this run's control away."""
    suffix = uuid.uuid4().hex[:8]
    dbname, server, secret = f"nl2sql_probe_{suffix}", f"nl2sql_probe_{suffix}", f"pw{suffix}x"
    address = private_mariadb.address
    admin = mysql_admin(address=address)
    try:
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE `{dbname}`")
            cursor.execute(f"CREATE TABLE `{dbname}`.t (id int)")
            cursor.execute(f"INSERT INTO `{dbname}`.t VALUES (1)")
            cursor.execute(f"CREATE SEQUENCE `{dbname}`.s")
            cursor.execute(f"CREATE SERVER {server} FOREIGN DATA WRAPPER mysql OPTIONS "
                           f"(HOST '127.0.0.1', DATABASE 'nowhere', USER 'nobody', "
                           f"PASSWORD '{secret}')")
            cursor.execute("ANALYZE TABLE mysql.servers PERSISTENT FOR ALL")
            cursor.fetchall()
        yield dbname, secret, address
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP SERVER IF EXISTS {server}")
            for table in ("column_stats", "table_stats", "index_stats"):
                cursor.execute(f"DELETE FROM mysql.{table} WHERE db_name = 'mysql' "
                               f"AND table_name = 'servers'")
            cursor.execute(f"DROP DATABASE IF EXISTS `{dbname}`")
        admin.close()


def test_mysql_outside_probes_as_root(mysql_probe_secrets: tuple[str, str, dict[str, Any]]
                                      ) -> None:
    dbname, secret, address = mysql_probe_secrets
    with _operations(mysql_config("my", dbname, address=address)) as ops:
        through = _probe(ops, MYSQL_PROBES, secret, "SELECT count(*) FROM t")
        assert through == [], "\n".join(through)
        # the control: root's engine alone hands the password out through the statistics
        assert secret in str(rows_of(ops, MYSQL_PROBES[0], validate=False))


async def test_mysql_probes_through_the_faces(
        mysql_probe_secrets: tuple[str, str, dict[str, Any]], make_registry: Any,
        tmp_path: Path) -> None:
    dbname, secret, address = mysql_probe_secrets
    config = mysql_config("my", dbname, address=address)
    await _through_the_faces(config, make_registry(config), MYSQL_PROBES[:3], secret, tmp_path,
                             "SELECT count(*) AS n FROM t")


# -- SQLite ------------------------------------------------------------------------------------

SQLITE_PROBES = [
    "SELECT hex(fts3_tokenizer('simple'))",  # the tokenizer's address: an ASLR leak
    "SELECT fts3_tokenizer('simple', x'4141414141414141')",
    "SELECT * FROM sqlite_dbpage('main')",
    "SELECT load_extension('/tmp/nl2sql_probe.so')",
    "SELECT readfile('/etc/hostname')",
    "SELECT writefile('/tmp/nl2sql_probe', 'y')",
    "SELECT * FROM fsdir('/etc')",
    "SELECT * FROM zipfile('/tmp/nl2sql_probe.zip')",
    "SELECT * FROM sqlite_stmt",
    "SELECT * FROM pragma_wal_checkpoint",
    "SELECT * FROM \"pragma_wal_checkpoint\"('TRUNCATE')",
    "SELECT * FROM main.pragma_optimize(0x10002)",
    "SELECT * FROM pragma_shrink_memory",
    "SELECT * FROM pragma_incremental_vacuum",
    "SELECT * FROM pragma_journal_mode('wal')",
    "SELECT * FROM pragma_query_only(0)",
    "SELECT * FROM pragma_writable_schema(1)",
    "SELECT * FROM pragma_cache_size(1000000000)",
    "SELECT * FROM pragma_hard_heap_limit(1)",
    "SELECT * FROM pragma_mmap_size(1000000000)",
    "SELECT * FROM pragma_busy_timeout(100000)",
    "SELECT optimize(f) FROM f",
    "ATTACH DATABASE '/tmp/nl2sql_probe.db' AS x",
]


def test_sqlite_outside_probes(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "probe.sqlite"
    with sqlite3.connect(path) as setup:
        setup.executescript("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);"
                            "CREATE VIRTUAL TABLE f USING fts4(a); INSERT INTO f VALUES ('x');")
    state = ("SELECT (SELECT cache_size FROM pragma_cache_size), (SELECT journal_mode FROM "
             "pragma_journal_mode), (SELECT timeout FROM pragma_busy_timeout)")
    with _operations(sqlite_config("lite", path)) as ops:
        before = rows_of(ops, state)
        through = _probe(ops, SQLITE_PROBES, "NL2SQL-NO-SECRET", "SELECT id FROM t",
                         engine_refuses=True)
        assert through == [], "\n".join(through)
        assert rows_of(ops, state) == before  # no setting changed
        assert not Path("/tmp/nl2sql_probe").exists()


# -- DuckDB ------------------------------------------------------------------------------------

def _duckdb_probes(path: Path) -> list[str]:
    serialized = "json_serialize_sql('SELECT 42 AS x')"
    return [
        "SELECT * FROM duckdb_secrets(redact = false)",
        "SELECT * FROM (FROM duckdb_secrets())",
        "FROM which_secret('s3://bucket/x', 's3')",
        "SELECT * FROM duckdb_settings() WHERE name = 'memory_limit'",
        "SELECT current_setting('s3_secret_access_key')",
        "SELECT current_setting('S3_Session_Token')",
        "SELECT current_setting('azure_storage_connection_string')",
        "SELECT current_setting('hf_token')",
        "SELECT current_setting(lower('PASSWORD'))",
        "SELECT * FROM memory.main.query('SELECT 42')",
        "SELECT * FROM system.query('SELECT 42')",
        "SELECT ('SELECT 42').query()",
        "SELECT * FROM query(sql := 'SELECT 42')",
        "SELECT * FROM t, LATERAL query('SELECT 42')",
        "SELECT * REPLACE (query('SELECT 1') AS id) FROM t",
        "SELECT * FROM json_execute_serialized_sql(json_serialize_plan('SELECT 42'))",
        f"SELECT * FROM main.\"JSON_EXECUTE_SERIALIZED_SQL\"({serialized})",
        "SELECT list_aggr([1], 'query')",
        "SELECT array_aggregate([1], 'read_text')",
        "SELECT aggregate([1], 'sleep_ms')",
        "SELECT list_transform([1], lambda x: query_table('t'))",
        f"SELECT * FROM '{path}'",
        f"SELECT * FROM \"{path}\"",
        "SELECT * FROM '/etc/hostname'",
        f"SELECT * FROM read_duckdb('{path}')",
        f"SELECT * FROM sqlite_scan('{path}', 't')",
        "SELECT * FROM postgres_scan('host=127.0.0.1', 'public', 't')",
        "SELECT * FROM duckdb_temporary_files()",
        "SELECT * FROM pragma_metadata_info()",
        "SELECT * FROM pragma_storage_info('t')",
        "SELECT * FROM duckdb_prepared_statements()",
        "SELECT * FROM pg_catalog.pg_prepared_statements",
        "SELECT set_variable('x', 1)",
        "SELECT * FROM set_variable('x', 1)",
        "SUMMARIZE SELECT * FROM query('SELECT 42')",
        "DESCRIBE SELECT * FROM query('SELECT 42')",
        "PIVOT t ON id",
    ]


def test_duckdb_outside_probes(tmp_path: Path) -> None:
    import duckdb

    path = tmp_path / "probe.duckdb"
    with duckdb.connect(str(path)) as setup:
        setup.execute("CREATE TABLE t AS SELECT 1 AS id")
    with _operations(duckdb_config("lake", path, query_timeout_seconds=5)) as ops:
        through = _probe(ops, _duckdb_probes(path), "NL2SQL-NO-SECRET", "SELECT id FROM t")
        assert through == [], "\n".join(through)
        # the control: the engine alone runs SQL held in a string
        assert rows_of(ops, "SELECT * FROM query('SELECT 42')", validate=False) == [(42,)]


# -- Spark -------------------------------------------------------------------------------------

def _xml_entity_probes(url: str, secret_file: Path) -> list[str]:
    """XML input that names an external entity, a DTD or a schema: Spark's XML parser refuses
    DTDs, so these pass the guard and must stay harmless (no request, no file content)."""
    return [
        f"SELECT from_xml('<!DOCTYPE a [<!ENTITY x SYSTEM \"file://{secret_file}\">]>"
        f"<a><b>&x;</b></a>', 'b STRING') AS x",
        f"SELECT schema_of_xml('<!DOCTYPE a [<!ENTITY x SYSTEM \"file://{secret_file}\">]>"
        f"<a><b>&x;</b></a>') AS x",
        f"SELECT from_xml('<!DOCTYPE a [<!ENTITY x SYSTEM \"{url}/e\">]><a><b>&x;</b></a>', "
        f"'b STRING') AS x",
        f"SELECT from_xml('<!DOCTYPE a SYSTEM \"{url}/d\"><a><b>1</b></a>', 'b STRING') AS x",
        f"SELECT from_xml('<!DOCTYPE a [<!ENTITY % p SYSTEM \"{url}/p\"> %p;]><a><b>1</b></a>', "
        f"'b STRING') AS x",
        f"SELECT from_xml('<a xmlns:xi=\"http://www.w3.org/2001/XInclude\"><b><xi:include "
        f"href=\"{url}/xi\"/></b></a>', 'b STRING') AS x",
        f"SELECT from_xml('<a xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
        f"xsi:noNamespaceSchemaLocation=\"{url}/s.xsd\"><b>1</b></a>', 'b STRING') AS x",
        # an admitted option (Spark refuses angle brackets in it)
        f"SELECT to_xml(named_struct('a', 1), map('rowTag', 'r', 'declaration', "
        f"'<!DOCTYPE a [<!ENTITY x SYSTEM \"file://{secret_file}\">]>')) AS x",
    ]


SPARK_PROBES = [
    "SELECT IDENTIFIER('reflect')('java.lang.System', 'getProperty', 'user.home') AS x",
    "SELECT identifier('java_' || 'method')('java.lang.System', 'getProperty', 'x') AS x",
    "SELECT * FROM IDENTIFIER('parquet.`/etc`')",
    "SELECT `system`.`builtin`.reflect('java.lang.System', 'getProperty', 'x') AS x",
    "SELECT builtin.java_method('java.lang.System', 'getProperty', 'x') AS x",
    "SELECT transform(array(1), x -> try_reflect('java.lang.System', 'getProperty', 'x')) AS x",
    "SELECT from_xml('<a/>', 'b STRING', named_struct('rowValidationXSDPath', '/etc/hostname'))",
    "SELECT from_xml('<a/>', 'b STRING', map('rowvalidationxsdpath', '/etc/hostname')) AS x",
    "SELECT from_xml('<a/>', 'b STRING', map('rowValidationXSDPath ', '/etc/hostname')) AS x",
    "SELECT from_xml('<a/>', 'b STRING', map(r'rowValidationXSDPath', '/etc/hostname')) AS x",
    "SELECT from_xml('<a/>', 'b STRING', if(true, map('rowValidationXSDPath', '/x'), map()))",
    "SELECT from_xml('<a/>', schema_of_xml('<a/>', map('rowValidationXSDPath', '/x'))) AS x",
    "SELECT from_xml('<a/>', 'b STRING', map('rowTag', 'a', 'rowValidationXSDPath', NULL))",
    "SELECT from_xml(xmlStr => '<a/>', schema => 'b STRING', options => map('rowTag', 'a'))",
    "SELECT xpath_string('<a>1</a>', 'a') AS x",
    "SELECT * FROM read_files('/etc/hostname')",
    "SELECT * FROM text.`file:///etc/hostname`",
    "SELECT * FROM binaryFile.`/etc`",
    "EXECUTE IMMEDIATE 'SELECT reflect(''java.lang.System'', ''getProperty'', ''x'')'",
    "SELECT '${env:HOME}' AS x",
]


@pytest.mark.spark
def test_spark_outside_probes(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from test_allowlist_findings import _XsdServer

    secret = f"NL2SQL-SECRET-{uuid.uuid4().hex}"
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(secret)
    server = _XsdServer(secret_file)  # records every request it gets
    db = spark_db(request, "probes", script="CREATE TABLE t (a INT);\nINSERT INTO t VALUES (1)",
                  query_timeout_seconds=60)
    try:
        with _operations(db.config) as ops:
            through = _probe(ops, SPARK_PROBES, secret, "SELECT count(*) FROM t")
            assert through == [], "\n".join(through)
            for sql in _xml_entity_probes(server.url.rsplit("/", 1)[0], secret_file):
                try:
                    result = str(rows_of(ops, sql))
                except Exception as failed:  # noqa: BLE001 - an engine error is fine, a leak not
                    result = str(failed)
                assert secret not in result, sql
        assert server.requests == []
    finally:
        server.close()
