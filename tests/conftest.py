"""Shared fixtures: real SQLite files and real throwaway PostgreSQL databases.

Per-backend setup lives here and only here. Postgres tests skip with a reason when no server is
reachable, except under ``CI=true`` where a missing server is a failure.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

import psycopg
import pytest
import yaml
from psycopg import sql

from nl2sql.config.registry import DatabaseType, DbConnectionConfig, DbConnectionConfigs
from nl2sql.workspace.csv_dialect import format_value
from nl2sql.operations.ops_context import OpsContext
from nl2sql.config.bundled import bookstore_script_path
from nl2sql.config.sample import ensure_bookstore
from mariadb_server import PrivateMariaDB, mariadb_unavailable_reason
from spark_server import SparkConnectServer, load_sqlite, spark_unavailable_reason

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "scripts"))  # load_sample.py loads MySQL/DuckDB samples
# The public sample databases (Chinook, Northwind) ship with the tests (sources, licenses:
# tests/data/samples/README.md).
SAMPLE_DATA = REPO_ROOT / "tests" / "data" / "samples"
PG_HOST = os.environ.get("NL2SQL_TEST_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("NL2SQL_TEST_PG_PORT", "5432"))
PG_USER = os.environ.get("NL2SQL_TEST_PG_USER", "postgres")
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


#: Fixtures that start or load the session's Spark Connect server.
_SPARK_FIXTURES = frozenset({"spark_server", "spark_chinook", "spark_northwind"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``make test``: ``--dist loadgroup``) every Spark test runs on one
    worker, so the suite starts one Spark Connect server (~1 GB, ~10 s) and loads each sample
    into it once, not once per core. (Without the plugin there is nothing to group.)"""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if _uses_spark(item):
            item.add_marker(pytest.mark.xdist_group("spark"))


def _uses_spark(item: pytest.Item) -> bool:
    """Marked ``spark``, or asking for a Spark fixture collection can see."""
    return item.get_closest_marker("spark") is not None or bool(
        _SPARK_FIXTURES & set(getattr(item, "fixturenames", ())))


#: The test being set up or run (``spark_db`` checks its mark: a module-scoped fixture's own
#: request names the module, not the test that needed it).
_current: list[pytest.Item] = []


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _current[:] = [item]


@pytest.fixture(autouse=True)
def _no_model_requests() -> Iterator[None]:
    """No test may reach a real LLM."""
    from pydantic_ai import models

    previous = models.ALLOW_MODEL_REQUESTS
    models.ALLOW_MODEL_REQUESTS = False
    yield
    models.ALLOW_MODEL_REQUESTS = previous


@pytest.fixture(autouse=True)
def _restore_nl2sql_log_level() -> Iterator[None]:
    """CLI ``main()`` calls configure logging; keep one test's level out of the next."""
    logger = logging.getLogger("nl2sql")
    level = logger.level
    yield
    logger.setLevel(level)


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never read the developer's dbs.yaml, key file, model or workspace."""
    for name in ("NL2SQL_CONFIG", "NL2SQL_DATA_DIR", "NL2SQL_WORKSPACE", "NL2SQL_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NL2SQL_SECRETS_KEY_FILE", str(tmp_path / "keys" / "secret.key"))
    # Without a dbs.yaml the cache goes to the per-user data dir: keep it in tmp_path.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


class _KeepRows:
    """A result sink that keeps the rows (small results only)."""

    def begin(self, columns: Sequence[str]) -> None:
        self.rows: list[tuple[Any, ...]] = []

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.rows += [tuple(row) for row in rows]


def rows_of(ops: Any, sql: str, **options: Any) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` run through ``ops.execute_select_query`` (every layer; options such
    as ``validate=False`` passed on)."""
    sink = _KeepRows()
    ops.execute_select_query(sql, sink, **options)
    return sink.rows


# -- PostgreSQL -----------------------------------------------------------------------------

def _admin_dsn(dbname: str = "postgres") -> str:
    return f"host={PG_HOST} port={PG_PORT} user={PG_USER} dbname={dbname}"


@pytest.fixture(scope="session")
def pg_server() -> str:
    """The admin DSN of the test server; skip (fail under CI) when it is unreachable."""
    try:
        with psycopg.connect(_admin_dsn(), connect_timeout=3):
            pass
    except psycopg.OperationalError as exc:
        reason = f"PostgreSQL at {PG_HOST}:{PG_PORT} is unreachable ({str(exc).strip()})"
        if IN_CI:
            pytest.fail(f"{reason}; Postgres tests are mandatory when CI=true.")
        pytest.skip(reason)
    return _admin_dsn()


def _create_database(name: str, template: str | None = None) -> None:
    with psycopg.connect(_admin_dsn(), autocommit=True) as conn:
        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template:
            statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        conn.execute(statement)


def _drop_database(name: str) -> None:
    with psycopg.connect(_admin_dsn(), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))


def stop_process(process: subprocess.Popen) -> None:  # type: ignore[type-arg]
    """Terminate a server started by a test; kill it if it does not stop within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_pg_script(dbname: str, script: str) -> None:
    """Run a multi-statement SQL script (no psql meta-commands) as the admin user."""
    with psycopg.connect(_admin_dsn(dbname), autocommit=True) as conn:
        conn.execute(script)  # no parameters: simple query protocol, many statements allowed


def pg_execute(dbname: str, statement: str) -> None:
    with psycopg.connect(_admin_dsn(dbname), autocommit=True) as conn:
        conn.execute(statement)


def _chinook_pg_script() -> str:
    text = (SAMPLE_DATA / "chinook" / "chinook_postgres.sql").read_text(encoding="utf-8")
    # The script creates and connects to its own database; keep only what follows `\c`.
    return text.split("\\c chinook;", 1)[1]


def _northwind_pg_script() -> str:
    return (SAMPLE_DATA / "northwind" / "northwind_postgres.sql").read_text(encoding="utf-8")


def _bookstore_pg_script() -> str:
    return "\n".join(line for line in bookstore_script_path().read_text().splitlines()
                     if not line.startswith("PRAGMA"))


def _unique_name(prefix: str) -> str:
    return f"nl2sql_{prefix}_{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def pg_templates(pg_server: str) -> Iterator[dict[str, str]]:
    """Template databases loaded once per session; tests copy them (CREATE ... TEMPLATE)."""
    templates: dict[str, str] = {}
    loaders = {"chinook": _chinook_pg_script, "northwind": _northwind_pg_script,
               "bookstore": _bookstore_pg_script}
    try:
        for key, loader in loaders.items():
            name = _unique_name(f"tpl_{key}")
            _create_database(name)
            templates[key] = name
            run_pg_script(name, loader())
        yield templates
    finally:
        for name in templates.values():
            _drop_database(name)


@pytest.fixture
def pg_database(pg_server: str) -> Iterator[Callable[..., str]]:
    """Factory: a fresh throwaway database (empty, or a copy of a template); dropped after."""
    created: list[str] = []

    def make(template: str | None = None, script: str | None = None) -> str:
        name = _unique_name("t")
        _create_database(name, template)
        created.append(name)
        if script:
            run_pg_script(name, script)
        return name

    yield make
    for name in created:
        _drop_database(name)


@pytest.fixture(scope="session")
def pg_store_database(pg_server: str) -> Iterator[str]:
    """The URL of a throwaway PostgreSQL database for ``store:``, made once per session."""
    from nl2sql.store.database import dispose_engines

    name = _unique_name("store")
    _create_database(name)
    try:
        yield f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        dispose_engines()
        _drop_database(name)


@pytest.fixture
def pg_store(pg_store_database: str) -> str:
    """The session's PostgreSQL store, emptied of what earlier tests kept (its tables and their
    versions stay)."""
    dbname = pg_store_database.rsplit("/", 1)[1]
    with psycopg.connect(_admin_dsn(dbname), autocommit=True) as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename <> 'schema_version'")]
        if tables:
            conn.execute(sql.SQL("TRUNCATE {}").format(
                sql.SQL(", ").join(map(sql.Identifier, tables))))
    return pg_store_database


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest) -> str | None:
    """``store:`` for a test run on each kind of store: None (SQLite files in the data dir)
    and the session's PostgreSQL store."""
    return None if request.param == "sqlite" else request.getfixturevalue("pg_store")


def pg_config(db_id: str, dbname: str, **extra: object) -> DbConnectionConfig:
    return DbConnectionConfig(db_id=db_id, type=DatabaseType.POSTGRES, host=PG_HOST,
                              port=PG_PORT, user=PG_USER, dbname=dbname, **extra)


# -- SQLite ---------------------------------------------------------------------------------

def sqlite_config(db_id: str, path: Path, **extra: object) -> DbConnectionConfig:
    return DbConnectionConfig(db_id=db_id, type=DatabaseType.SQLITE, path=path, **extra)


def run_sqlite_script(path: Path, script: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(script)
    conn.close()


@pytest.fixture(scope="session")
def sqlite_samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sample databases as SQLite files, built once per session; tests copy them."""
    northwind = tmp_path_factory.mktemp("northwind") / "northwind.db"
    run_sqlite_script(northwind, (SAMPLE_DATA / "northwind" / "northwind_sqlite.sql")
                      .read_text(encoding="utf-8"))
    bookstore = ensure_bookstore(tmp_path_factory.mktemp("bookstore") / "bookstore.db")
    return {"chinook": SAMPLE_DATA / "chinook" / "chinook.sqlite", "northwind": northwind,
            "bookstore": bookstore}


# -- one test-database factory per backend --------------------------------------------------

@dataclass
class BackendDb:
    """A real throwaway database on one backend, plus admin access behind nl2sql's back
    (nl2sql's own engines are read-only)."""

    backend: str
    config: DbConnectionConfig
    #: Run one admin statement or a script of several.
    execute: Callable[[str], None]
    #: Insert rows (sequences of Python values) into a table, as bound parameters.
    insert: Callable[[str, Sequence[Sequence[object]]], None]
    #: Rows of a query as the backend itself writes each value as text ('' for NULL).
    text_rows: Callable[[str], list[list[str]]]
    #: The server-side database name (None for file-based backends).
    dbname: str | None = None


def sqlite_db(request: pytest.FixtureRequest, db_id: str, *, script: str | None = None,
              sample: str | None = None, **extra: object) -> BackendDb:
    path = request.getfixturevalue("tmp_path") / f"{db_id}_{uuid.uuid4().hex[:6]}.db"
    if sample:
        shutil.copyfile(request.getfixturevalue("sqlite_samples")[sample], path)
    if script:
        run_sqlite_script(path, script)

    def insert(table: str, rows: Sequence[Sequence[object]]) -> None:
        marks = ", ".join("?" * len(rows[0]))
        with sqlite3.connect(path) as conn:
            conn.executemany(f'INSERT INTO "{table}" VALUES ({marks})', rows)
        conn.close()

    def text_rows(query: str) -> list[list[str]]:
        with sqlite3.connect(path) as conn:
            rows = conn.execute(query).fetchall()
        conn.close()
        # Each value in the documented CSV dialect (floats as Postgres writes float8).
        return [["" if v is None else format_value(v) for v in row] for row in rows]

    return BackendDb("sqlite", sqlite_config(db_id, path, **extra),
                  lambda statement: run_sqlite_script(path, statement), insert, text_rows)


def postgres_db(request: pytest.FixtureRequest, db_id: str, *, script: str | None = None,
                sample: str | None = None, **extra: object) -> BackendDb:
    template = request.getfixturevalue("pg_templates")[sample] if sample else None
    dbname = request.getfixturevalue("pg_database")(template=template, script=script)

    def insert(table: str, rows: Sequence[Sequence[object]]) -> None:
        marks = ", ".join(["%s"] * len(rows[0]))
        with psycopg.connect(_admin_dsn(dbname), autocommit=True) as conn:
            conn.cursor().executemany(f'INSERT INTO "{table}" VALUES ({marks})', rows)

    def text_rows(query: str) -> list[list[str]]:
        # The server's own text for each value, as COPY would write it.
        with psycopg.connect(_admin_dsn(dbname)) as conn, conn.cursor() as cur:
            cur.execute(query)
            result = cur.pgresult
            assert result is not None
            return [["" if result.get_value(r, c) is None
                     else result.get_value(r, c).decode()  # type: ignore[union-attr]
                     for c in range(result.nfields)] for r in range(result.ntuples)]

    return BackendDb("postgres", pg_config(db_id, dbname, **extra),
                  lambda statement: run_pg_script(dbname, statement), insert, text_rows,
                  dbname=dbname)


#: A Spark query that runs for hours in one long stage (a scan of generated rows, the count's
#: final step never reached), for the tests that stop a query. Not a cross join: its broadcast
#: is a stage of its own, and a stop landing after the broadcast and before adaptive execution
#: submits the next stage leaves that stage running with nothing to stop it (Spark's gap,
#: docs/security.md); it made the whole Spark suite wait behind an orphan job.
SPARK_ENDLESS = "SELECT count(*) AS n FROM range(1000000000000) WHERE (id * 7919) % 7 = 3"


def spark_config(db_id: str, remote: str, database: str, **extra: object) -> DbConnectionConfig:
    return DbConnectionConfig(db_id=db_id, type=DatabaseType.SPARK, remote=remote,
                              database=database, **extra)


def spark_db(request: pytest.FixtureRequest, db_id: str, *, script: str | None = None,
             sample: str | None = None, **extra: object) -> BackendDb:
    """A Spark database (namespace) on the session's server: the shared, already loaded sample
    (tests must not alter it), or a fresh namespace built from ``script`` and dropped after.
    Mark its tests ``spark``: the server is asked for here, where collection cannot see it,
    and an unmarked test would start a second server on another xdist worker."""
    test = _current[0] if _current else None
    if test is not None and not _uses_spark(test):
        pytest.fail(f"{test.nodeid} asks for the Spark Connect server without the spark mark: "
                    "mark it @pytest.mark.spark (unmarked, it starts a second server on "
                    "another xdist worker)", pytrace=False)
    server: SparkConnectServer = request.getfixturevalue("spark_server")
    session = server.session()
    request.addfinalizer(session.stop)
    if sample:
        database = request.getfixturevalue(f"spark_{sample}")
    else:
        database = f"t_{uuid.uuid4().hex[:10]}"
        session.sql(f"CREATE DATABASE {database}")
        request.addfinalizer(lambda: session.sql(f"DROP DATABASE IF EXISTS {database} CASCADE"))
        session.catalog.setCurrentDatabase(database)

    def execute(statements: str) -> None:
        session.catalog.setCurrentDatabase(database)
        for statement in statements.split(";\n"):
            if statement.strip():
                session.sql(statement)

    if script:
        execute(script)

    def insert(table: str, rows: Sequence[Sequence[object]]) -> None:
        schema = session.table(f"{database}.`{table}`").schema
        session.createDataFrame([tuple(r) for r in rows], schema=schema) \
            .write.insertInto(f"{database}.`{table}`")

    def text_rows(query: str) -> list[list[str]]:
        session.catalog.setCurrentDatabase(database)
        return [["" if v is None else str(v) for v in row] for row in session.sql(query).collect()]

    return BackendDb("spark", spark_config(db_id, server.remote, database, **extra),
                     execute, insert, text_rows, dbname=database)


# -- MySQL / MariaDB ------------------------------------------------------------------------

MY_HOST = os.environ.get("NL2SQL_TEST_MYSQL_HOST", "127.0.0.1")
MY_PORT = int(os.environ.get("NL2SQL_TEST_MYSQL_PORT", "3306"))
MY_USER = os.environ.get("NL2SQL_TEST_MYSQL_USER", "root")


#: Where the shared test server is; a private server's ``address`` replaces it.
MY_ADDRESS: dict[str, Any] = {"host": MY_HOST, "port": MY_PORT, "user": MY_USER}


def mysql_admin(dbname: str | None = None, *, address: dict[str, Any] | None = None,
                **extra: object) -> Any:
    """An admin PyMySQL connection (to the shared server, or the one at ``address``); scripts
    may hold several statements (ANSI quotes)."""
    import pymysql
    from pymysql.constants import CLIENT

    conn = pymysql.connect(**(address or MY_ADDRESS), database=dbname,
                           autocommit=True, client_flag=CLIENT.MULTI_STATEMENTS,
                           charset="utf8mb4", **extra)
    with conn.cursor() as cursor:
        cursor.execute("SET SESSION sql_mode = 'ANSI_QUOTES,STRICT_TRANS_TABLES'")
    return conn


def run_mysql_script(dbname: str, script: str, *, address: dict[str, Any] | None = None
                     ) -> None:
    conn = mysql_admin(dbname, address=address)
    try:
        with conn.cursor() as cursor:
            cursor.execute(script)
            while cursor.nextset():
                pass
    finally:
        conn.close()


@pytest.fixture(scope="session")
def mysql_server() -> str:
    """The test server's address; skip (fail under CI) when it is unreachable."""
    try:
        mysql_admin().close()
    except Exception as exc:  # noqa: BLE001 - any failure to reach the server
        reason = f"MySQL/MariaDB at {MY_HOST}:{MY_PORT} is unreachable ({exc})"
        if IN_CI:
            pytest.fail(f"{reason}; MySQL tests are mandatory when CI=true.")
        pytest.skip(reason)
    return f"{MY_HOST}:{MY_PORT}"


def _session_server(reason: str | None, tests: str, make: Callable[[], Any]) -> Iterator[Any]:
    """A server process the tests start (``make()``, then ``start()``), stopped at the end;
    skipped with ``reason`` when this machine cannot run it, a failure under CI=true."""
    if reason:
        if IN_CI:
            pytest.fail(f"{reason}; {tests} are mandatory when CI=true.")
        pytest.skip(reason)
    server = make()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def private_mariadb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateMariaDB]:
    """A MariaDB server of this session's own (``tests/mariadb_server.py``) for the tests that
    change GLOBAL variables: the shared server is used by concurrent tests (xdist workers).
    Skipped with the reason when MariaDB's server programs are missing (a failure under CI)."""
    yield from _session_server(mariadb_unavailable_reason(), "the private MariaDB tests",
                               lambda: PrivateMariaDB(tmp_path_factory.mktemp("mariadb")))


@pytest.fixture(scope="session")
def mysql_templates(mysql_server: str, sqlite_samples: dict[str, Path]) -> Iterator[dict[str, str]]:
    """The samples loaded once per session (scripts/load_sample.py); tests copy them."""
    from load_sample import load_mysql

    templates: dict[str, str] = {}
    try:
        for key, path in sqlite_samples.items():
            name = _unique_name(f"tpl_{key}")
            conn = mysql_admin()
            with conn.cursor() as cursor:
                cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
            templates[key] = name
            conn.select_db(name)
            load_mysql(path, conn)
            conn.close()
        yield templates
    finally:
        conn = mysql_admin()
        with conn.cursor() as cursor:
            for name in templates.values():
                cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
        conn.close()


def _mysql_copy(template: str, target: str) -> None:
    """Tables (with keys and indexes), rows and views of ``template`` into ``target``."""
    conn = mysql_admin(target)
    with conn.cursor() as cursor:
        cursor.execute("SET SESSION FOREIGN_KEY_CHECKS = 0")
        cursor.execute("SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES "
                       "WHERE TABLE_SCHEMA = %s ORDER BY TABLE_TYPE, TABLE_NAME", (template,))
        objects = cursor.fetchall()
        for name, kind in objects:
            if kind == "BASE TABLE":
                cursor.execute(f'SHOW CREATE TABLE "{template}"."{name}"')
                cursor.execute(cursor.fetchone()[1])
                cursor.execute(f'INSERT INTO "{name}" SELECT * FROM "{template}"."{name}"')
        for name, kind in objects:
            if kind == "VIEW":
                cursor.execute(f'SHOW CREATE VIEW "{template}"."{name}"')
                cursor.execute(cursor.fetchone()[1].replace(f'"{template}".', ""))
    conn.close()


def mysql_db(request: pytest.FixtureRequest, db_id: str, *, script: str | None = None,
             sample: str | None = None, **extra: object) -> BackendDb:
    request.getfixturevalue("mysql_server")
    template = request.getfixturevalue("mysql_templates")[sample] if sample else None
    dbname = _unique_name("t")
    conn = mysql_admin()
    with conn.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE `{dbname}` CHARACTER SET utf8mb4")
    conn.close()

    def drop() -> None:
        admin = mysql_admin()
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{dbname}`")
        admin.close()

    request.addfinalizer(drop)
    if template:
        _mysql_copy(template, dbname)
    if script:
        run_mysql_script(dbname, script)

    def insert(table: str, rows: Sequence[Sequence[object]]) -> None:
        admin = mysql_admin(dbname)
        with admin.cursor() as cursor:
            marks = ", ".join(["%s"] * len(rows[0]))
            cursor.executemany(f'INSERT INTO "{table}" VALUES ({marks})', rows)
        admin.close()

    def text_rows(query: str) -> list[list[str]]:
        admin = mysql_admin(dbname)
        with admin.cursor() as cursor:
            cursor.execute(query)
            rows = cursor.fetchall()
        admin.close()
        return [["" if v is None else str(v) for v in row] for row in rows]

    config = mysql_config(db_id, dbname, **extra)
    return BackendDb("mysql", config, lambda statement: run_mysql_script(dbname, statement),
                     insert, text_rows, dbname=dbname)


def mysql_config(db_id: str, dbname: str, *, address: dict[str, Any] | None = None,
                 **extra: object) -> DbConnectionConfig:
    settings: dict[str, object] = {**(address or MY_ADDRESS), **extra}
    return DbConnectionConfig(db_id=db_id, type=DatabaseType.MYSQL, dbname=dbname, **settings)


# -- DuckDB ---------------------------------------------------------------------------------

def duckdb_config(db_id: str, path: Path | None = None, **extra: object) -> DbConnectionConfig:
    return DbConnectionConfig(db_id=db_id, type=DatabaseType.DUCKDB, path=path, **extra)


@pytest.fixture(scope="session")
def duckdb_samples(tmp_path_factory: pytest.TempPathFactory,
                   sqlite_samples: dict[str, Path]) -> dict[str, Path]:
    """The samples as DuckDB files, loaded once per session; tests copy the files."""
    import duckdb
    from load_sample import load_duckdb

    folder = tmp_path_factory.mktemp("duckdb_samples")
    files = {}
    for key, source in sqlite_samples.items():
        files[key] = folder / f"{key}.duckdb"
        with duckdb.connect(str(files[key])) as conn:
            load_duckdb(source, conn)
    return files


def run_duckdb(path: Path, statement: str, rows: Sequence[Sequence[object]] | None = None
               ) -> list[tuple]:
    import duckdb

    with duckdb.connect(str(path)) as conn:
        if rows is not None:
            conn.executemany(statement, rows)
            return []
        result = conn.execute(statement)
        return result.fetchall() if result.description else []


def duckdb_db(request: pytest.FixtureRequest, db_id: str, *, script: str | None = None,
              sample: str | None = None, **extra: object) -> BackendDb:
    path = request.getfixturevalue("tmp_path") / f"{db_id}_{uuid.uuid4().hex[:6]}.duckdb"
    if sample:
        shutil.copyfile(request.getfixturevalue("duckdb_samples")[sample], path)
    run_duckdb(path, script or "SELECT 1")

    def insert(table: str, rows: Sequence[Sequence[object]]) -> None:
        marks = ", ".join("?" * len(rows[0]))
        run_duckdb(path, f'INSERT INTO "{table}" VALUES ({marks})', rows)

    def text_rows(query: str) -> list[list[str]]:
        # A copy: DuckDB refuses a second in-process connection with other settings than the
        # read-only one nl2sql may hold on the file.
        copy = path.with_name(f"direct_{uuid.uuid4().hex[:6]}.duckdb")
        shutil.copyfile(path, copy)
        try:
            return [["" if v is None else str(v) for v in row] for row in run_duckdb(copy, query)]
        finally:
            copy.unlink()

    return BackendDb("duckdb", duckdb_config(db_id, path, **extra),
                     lambda statement: run_duckdb(path, statement) and None, insert, text_rows)


#: backend type -> its test-database factory. A new backend adds one function above and one
#: entry here; every suite parametrized over BACKENDS then runs on it too.
TEST_DB_FACTORIES: dict[str, Callable[..., BackendDb]] = {
    "sqlite": sqlite_db,
    "postgres": postgres_db,
    "mysql": mysql_db,
    "duckdb": duckdb_db,
}
BACKENDS = list(TEST_DB_FACTORIES)
#: The default params of the sample fixtures; a suite that is backend-neutral runs on every
#: backend with ``@pytest.mark.parametrize("chinook", BACKENDS, indirect=True)``.
DEFAULT_BACKENDS = ["sqlite", "postgres"]


@pytest.fixture
def make_db(request: pytest.FixtureRequest) -> Callable[..., BackendDb]:
    """Factory: ``make_db(backend, db_id, script=..., sample="chinook", **config_fields)``, a
    fresh database (from a script and/or a copy of a sample) removed after the test."""

    def make(backend: str, db_id: str = "test", *, script: str | None = None,
             sample: str | None = None, **extra: object) -> BackendDb:
        return TEST_DB_FACTORIES[backend](request, db_id, script=script, sample=sample,
                                          **extra)

    return make


# -- sample databases, parametrized over backends -------------------------------------------

@dataclass
class SampleDb:
    """A real sample database on one backend, plus what its catalog says it holds."""

    name: str
    backend: str
    config: DbConnectionConfig
    table_names: dict[str, str] = field(default_factory=dict)  # logical -> real name
    db: BackendDb | None = None

    @property
    def pg_dbname(self) -> str | None:
        """For Postgres: the database name, so a test can alter it through an admin connection."""
        return self.db.dbname if self.db and self.backend == "postgres" else None

    @property
    def naming(self) -> str:
        """Whose spelling the names follow: "postgres" (snake_case) or "sqlite" (the SQLite
        files and their MySQL/DuckDB copies)."""
        return "postgres" if self.backend == "postgres" else "sqlite"

    def table(self, logical: str) -> str:
        return self.table_names.get(logical, logical)

    def quoted(self, logical: str) -> str:
        """The real name of a table, quoted as this backend writes it."""
        from nl2sql.schema.formatting import quote_identifier

        return quote_identifier(self.table(logical), self.backend)


# MySQL and DuckDB copies are loaded from the SQLite files (scripts/load_sample.py): same names.
CHINOOK_TABLES = {
    "sqlite": {"album": "Album", "artist": "Artist", "track": "Track", "invoice": "Invoice",
               "invoice_line": "InvoiceLine", "customer": "Customer", "employee": "Employee",
               "genre": "Genre", "media_type": "MediaType", "playlist": "Playlist",
               "playlist_track": "PlaylistTrack"},
    "postgres": {},  # snake_case names are the logical names
}
CHINOOK_TABLES["mysql"] = CHINOOK_TABLES["duckdb"] = CHINOOK_TABLES["sqlite"]
NORTHWIND_TABLES = {
    "sqlite": {"order_details": "Order Details", "orders": "Orders", "customers": "Customers",
               "products": "Products", "employees": "Employees"},
    "postgres": {},
}
NORTHWIND_TABLES["mysql"] = NORTHWIND_TABLES["duckdb"] = NORTHWIND_TABLES["sqlite"]


def _sample(request: pytest.FixtureRequest, name: str, tables: dict[str, dict[str, str]]
            ) -> SampleDb:
    db = request.getfixturevalue("make_db")(request.param, name, sample=name)
    return SampleDb(name, request.param, db.config, tables.get(request.param, {}), db=db)


def sample_fixture(name: str, backends: list[str]) -> Any:
    """A sample fixture over ``backends``; a module assigning ``chinook = sample_fixture(
    "chinook", BACKENDS)`` runs its chinook tests on every backend."""
    tables = {"chinook": CHINOOK_TABLES, "northwind": NORTHWIND_TABLES}.get(name, {})

    @pytest.fixture(params=backends, name=name)
    def fixture(request: pytest.FixtureRequest) -> SampleDb:
        return _sample(request, name, tables)

    return fixture


@pytest.fixture(params=DEFAULT_BACKENDS)
def chinook(request: pytest.FixtureRequest) -> SampleDb:
    return _sample(request, "chinook", CHINOOK_TABLES)


@pytest.fixture(params=DEFAULT_BACKENDS)
def northwind(request: pytest.FixtureRequest) -> SampleDb:
    return _sample(request, "northwind", NORTHWIND_TABLES)


@pytest.fixture(params=DEFAULT_BACKENDS)
def bookstore_db(request: pytest.FixtureRequest) -> SampleDb:
    """The bundled bookstore sample on each backend (same snake_case names everywhere)."""
    return _sample(request, "bookstore", {})


def add_column(sample: SampleDb, table: str, column: str) -> None:
    """Alter a sample database behind nl2sql's back (its engines are read-only)."""
    assert sample.db is not None
    sample.db.execute(f'ALTER TABLE "{table}" ADD COLUMN {column} TEXT')


# -- registry -------------------------------------------------------------------------------

def write_dbs_yaml(folder: Path, configs: list[DbConnectionConfig], **top_level: object) -> Path:
    """Write a dbs.yaml for ``configs`` into ``folder``; returns its path."""
    databases = {}
    for config in configs:
        entry = config.model_dump(mode="json", by_alias=True, exclude_none=True,
                                  exclude={"db_id", "query_timeout_seconds", "max_rows"})
        databases[config.db_id] = entry
    path = folder / "dbs.yaml"
    path.write_text(yaml.safe_dump({"databases": databases, **top_level}, sort_keys=False))
    return path


@pytest.fixture
def make_registry(tmp_path: Path) -> Callable[..., DbConnectionConfigs]:
    """Factory: a registry from a dbs.yaml written in tmp_path for the given configs."""

    def make(*configs: DbConnectionConfig, **top_level: object) -> DbConnectionConfigs:
        folder = tmp_path / "config"
        folder.mkdir(exist_ok=True)
        path = write_dbs_yaml(folder, list(configs), **top_level)
        return DbConnectionConfigs.load(path, workspace=tmp_path / "workspace")

    return make


@pytest.fixture
def bookstore_ops(tmp_path: Path) -> Iterator[OpsContext]:
    """An ``OpsContext`` with no dbs.yaml (the bundled bookstore) and its structure-only cache,
    for agent tests with scripted models."""
    ops = OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    build_cache(ops.config("bookstore"), ops.data_dir)
    yield ops
    ops.close()


@pytest.fixture
def chinook_ops(chinook: SampleDb, make_registry: Callable[..., DbConnectionConfigs]
                ) -> Iterator[OpsContext]:
    """An ``OpsContext`` over the ``chinook`` sample (each backend) with its structure-only
    cache."""
    registry = make_registry(chinook.config)
    build_cache(chinook.config, registry.data_dir)
    ops = OpsContext(registry)
    yield ops
    ops.close()


# -- Spark (Spark Connect server from the installed pyspark) ---------------------------------

@pytest.fixture(scope="session")
def spark_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkConnectServer]:
    """One Spark Connect server for the whole session (~10 s to start), stopped at the end;
    skipped with the reason without Java or pyspark (a failure under CI=true). An error at the
    end when its JVM's code cache filled meanwhile (``SparkConnectServer.code_cache_full``)."""
    servers: list[SparkConnectServer] = []

    def make() -> SparkConnectServer:
        servers.append(SparkConnectServer(tmp_path_factory.mktemp("spark")))
        return servers[-1]

    yield from _session_server(spark_unavailable_reason(), "Spark tests", make)
    for server in servers:
        assert not server.code_cache_full(), (
            f"The test Spark server's JIT code cache filled ({server.log_path}): from then on "
            f"its JVM compiled nothing and may stop the SparkContext; raise "
            f"-XX:ReservedCodeCacheSize in tests/spark_server.py.")


@pytest.fixture(scope="session")
def spark_chinook(spark_server: SparkConnectServer) -> str:
    """Chinook loaded once into the session's server; returns its Spark database name."""
    session = spark_server.session()
    try:
        with closing(sqlite3.connect(SAMPLE_DATA / "chinook" / "chinook.sqlite")) as source:
            load_sqlite(session, source, SHARED_SPARK_SAMPLES[0])
    finally:
        session.stop()
    return SHARED_SPARK_SAMPLES[0]


@pytest.fixture(scope="session")
def spark_northwind(spark_server: SparkConnectServer) -> str:
    """Northwind (tables only, ``Order Details`` as ``order_details``), loaded once."""
    session = spark_server.session()
    try:
        with closing(sqlite3.connect(":memory:")) as source:
            source.executescript(
                (SAMPLE_DATA / "northwind" / "northwind_sqlite.sql").read_text(encoding="utf-8"))
            load_sqlite(session, source, SHARED_SPARK_SAMPLES[1])
    finally:
        session.stop()
    return SHARED_SPARK_SAMPLES[1]


# -- a local OpenAI-compatible model server ---------------------------------------------------

@pytest.fixture
def stub_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubOpenAI]:
    """A started ``StubOpenAI`` (tests/stub_openai.py) with ``OPENAI_BASE_URL`` and a dummy
    ``OPENAI_API_KEY`` set for subprocesses (``nl2sql-ask``, a notebook kernel); queue replies
    with ``stub_openai.add(...)`` and use ``stub_openai.MODEL_STRING``
    (``openai-chat:stub-model``). This process keeps ``ALLOW_MODEL_REQUESTS = False``: the real
    provider path runs in the child processes, against this server only."""
    from stub_openai import StubOpenAI

    with StubOpenAI() as stub:
        for key, value in stub.env().items():
            monkeypatch.setenv(key, value)
        yield stub


#: The Spark databases the session's samples are loaded into (``spark_chinook``...).
SHARED_SPARK_SAMPLES = ("chinook", "northwind")
#: The schema caches of the shared Spark samples (loaded once a session, never altered: see
#: ``spark_db``), by the config read: extracting one takes Spark 4-6 s, and several tests
#: build one for each of their folders.
_SHARED_SPARK_CACHES: dict[str, Any] = {}


def build_cache(config: DbConnectionConfig, data_dir: Path) -> None:
    """The structure-only schema cache of ``config`` (no annotation) under ``data_dir``."""
    from nl2sql.schema.cache import save_db_info
    from nl2sql.db.base import create_connection
    from nl2sql.inspection import DbSchemaExtractor

    shared = config.type is DatabaseType.SPARK and config.database in SHARED_SPARK_SAMPLES
    key = config.model_dump_json()
    info = _SHARED_SPARK_CACHES.get(key) if shared else None
    if info is None:
        connection = create_connection(config)
        try:
            info = DbSchemaExtractor(connection).extract(config.db_id)
        finally:
            connection.dispose()
        if shared:
            _SHARED_SPARK_CACHES[key] = info
    save_db_info(info.model_copy(deep=True), data_dir)
