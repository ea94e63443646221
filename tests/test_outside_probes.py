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

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from conftest import duckdb_config, mysql_admin, mysql_config, pg_config, rows_of, spark_db
from nl2sql.db.base import create_connection, create_operations
from nl2sql.errors import QueryExecutionError, QueryRejectedError
from nl2sql.schema.models import DbInfo


def _probe(ops: Any, cases: list[str], secret: str, alive: str) -> list[str]:
    """The cases that were not refused (or leaked ``secret`` in their message); after each,
    ``alive`` must still answer one row."""
    through = []
    for sql in cases:
        try:
            rows = rows_of(ops, sql)
        except QueryRejectedError as refused:
            message = str(refused)
            if secret in message or "\n" in message:
                through.append(f"{sql}  (message: {message})")
        except QueryExecutionError as failed:  # the guard let it reach the engine
            through.append(f"{sql}  (engine: {str(failed)[:80]})")
        else:
            through.append(f"{sql}  ({'LEAKED' if secret in str(rows) else 'ran'})")
        assert len(rows_of(ops, alive)) == 1, sql
    return through


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
    connection = create_connection(pg_config("pg", dbname))
    ops = create_operations(connection, DbInfo(db_id="pg", db_type="postgres"))
    try:
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
    finally:
        connection.dispose()


# -- MariaDB, as root ------------------------------------------------------------------------------

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
    connection = create_connection(mysql_config("my", dbname, address=address))
    ops = create_operations(connection, DbInfo(db_id="my", db_type="mysql"))
    try:
        through = _probe(ops, MYSQL_PROBES, secret, "SELECT count(*) FROM t")
        assert through == [], "\n".join(through)
        # the control: root's engine alone hands the password out through the statistics
        assert secret in str(rows_of(ops, MYSQL_PROBES[0], validate=False))
    finally:
        connection.dispose()
