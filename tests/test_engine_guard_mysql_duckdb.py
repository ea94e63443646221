"""MySQL/MariaDB and DuckDB engine layers hold on their own: every DENIED row of their corpus,
run with the parser switched off, leaves no trace (rows, schema, files, settings, locks), and
the next query works. MySQL runs as a SELECT-only login, the deployment docs/security.md advises."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Callable

import pytest
from conftest import duckdb_config, mysql_admin, mysql_config
from guard_corpus import ALLOWED, SCHEMA, own_cases

from nl2sql.db.base import create_connection, create_operations
from nl2sql.errors import Nl2SqlError, QueryRejectedError
from nl2sql.inspection import DbSchemaExtractor

PRIVATE_DIR = Path(tempfile.gettempdir()) / f"nl2sql_engine_guard_{uuid.uuid4().hex[:10]}"
#: The corpus's named lock 'guard', renamed per process: a lock name is server-wide, and a
#: concurrent run's GET_LOCK would show in this run's snapshot.
LOCK = f"nl2sql_guard_{uuid.uuid4().hex[:10]}"
TIMEOUT = 0.5


class Sink:
    def begin(self, columns: Sequence[str]) -> None:
        self.columns, self.rows = list(columns), []

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.rows += [tuple(r) for r in rows]


def _private(sql: str) -> str:
    return sql.replace("/tmp/guard_", f"{PRIVATE_DIR}/guard_").replace("_LOCK('guard'",
                                                                        f"_LOCK('{LOCK}'")


def _files() -> list[str]:
    return sorted(p.name for p in PRIVATE_DIR.iterdir()) if PRIVATE_DIR.exists() else []


def _assert_no_trace(ops: Any, snapshot: Callable[[], dict], case: Any) -> None:
    sql = case.sql
    before = snapshot()
    sink = Sink()
    try:
        ops.execute_select_query(_private(sql), sink, validate=False, timeout_seconds=TIMEOUT)
    except Nl2SqlError as exc:
        assert "\n" not in str(exc) and "Traceback" not in str(exc)
    else:  # ran: a file or credential case may only have returned nothing (row locks, as in
        # LOCK IN SHARE MODE, end with the rolled-back transaction: the snapshot shows that)
        if case.effect in ("file", "none"):
            assert all(value in (None, 0, "") for row in sink.rows for value in row), sink.rows
    assert snapshot() == before, sql
    after = Sink()  # the short limit is the attack's: the check has time on a busy machine
    ops.execute_select_query("SELECT a FROM t ORDER BY a", after, timeout_seconds=30)
    assert after.rows == [(1,), (2,), (3,)]


@pytest.fixture(scope="module")
def mysql_target(mysql_server: str) -> Iterator[tuple[Any, Callable[[], dict]]]:
    PRIVATE_DIR.mkdir(exist_ok=True)
    PRIVATE_DIR.chmod(0o777)
    dbname, user = f"nl2sql_guard_{uuid.uuid4().hex[:8]}", f"nl2sql_ro_{uuid.uuid4().hex[:8]}"
    admin = mysql_admin()
    try:  # the database and the login are removed even when the set-up fails half-way
        yield from _mysql_target_in(admin, dbname, user)
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{dbname}`")
            for host in ("%", "localhost"):
                cursor.execute(f"DROP USER IF EXISTS '{user}'@'{host}'")
        admin.close()
        shutil.rmtree(PRIVATE_DIR, ignore_errors=True)


def _mysql_target_in(admin: Any, dbname: str, user: str
                     ) -> Iterator[tuple[Any, Callable[[], dict]]]:
    with admin.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE `{dbname}`")
        cursor.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY 'ro-pass'")
        cursor.execute(f"CREATE USER '{user}'@'localhost' IDENTIFIED BY 'ro-pass'")
        for host in ("%", "localhost"):
            cursor.execute(f"GRANT SELECT ON `{dbname}`.* TO '{user}'@'{host}'")
    admin.select_db(dbname)
    with admin.cursor() as cursor:
        cursor.execute(SCHEMA["mysql"])
    config = mysql_config("guard", dbname, user=user, password="ro-pass",
                          query_timeout_seconds=TIMEOUT)
    connection = create_connection(config)
    try:
        ops = create_operations(connection, DbSchemaExtractor(connection).extract("guard"))

        def snapshot() -> dict:
            with admin.cursor() as cursor:
                cursor.execute("SELECT * FROM t ORDER BY a")
                rows = cursor.fetchall()
                cursor.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE "
                               "TABLE_SCHEMA = %s ORDER BY 1", (dbname,))
                tables = cursor.fetchall()
                cursor.execute("SELECT @@GLOBAL.max_connections, @@GLOBAL.sql_mode, "
                               "IS_USED_LOCK(%s)", (LOCK,))
                settings = cursor.fetchall()
            return {"rows": rows, "tables": tables, "settings": settings, "files": _files()}

        yield ops, snapshot
    finally:
        connection.dispose()


@pytest.fixture(scope="module")
def duckdb_target(tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[tuple[Any, Callable[[], dict]]]:
    import duckdb

    PRIVATE_DIR.mkdir(exist_ok=True)
    folder = tmp_path_factory.mktemp("duckdb_guard")
    path = folder / "guard.duckdb"
    with duckdb.connect(str(path)) as setup:
        setup.execute(SCHEMA["duckdb"])
    (folder / "notes.csv").write_text("id,note\n1,x\n")
    config = duckdb_config("guard", path, files=[str(folder / "*.csv")],
                           query_timeout_seconds=TIMEOUT)
    connection = create_connection(config)
    ops = create_operations(connection, DbSchemaExtractor(connection).extract("guard"))

    def snapshot() -> dict:
        with connection.connect() as conn:
            raw = conn.connection.driver_connection
            settings = raw.execute(
                "SELECT current_setting('threads'), current_setting('enable_external_access'), "
                "current_setting('lock_configuration')").fetchall()
            temp = raw.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchall()
            databases = raw.execute("SELECT database_name FROM duckdb_databases() "
                                    "ORDER BY 1").fetchall()
        return {"file": hashlib.sha256(path.read_bytes()).hexdigest(), "files": _files(),
                "settings": settings, "temp_tables": temp, "databases": databases}

    yield ops, snapshot
    connection.dispose()


@pytest.mark.parametrize("case", own_cases("mysql"), ids=lambda c: c.id)
def test_mysql_engine_refuses_without_parser(mysql_target, case) -> None:  # noqa: ANN001
    _assert_no_trace(*mysql_target, case)


@pytest.mark.parametrize("case", own_cases("duckdb"), ids=lambda c: c.id)
def test_duckdb_engine_refuses_without_parser(duckdb_target, case) -> None:  # noqa: ANN001
    _assert_no_trace(*duckdb_target, case)


@pytest.mark.parametrize("backend", ["mysql", "duckdb"])
def test_parser_refuses_every_denied_case_and_allows_the_allowed(request, backend) -> None:  # noqa: ANN001
    ops, snapshot = request.getfixturevalue(f"{backend}_target")
    before = snapshot()
    for case in own_cases(backend):
        with pytest.raises(QueryRejectedError):
            ops.execute_select_query(case.sql, Sink())
    for case in own_cases(backend, ALLOWED):
        sink = Sink()
        ops.execute_select_query(case.sql, sink)
        assert sink.columns, case.sql
    assert snapshot() == before


def test_duckdb_reads_only_the_configured_files(duckdb_target) -> None:  # noqa: ANN001
    ops, _ = duckdb_target
    sink = Sink()
    ops.execute_select_query("SELECT * FROM notes", sink)
    assert sink.rows == [(1, "x")]
    with pytest.raises(Nl2SqlError, match="disabled by configuration|Permission"):
        ops.execute_select_query("SELECT * FROM read_csv('/etc/passwd')", Sink(),
                                 validate=False)
