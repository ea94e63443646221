"""Issue 28, finding 4: tables and catalogues that hold credentials or other sessions' SQL are
refused whatever the login, here the audit's case: the PostgreSQL superuser and the MariaDB root,
on real servers holding real secrets (a subscription's and a user mapping's password, a
federated server's password). Every spelling and route (qualified, quoted, case, subqueries,
CTEs, the catalogue's own views, information_schema, a user's view over them); the secret never
appears in an error; the next query works. The control: with the guard off, the engine hands
the secret out."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from conftest import mysql_admin, mysql_config, pg_config, rows_of, sqlite_config
from nl2sql.db.base import create_connection, create_operations
from nl2sql.errors import QueryExecutionError, QueryRejectedError
from nl2sql.schema.models import DbInfo
from nl2sql.sql_guard import validate_read_only


def _refused_without_leak(ops: Any, cases: list[str], secret: str, probe: str) -> None:
    for sql in cases:
        with pytest.raises(QueryRejectedError) as caught:
            rows_of(ops, sql)
        message = str(caught.value)
        assert secret not in message and "\n" not in message, (sql, message)
        assert rows_of(ops, probe) == [(1,)], sql  # the engine is alive


# -- PostgreSQL, as the superuser ----------------------------------------------------------------

PG_CASES = [
    "SELECT subconninfo FROM pg_subscription",
    "SELECT subconninfo FROM pg_catalog.pg_subscription",
    'SELECT subconninfo FROM "pg_subscription"',
    'SELECT * FROM "pg_catalog"."pg_subscription"',
    "SELECT * FROM PG_CATALOG.PG_SUBSCRIPTION",
    "SELECT row_to_json(s) FROM pg_subscription s",
    "SELECT (SELECT subconninfo FROM pg_subscription LIMIT 1) AS c",
    "WITH s AS (SELECT * FROM pg_subscription) SELECT * FROM s",
    "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM pg_subscription WHERE subconninfo LIKE '%pw%')",
    "TABLE pg_subscription",
    "SELECT * FROM subs",  # a view over pg_subscription in the user's schema
    "SELECT * FROM public.subs_again",  # a view over that view
    "SELECT umoptions FROM pg_user_mappings",
    "SELECT * FROM pg_user_mapping",
    "SELECT * FROM information_schema.user_mapping_options",
    "SELECT * FROM information_schema._pg_user_mappings",
    "SELECT srvoptions FROM pg_foreign_server",
    "SELECT * FROM information_schema.foreign_server_options",
    "SELECT rolpassword FROM pg_authid",
    "SELECT passwd FROM pg_shadow",
    "SELECT query FROM pg_stat_activity",
    "SELECT * FROM pg_stat_get_activity(NULL)",
    "SELECT pg_stat_get_backend_activity(1)",
    "SELECT setting FROM pg_settings WHERE name = 'primary_conninfo'",
    "SELECT * FROM pg_show_all_settings()",
    "SELECT current_setting('primary_conninfo')",
    "SELECT current_setting('PRIMARY_CONNINFO')",
    "SELECT current_setting(name) FROM (SELECT 'primary_conninfo' AS name) s",
    "SELECT * FROM pg_file_settings",
    "SELECT * FROM pg_hba_file_rules",
    "SELECT * FROM pg_ident_file_mappings",
    "SELECT * FROM pg_db_role_setting",
    # extension functions that change the server's state
    "SELECT pg_prewarm('t')",
    "SELECT public.pg_prewarm('t', 'buffer')",
]


@pytest.fixture
def pg_secrets(pg_database: Any, pg_server: str) -> Iterator[tuple[str, str]]:
    """A database holding a subscription and a user mapping with a password, and views over
    the subscription catalogue; the subscription is dropped before the database."""
    dbname = pg_database(script="CREATE TABLE t (id int); INSERT INTO t VALUES (1); "
                                "CREATE EXTENSION postgres_fdw; CREATE EXTENSION pg_prewarm;")
    secret, suffix = f"pw{uuid.uuid4().hex}", uuid.uuid4().hex[:8]
    subscription = f"nl2sql_sub_{suffix}"
    dsn = pg_server.replace("dbname=postgres", f"dbname={dbname}")
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE SUBSCRIPTION {subscription} CONNECTION 'host=127.0.0.1 "
                      f"dbname=nowhere user=nobody password={secret}' PUBLICATION p "
                      f"WITH (connect = false)")
        admin.execute("CREATE SERVER remote FOREIGN DATA WRAPPER postgres_fdw "
                      "OPTIONS (host '127.0.0.1', dbname 'nowhere')")
        admin.execute(f"CREATE USER MAPPING FOR CURRENT_USER SERVER remote "
                      f"OPTIONS (user 'nobody', password '{secret}')")
        admin.execute("CREATE VIEW subs AS SELECT subname, subconninfo FROM pg_subscription")
        admin.execute("CREATE VIEW subs_again AS SELECT * FROM subs")
    try:
        yield dbname, secret
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"ALTER SUBSCRIPTION {subscription} SET (slot_name = NONE)")
            admin.execute(f"DROP SUBSCRIPTION {subscription}")


def test_postgres_credential_catalogues_are_refused_for_the_superuser(
        pg_secrets: tuple[str, str]) -> None:
    dbname, secret = pg_secrets
    connection = create_connection(pg_config("pg", dbname))
    ops = create_operations(connection, DbInfo(db_id="pg", db_type="postgres"))
    try:
        assert "superuser" in connection.login_privileges().privileged  # the audit's login
        _refused_without_leak(ops, PG_CASES, secret, "SELECT count(*) FROM t")
        assert rows_of(ops, "SELECT current_setting('TimeZone') IS NOT NULL, 1") == [(True, 1)]
        # the control: the engine alone hands the subscription's password out (the read-only
        # transaction runs as pg_read_all_data, which may read pg_subscription whole)
        assert secret in str(rows_of(ops, "SELECT subconninfo FROM pg_subscription",
                                   validate=False))
        assert secret in str(rows_of(ops, "SELECT * FROM subs", validate=False))
    finally:
        connection.dispose()


# -- MariaDB / MySQL, as root --------------------------------------------------------------------

MYSQL_CASES = [
    "SELECT Password FROM mysql.servers",
    "SELECT `Password` FROM `mysql`.`servers`",
    "SELECT * FROM MYSQL.SERVERS",
    "SELECT (SELECT Password FROM mysql.servers LIMIT 1) AS p",
    "SELECT id FROM t WHERE id IN (SELECT 1 FROM mysql.servers)",
    "WITH s AS (SELECT * FROM mysql.servers) SELECT * FROM s",
    "SELECT * FROM fed_servers",  # a view over mysql.servers in the database
    "SELECT * FROM fed_servers_again",  # a view over that view
    "SELECT authentication_string FROM mysql.user",
    "SELECT * FROM mysql.global_priv",
    "SELECT * FROM mysql.password_history",
    "SELECT INFO FROM information_schema.PROCESSLIST",
    "SELECT * FROM information_schema.processlist",
    "SELECT * FROM performance_schema.threads",
    "SELECT SQL_TEXT FROM performance_schema.events_statements_current",
    "SELECT SQL_TEXT FROM performance_schema.events_statements_history_long",
    "SELECT * FROM performance_schema.events_statements_summary_by_digest",
    "SELECT * FROM performance_schema.prepared_statements_instances",
    "SELECT * FROM performance_schema.user_variables_by_thread",
    "SELECT * FROM mysql.general_log",
    "SELECT * FROM mysql.slow_log",
    "SELECT * FROM sys.processlist",
    "SELECT * FROM sys.x$processlist",
    "SELECT * FROM sys.session",
    "SELECT * FROM sys.statement_analysis",
    "SELECT trx_query FROM information_schema.INNODB_TRX",
]


@pytest.fixture
def mysql_secrets(mysql_server: str) -> Iterator[tuple[str, str]]:
    """A database with a federated server (its password in mysql.servers) and views over it."""
    suffix = uuid.uuid4().hex[:8]
    dbname, server, secret = f"nl2sql_cred_{suffix}", f"nl2sql_srv_{suffix}", f"pw{suffix}x"
    admin = mysql_admin()
    try:
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE `{dbname}`")
            cursor.execute(f"CREATE SERVER {server} FOREIGN DATA WRAPPER mysql OPTIONS "
                           f"(HOST '127.0.0.1', DATABASE 'nowhere', USER 'nobody', "
                           f"PASSWORD '{secret}')")
            cursor.execute(f"CREATE TABLE `{dbname}`.t (id int)")
            cursor.execute(f"INSERT INTO `{dbname}`.t VALUES (1)")
            cursor.execute(f"CREATE VIEW `{dbname}`.fed_servers AS SELECT Server_name, "
                           f"Password FROM mysql.servers")
            cursor.execute(f"CREATE VIEW `{dbname}`.fed_servers_again AS SELECT * FROM "
                           f"`{dbname}`.fed_servers")
        yield dbname, secret
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP SERVER IF EXISTS {server}")
            cursor.execute(f"DROP DATABASE IF EXISTS `{dbname}`")
        admin.close()


def test_mysql_credential_tables_are_refused_for_root(mysql_secrets: tuple[str, str]) -> None:
    dbname, secret = mysql_secrets
    connection = create_connection(mysql_config("my", dbname))  # root, as the audit
    ops = create_operations(connection, DbInfo(db_id="my", db_type="mysql"))
    try:
        assert connection.login_privileges().privileged  # root is reported privileged
        _refused_without_leak(ops, MYSQL_CASES, secret, "SELECT count(*) FROM t")
        # the control: root's engine alone hands the password out, directly and via the view
        assert secret in str(rows_of(ops, "SELECT Password FROM mysql.servers", validate=False))
        assert secret in str(rows_of(ops, "SELECT * FROM fed_servers", validate=False))
    finally:
        connection.dispose()


#: Reading a system variable: @@name in every spelling, and the tables behind SHOW VARIABLES.
MYSQL_VARIABLE_CASES = [
    "SELECT @@wsrep_sst_auth",
    "SELECT @@GLOBAL.wsrep_sst_auth",
    "SELECT @@global . WSREP_SST_AUTH",
    "SELECT @@`wsrep_sst_auth`",
    "SELECT @@global.`wsrep_sst_auth`",
    "SELECT @@global./* x */wsrep_sst_auth",
    "SELECT (SELECT @@wsrep_sst_auth) AS a",
    "SELECT id FROM t WHERE @@wsrep_sst_auth LIKE 'nl2sql:%'",
    "SELECT concat(@@version, @@wsrep_sst_auth) AS a",
    "SELECT @@init_connect",
    "SELECT @@GLOBAL.report_password",
    "SELECT @@SESSION.init_connect",
    "SELECT @@ssl_key",  # a path only, but not on the list of harmless names
    "SELECT @@foreign_key_checks, @@wsrep_sst_auth",  # a harmless name beside does not help
    "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES "
    "WHERE VARIABLE_NAME = 'INIT_CONNECT'",
    "SELECT VARIABLE_VALUE FROM INFORMATION_SCHEMA.SESSION_VARIABLES "
    "WHERE VARIABLE_NAME = 'INIT_CONNECT'",
    "SELECT GLOBAL_VALUE FROM information_schema.SYSTEM_VARIABLES "
    "WHERE VARIABLE_NAME = 'INIT_CONNECT'",
    "SELECT * FROM `information_schema`.`global_variables`",
    "SELECT * FROM performance_schema.global_variables",
    "SELECT * FROM performance_schema.session_variables",
    "SELECT * FROM performance_schema.variables_by_thread",
    "SELECT * FROM sys_vars",  # a view over information_schema.GLOBAL_VARIABLES
    "SELECT * FROM sys_vars_again",  # a view over that view
]


@pytest.fixture
def mysql_variable_secret(private_mariadb: Any) -> Iterator[tuple[dict[str, Any], str, str]]:
    """The private server (its GLOBAL state is this session's own) with a password in
    ``wsrep_sst_auth`` and in the SQL of ``init_connect``, and a database with views over
    ``information_schema.GLOBAL_VARIABLES``."""
    address = private_mariadb.address
    suffix = uuid.uuid4().hex[:8]
    dbname, secret = f"nl2sql_vars_{suffix}", f"pw{suffix}x"
    admin = mysql_admin(address=address)
    try:
        with admin.cursor() as cursor:
            cursor.execute(f"SET GLOBAL wsrep_sst_auth = 'nl2sql:{secret}'")
            cursor.execute(f"SET GLOBAL init_connect = 'SET @nl2sql_key = \\'{secret}\\''")
            cursor.execute(f"CREATE DATABASE `{dbname}`")
            cursor.execute(f"CREATE TABLE `{dbname}`.t (id int)")
            cursor.execute(f"INSERT INTO `{dbname}`.t VALUES (1)")
            cursor.execute(f"CREATE VIEW `{dbname}`.sys_vars AS SELECT VARIABLE_NAME, "
                           f"VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES")
            cursor.execute(f"CREATE VIEW `{dbname}`.sys_vars_again AS SELECT * FROM "
                           f"`{dbname}`.sys_vars")
        yield address, dbname, secret
    finally:
        with admin.cursor() as cursor:
            cursor.execute("SET GLOBAL wsrep_sst_auth = DEFAULT")
            cursor.execute("SET GLOBAL init_connect = DEFAULT")
            cursor.execute(f"DROP DATABASE IF EXISTS `{dbname}`")
        admin.close()


def test_mysql_credential_variables_are_refused_on_every_path(
        mysql_variable_secret: tuple[dict[str, Any], str, str]) -> None:
    address, dbname, secret = mysql_variable_secret
    connection = create_connection(mysql_config("my", dbname, address=address))
    ops = create_operations(connection, DbInfo(db_id="my", db_type="mysql"))
    try:
        _refused_without_leak(ops, MYSQL_VARIABLE_CASES, secret, "SELECT count(*) FROM t")
        # other variables still read
        assert rows_of(ops, "SELECT @@SESSION.sql_mode IS NOT NULL AS a, @@version LIKE '%' "
                            "AS b, @@GLOBAL.max_connections > 0 AS c") == [(1, 1, 1)]
        # and those whose name looks like a credential's but holds a number or a switch
        assert rows_of(ops, "SELECT @@foreign_key_checks AS a, @@GLOBAL.key_buffer_size > 0 "
                            "AS b, @@session.max_seeks_for_key > 0 AS c") == [(1, 1, 1)]
        # the control: the engine alone hands the password out, directly, from the tables and
        # via the view (MariaDB shows wsrep_sst_auth as ********; MySQL builds and other
        # variables do not mask)
        for sql in ("SELECT @@init_connect", "SELECT @@GLOBAL.init_connect",
                    "SELECT GLOBAL_VALUE FROM information_schema.SYSTEM_VARIABLES",
                    "SELECT * FROM sys_vars WHERE VARIABLE_NAME = 'INIT_CONNECT'"):
            assert secret in str(rows_of(ops, sql, validate=False)), sql
        # and a view cannot hold @@name itself: the server refuses to create one
        admin = mysql_admin(dbname, address=address)
        try:
            with admin.cursor() as cursor, pytest.raises(Exception, match="1351"):
                cursor.execute("CREATE VIEW by_variable AS SELECT @@wsrep_sst_auth AS a")
        finally:
            admin.close()
    finally:
        connection.dispose()


@pytest.mark.parametrize("sql", [
    "SELECT User_password FROM mysql.slave_master_info",
    "SELECT * FROM mysql.slave_relay_log_info",
    "SELECT * FROM mysql.slave_worker_info",
    "SELECT * FROM performance_schema.replication_connection_configuration",
    "SELECT * FROM performance_schema.processlist",
    "SELECT * FROM sys.x$statements_with_full_table_scans",
    "SELECT HISTOGRAM FROM information_schema.COLUMN_STATISTICS",  # the buckets' values
])
def test_mysql_8_replication_and_statement_tables_are_refused(sql: str) -> None:
    """MySQL 8's tables (not on the MariaDB test server): the guard refuses them by name."""
    with pytest.raises(QueryRejectedError, match="holds credentials"):
        validate_read_only(sql, "mysql")


# -- SQLite: the connection's prepared statements --------------------------------------------------

SQLITE_CASES = [
    "SELECT sql FROM sqlite_stmt",
    "SELECT * FROM SQLITE_STMT",
    'SELECT * FROM "sqlite_stmt"',
    "SELECT * FROM main.sqlite_stmt",
    "SELECT (SELECT group_concat(sql) FROM sqlite_stmt) AS s",
    "WITH s AS (SELECT * FROM sqlite_stmt) SELECT * FROM s",
]


def test_sqlite_prepared_statements_of_earlier_callers_are_refused(tmp_path: Any) -> None:
    """An outside probe: sqlite_stmt listed the statements prepared on the pooled connection,
    so one caller read another's earlier SQL and its values. Refused by the guard, and by the
    engine's authorizer (also through a view in the file)."""
    import sqlite3

    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as setup:
        setup.executescript("CREATE TABLE t (id int, name text); INSERT INTO t VALUES (1, 'a');"
                            "CREATE VIEW stmts AS SELECT sql FROM sqlite_stmt;")
    connection = create_connection(sqlite_config("shop", path))
    ops = create_operations(connection, DbInfo(db_id="shop", db_type="sqlite"))
    secret = f"NL2SQL-OTHER-CALLER-{uuid.uuid4().hex}"
    try:
        assert rows_of(ops, f"SELECT count(*) FROM t WHERE name <> '{secret}'") == [(1,)]
        _refused_without_leak(ops, SQLITE_CASES, secret, "SELECT count(*) FROM t")
        # the engine alone: its authorizer refuses the table, directly and through a view in
        # the file (which the guard cannot see into on SQLite)
        for sql, validate in ((SQLITE_CASES[0], False), ("SELECT * FROM stmts", True)):
            with pytest.raises(QueryExecutionError, match="sqlite_stmt") as caught:
                rows_of(ops, sql, validate=validate)
            assert secret not in str(caught.value)
        assert rows_of(ops, "SELECT count(*) FROM t") == [(1,)]
    finally:
        connection.dispose()
