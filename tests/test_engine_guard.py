"""The engine layers hold on their own: every DENIED case of the guard corpus, run with the
parser layer switched off (``validate=False``), comes back as a one-line error and leaves no
trace: no row, schema, sequence, large object, file, setting, lock, notification or attached
database survives. With the parser on, every DENIED case is a ``QueryRejectedError``.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import psycopg
import pytest
from conftest import pg_config, sqlite_config
from guard_corpus import ALLOWED, SCHEMA, cases_for

from nl2sql.db.base import DbConnection, DbOperations
from nl2sql.db.base import create_connection, create_operations
from nl2sql.errors import QueryExecutionError, QueryRejectedError
from nl2sql.inspection import DbSchemaExtractor

# Files the corpus would create on the (local) database server or next to SQLite. Cases run
# with "/tmp/guard_" moved into a private folder anyone (the server's user too) may write, so
# that concurrent test runs cannot disturb the "no file appeared" check.
PRIVATE_DIR = Path(tempfile.gettempdir()) / f"nl2sql_engine_guard_{uuid.uuid4().hex[:10]}"
GUARD_FILES = [PRIVATE_DIR / name for name in ("guard_copy.txt", "guard_lo", "guard_x.db",
                                                "guard_x")]


def _private_paths(sql: str) -> str:
    return sql.replace("/tmp/guard_", f"{PRIVATE_DIR}/guard_")
TIMEOUT = 0.3  # below the corpus's 1-second sleeps, so the timeout has to stop them


class DiscardingRowSink:
    """Counts what arrives and keeps nothing: the row-streaming branch."""

    def __init__(self) -> None:
        self.rows = 0

    def begin(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.rows += len(rows)


class DiscardingCsvSink(DiscardingRowSink):
    """The same with ``write_csv_records``: the CSV (COPY) branch on Postgres."""

    def write_csv_records(self, records: Sequence[bytes]) -> None:
        self.rows += len(records)


@dataclass
class Target:
    connection: DbConnection
    ops: DbOperations
    snapshot: Callable[[], dict[str, Any]]


def _remove_guard_files() -> None:
    shutil.rmtree(PRIVATE_DIR, ignore_errors=True)
    PRIVATE_DIR.mkdir()
    PRIVATE_DIR.chmod(0o777)


def _files() -> dict[str, bool]:
    return {str(p): p.exists() for p in GUARD_FILES}


@pytest.fixture(scope="module")
def sqlite_target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    path = tmp_path_factory.mktemp("engine") / "guard.db"
    with sqlite3.connect(path) as setup:
        setup.executescript(SCHEMA["sqlite"])
    setup.close()
    connection = create_connection(sqlite_config("guard", path, query_timeout_seconds=TIMEOUT))

    def snapshot() -> dict[str, Any]:
        plain = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            state: dict[str, Any] = {
                "rows": plain.execute("SELECT * FROM t ORDER BY a").fetchall(),
                "schema": plain.execute("SELECT * FROM sqlite_master ORDER BY name").fetchall()}
        finally:
            plain.close()
        state["file"] = hashlib.sha256(path.read_bytes()).hexdigest()
        state["files"] = _files()
        with connection.connect() as conn:
            raw = conn.connection.driver_connection
            state["attached"] = [r[1] for r in raw.execute("PRAGMA database_list")]
            state["pragmas"] = {p: raw.execute(f"PRAGMA {p}").fetchone()[0] for p in
                                ("query_only", "writable_schema", "journal_mode",
                                 "trusted_schema")}
        return state

    info = DbSchemaExtractor(connection).extract("guard")
    yield Target(connection, create_operations(connection, info), snapshot)
    connection.dispose()


@pytest.fixture(scope="module")
def postgres_target(pg_server: str) -> Iterator[Target]:
    dbname = f"nl2sql_guard_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{dbname}"')
    dsn = pg_server.replace("dbname=postgres", f"dbname={dbname}")
    with psycopg.connect(dsn, autocommit=True) as setup:
        setup.execute(SCHEMA["postgres"])
    config = pg_config("guard", dbname, query_timeout_seconds=TIMEOUT)
    connection = create_connection(config)
    listener = psycopg.connect(dsn, autocommit=True)
    listener.execute("LISTEN c")

    def snapshot() -> dict[str, Any]:
        with psycopg.connect(dsn, autocommit=True) as admin:
            one = lambda sql: admin.execute(sql).fetchall()  # noqa: E731
            state: dict[str, Any] = {
                "rows": one("SELECT * FROM t ORDER BY a"),
                "schema": one("SELECT relname, relkind, relacl::text, obj_description(oid), "
                              "relispopulated FROM pg_class WHERE relnamespace = "
                              "'public'::regnamespace ORDER BY relname"),
                "sequence": one("SELECT last_value, is_called FROM s"),
                "large_objects": one("SELECT count(*) FROM pg_largeobject_metadata"),
                # Other test sessions share the server: count this database's locks only.
                "advisory_locks": one("SELECT count(*) FROM pg_locks l JOIN pg_database d ON "
                                      "d.oid = l.database WHERE l.locktype = 'advisory' AND "
                                      "d.datname = current_database()"),
                "prepared": one("SELECT count(*) FROM pg_prepared_xacts"),
            }
        state["files"] = _files()
        state["notifications"] = [n.payload for n in listener.notifies(timeout=0.02)]
        # The pooled engine session and a brand-new one keep their read-only settings.
        probe = ("SELECT current_setting('default_transaction_read_only'), current_user, "
                 "current_setting('statement_timeout'), current_setting('search_path'), "
                 "current_setting('work_mem')")
        with connection.connect() as conn:
            state["pooled_session"] = tuple(conn.exec_driver_sql(probe).one())
        with create_connection(config) as fresh, fresh.connect() as conn:
            state["new_session"] = tuple(conn.exec_driver_sql(probe).one())
        return state

    info = DbSchemaExtractor(connection).extract("guard")
    yield Target(connection, create_operations(connection, info), snapshot)
    listener.close()
    connection.dispose()
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


@pytest.fixture(scope="module", autouse=True)
def _private_dir() -> Iterator[None]:
    _remove_guard_files()
    yield
    shutil.rmtree(PRIVATE_DIR, ignore_errors=True)


#: Denied cases a database engine runs without an error, and why nothing survives them
#: (asserted by the snapshot: the listener gets no notification, every backend lives on).
ENGINE_SILENT = {
    "SELECT pg_notify('c', 'x')": "a notification is sent at commit; the engine rolls back",
    "SELECT pg_cancel_backend(0)": "pid 0 is no backend: a warning, no signal",
    "SELECT pg_terminate_backend(0)": "pid 0 is no backend: a warning, no signal",
    "SELECT table_to_xml('t', true, false, '')": "reads t in the read-only transaction",
    "SELECT schema_to_xml('public', true, false, '')": "reads public's tables, read-only",
    "SELECT ts_rewrite(to_tsquery('a'), 'SELECT to_tsquery(b), to_tsquery(b) FROM t')":
        "runs a read in the read-only transaction",
    "SELECT query_to_xmlschema('SELECT 1', true, false, '')": "describes a harmless SELECT",
    # The seed outlives the rollback; the engine resets it after every call (see
    # test_postgres_random_seed_does_not_leak_to_the_next_caller).
    "SELECT setseed(0.42)": "the engine reseeds the session after the call",
    "SELECT random() FROM t, LATERAL (SELECT setseed(0.42)) AS s":
        "the engine reseeds the session after the call",
    "SELECT * FROM ts_stat('SELECT to_tsvector(b) FROM t')": "runs a read in the read-only "
                                                             "transaction",
}


def _assert_engine_refuses(target: Target, case: Any, sink: object) -> None:
    """An error, one line, and no trace. Cases whose effect is "none" are harmless at the
    engine (e.g. ``;SELECT 1``): for them only "no trace" is required."""
    before = target.snapshot()
    try:
        target.ops.execute_select_query(_private_paths(case.sql), sink,  # type: ignore[arg-type]
                                        validate=False)
    except QueryExecutionError as exc:
        message = str(exc)
        assert message and "\n" not in message and "Traceback" not in message
    except UnicodeEncodeError:  # text that is not UTF-8 (a lone surrogate): no driver sends it
        pass
    else:
        assert case.effect == "none" or case.sql in ENGINE_SILENT, \
            f"the engine ran {case.sql!r} without an error"
    assert target.snapshot() == before
    # The next call on the same connection still works (with time to spare: the 0.3 s limit
    # is for the corpus's sleeps, and a loaded machine has stalled this 3-row read past it).
    check = DiscardingRowSink()
    assert target.ops.execute_select_query("SELECT a FROM t", check,
                                           timeout_seconds=30).row_count == 3


def _ids(cases: list) -> list[str]:
    return [case.id for case in cases]


SQLITE_DENIED = cases_for("sqlite")
POSTGRES_DENIED = cases_for("postgres")


@pytest.mark.parametrize("case", SQLITE_DENIED, ids=_ids(SQLITE_DENIED))
def test_sqlite_engine_refuses_without_parser(sqlite_target: Target, case: Any) -> None:
    _assert_engine_refuses(sqlite_target, case, DiscardingCsvSink())


@pytest.mark.parametrize("case", POSTGRES_DENIED, ids=_ids(POSTGRES_DENIED))
def test_postgres_engine_refuses_without_parser_copy_path(postgres_target: Target,
                                                          case: Any) -> None:
    _assert_engine_refuses(postgres_target, case, DiscardingCsvSink())


@pytest.mark.parametrize("case", POSTGRES_DENIED, ids=_ids(POSTGRES_DENIED))
def test_postgres_engine_refuses_without_parser_row_path(postgres_target: Target,
                                                         case: Any) -> None:
    _assert_engine_refuses(postgres_target, case, DiscardingRowSink())


def test_postgres_engine_cannot_signal_another_backend(postgres_target: Target,
                                                        pg_server: str) -> None:
    """The admin cases with a real pid: the dropped role may not signal other sessions."""
    with psycopg.connect(pg_server) as victim:
        pid = victim.info.backend_pid
        for function in ("pg_cancel_backend", "pg_terminate_backend"):
            with pytest.raises(QueryExecutionError, match="permission denied|must be a (member|superuser)"):
                postgres_target.ops.execute_select_query(
                    f"SELECT {function}({pid})", DiscardingCsvSink(), validate=False)
        assert victim.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_full_path_rejects_every_denied_case_before_the_database(
        request: pytest.FixtureRequest, backend: str) -> None:
    target: Target = request.getfixturevalue(f"{backend}_target")
    before = target.snapshot()
    for case in cases_for(backend):
        with pytest.raises(QueryRejectedError):
            target.ops.execute_select_query(case.sql, DiscardingCsvSink())
    assert target.snapshot() == before


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_allowed_cases_run_through_every_layer(request: pytest.FixtureRequest,
                                               backend: str) -> None:
    target: Target = request.getfixturevalue(f"{backend}_target")
    for case in cases_for(backend, ALLOWED):
        sink = DiscardingCsvSink()
        target.ops.execute_select_query(case.sql, sink)
        assert sink.columns, case.sql


def test_inspection_still_works_under_the_sqlite_authorizer(sqlite_target: Target) -> None:
    info = DbSchemaExtractor(sqlite_target.connection).extract("guard")
    table = info.table("t")
    assert table is not None and table.primary_key == ["a"]
    assert [c.name for c in table.columns] == ["a", "b"]


def test_the_server_could_write_the_guard_files(postgres_target: Target, pg_server: str) -> None:
    """Without the engine layers the server can write there: the "no file" check can fail."""
    target = GUARD_FILES[0]
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f"COPY (SELECT 1) TO '{target}'")
    assert target.exists()
    target.unlink()


@pytest.mark.parametrize("chinook", ["postgres"], indirect=True)
def test_postgres_sessions_pin_standard_conforming_strings(chinook) -> None:
    from sqlalchemy import text

    from nl2sql.db.base import create_connection

    with create_connection(chinook.config) as db, db.connect() as conn:
        assert conn.execute(text("SHOW standard_conforming_strings")).scalar() == "on"


class KeepingRowSink(DiscardingRowSink):
    """Keeps the rows (for the few single-row probes below)."""

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.kept = [tuple(r) for r in rows]


def test_postgres_random_seed_does_not_leak_to_the_next_caller(postgres_target: Target,
                                                               pg_server: str) -> None:
    """setseed survives the rollback; after one caller's setseed(0.42) the next caller on the
    same pooled session must not get the random() that seed predicts."""
    dsn = pg_server
    with psycopg.connect(dsn) as plain:
        plain.execute("SELECT setseed(0.42)")
        predicted = plain.execute("SELECT random()").fetchone()[0]  # type: ignore[index]
    config = postgres_target.connection.config
    with create_connection(config) as own:  # an empty pool: both calls share one session
        ops = create_operations(own, postgres_target.ops.db_info)
        first, second = KeepingRowSink(), KeepingRowSink()
        ops.execute_select_query("SELECT setseed(0.42), pg_backend_pid()", first,
                                 validate=False)
        ops.execute_select_query("SELECT random(), pg_backend_pid()", second)
    assert first.kept[0][1] == second.kept[0][1], "the two calls did not share a session"
    assert second.kept[0][0] != predicted
