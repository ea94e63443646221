"""SQLite backend: the file opened read-only (``mode=ro``) plus an authorizer and a deadline.

Engine layers (ARCHITECTURE.md, "Read-only, in layers"): ``mode=ro``; an authorizer that denies
writes, ATTACH/DETACH, PRAGMA setters and side-effect functions; no attached databases at all
(``SQLITE_LIMIT_ATTACHED = 0``, which also stops ``VACUUM INTO``); extension loading off; the
``sqlite3`` module runs one statement per call; a progress handler stops runaway queries.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.pool import QueuePool
from sqlalchemy.exc import DBAPIError

from nl2sql.config.registry import DbConnectionConfig
from nl2sql.db.base import Admission, DbConnection, DbOperations, QueryStats, ResultSink
from nl2sql._call_stop import stop_with
from nl2sql.db.sqlite_columnar import ColumnarTakeOver, columnar_available
from nl2sql.errors import DatabaseConnectionError, QueryExecutionError
from nl2sql.config.sample import ensure_bookstore
from nl2sql.sql_guard import is_denied_function
from nl2sql.sql_guard.denylist import SQLITE_READ_PRAGMAS, SQLITE_TABLES

logger = logging.getLogger(__name__)

# Pragmas that act even without a value.
_ACTING_PRAGMAS = frozenset({"optimize", "wal_checkpoint", "incremental_vacuum", "shrink_memory"})
_ALLOWED_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ,
                              sqlite3.SQLITE_RECURSIVE, sqlite3.SQLITE_TRANSACTION,
                              sqlite3.SQLITE_SAVEPOINT})
_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema", "sqlite_temp_master"})
#: VM instructions between two deadline checks (a Python call each: cheap at this spacing).
_PROGRESS_STEPS = 1000


def read_only_authorizer(action: int, arg1: str | None, arg2: str | None, _db: str | None,
                         _trigger: str | None) -> int:
    """Allow reads; deny every action that writes, attaches, sets or reaches outside, and
    reading the connection's own prepared statements (earlier callers' SQL)."""
    if action == sqlite3.SQLITE_READ and (arg1 or "").lower() in SQLITE_TABLES:
        return sqlite3.SQLITE_DENY
    if action in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION:
        # The parser layer's deny list, enforced again here where SQLite resolves the call.
        return sqlite3.SQLITE_DENY if is_denied_function(arg2 or "", "sqlite") \
            else sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        if name in SQLITE_READ_PRAGMAS or (arg2 is None and name not in _ACTING_PRAGMAS):
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_UPDATE and arg1 in _SCHEMA_TABLES:
        # SQLite reports this while it parses the schema for pragma table functions;
        # a real write to the schema table still fails on the mode=ro file.
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def query_authorizer() -> Callable[[int, str | None, str | None, str | None, str | None], int]:
    """The stricter authorizer for one user query (not for inspection): no transaction control,
    no PRAGMA statement except the reading ones (``PRAGMA table_info(t)``); ``pragma_*()``
    table functions inside a SELECT stay allowed."""
    select_seen = False

    def authorize(action: int, arg1: str | None, arg2: str | None, db: str | None,
                  trigger: str | None) -> int:
        nonlocal select_seen
        if action == sqlite3.SQLITE_SELECT:
            select_seen = True
        elif action in (sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT) or (
                action == sqlite3.SQLITE_PRAGMA and not select_seen
                and (arg1 or "").lower() not in SQLITE_READ_PRAGMAS):
            return sqlite3.SQLITE_DENY
        return read_only_authorizer(action, arg1, arg2, db, trigger)

    return authorize


class SqliteConnection(DbConnection):
    def statement_stop(self, raw: Any) -> Callable[[], object]:
        return raw.interrupt

    @property
    def path(self) -> Path:
        assert self.config.path is not None  # enforced by DbConnectionConfig
        return self.config.path

    def __init__(self, config: DbConnectionConfig) -> None:
        super().__init__(config)
        self._file_identity: tuple[int, int] | None = None
        self._identity_lock = threading.Lock()

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        """A pooled connection to the file as it is now: a file deleted or replaced (a new
        inode) since the engine opened it is noticed here, at every checkout (one ``stat``),
        and the pool is reopened on the new file, or the deletion is reported."""
        self._check_file()
        with super().connect() as connection:
            yield connection

    def _check_file(self) -> None:
        if self._engine is None:
            return
        try:
            stat = os.stat(self.path)
            identity: tuple[int, int] | None = (stat.st_dev, stat.st_ino)
        except OSError:
            identity = None
        if identity == self._file_identity:
            return
        with self._identity_lock:
            if self._engine is not None and identity != self._file_identity:
                logger.warning("SQLite file %s of database '%s' was %s; reopening it", self.path,
                               self.db_id, "deleted" if identity is None else "replaced")
                self.dispose()
        if identity is None and not self.config.is_bundled_sample:
            raise DatabaseConnectionError(
                f"SQLite file {self.path} for database '{self.db_id}' was deleted while the "
                f"server ran; restore it or fix its 'path' in dbs.yaml.", db_id=self.db_id)

    @property
    def read_only_uri(self) -> str:
        """The file as a read-only SQLite URI (what every connection to it opens)."""
        return f"file:{quote(str(self.path.resolve()))}?mode=ro"

    def _create_engine(self) -> Engine:
        path = self.path
        if not path.is_file():
            if not self.config.is_bundled_sample:
                what = "is a folder, not a file" if path.is_dir() else "does not exist"
                raise DatabaseConnectionError(
                    f"SQLite file {path} for database '{self.db_id}' {what}; fix its 'path' in "
                    f"dbs.yaml.", db_id=self.db_id)
            ensure_bookstore(path)
        if not _is_sqlite_file(path):  # SQLite itself says so only at the first statement
            raise DatabaseConnectionError(
                f"{path} (database '{self.db_id}') is not an SQLite database file; fix its "
                f"'path' in dbs.yaml (CSV or Parquet files: type duckdb, with 'files:').",
                db_id=self.db_id)
        uri = self.read_only_uri
        stat = path.stat()
        self._file_identity = (stat.st_dev, stat.st_ino)

        def connect() -> sqlite3.Connection:
            return sqlite3.connect(uri, uri=True, check_same_thread=False)

        # An explicit QueuePool: for a URL without a file name SQLAlchemy would pick its
        # SingletonThreadPool, which closes connections that other threads are still using
        # once more than five threads ask (a segfault under a threaded server). Extra
        # connections beyond the five kept are opened on demand and closed when returned.
        engine = create_engine("sqlite+pysqlite://", creator=connect, poolclass=QueuePool,
                               pool_size=5, max_overflow=-1)
        event.listen(engine, "connect", self._on_connect)
        return engine

    def _on_connect(self, dbapi_connection: sqlite3.Connection, _record: object) -> None:
        """Per-connection read-only guards; every connection of the engine gets them."""
        dbapi_connection.execute("PRAGMA busy_timeout = 5000")
        if hasattr(dbapi_connection, "enable_load_extension"):  # absent: built without it
            dbapi_connection.enable_load_extension(False)
        dbapi_connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        dbapi_connection.set_authorizer(read_only_authorizer)


class SqliteOperations(DbOperations):
    connection: SqliteConnection

    @contextmanager
    def _read_only(self, timeout: float, *, admit: Admission | None = None
                   ) -> Iterator[Connection]:
        with self.connection.connect() as conn:
            raw = conn.connection.driver_connection
            deadline = time.monotonic() + timeout
            raw.set_progress_handler(lambda: time.monotonic() > deadline, _PROGRESS_STEPS)
            try:
                self._admit(conn, admit)
                with stop_with(f"database '{self.db_id}'", raw.interrupt):
                    yield conn
            except DBAPIError as exc:
                raise self._translate(exc.orig, timeout) from None
            except sqlite3.Error as exc:
                raise self._translate(exc, timeout) from None
            finally:
                raw.set_progress_handler(None, 0)
                conn.rollback()

    def _stream(self, sql: str, sink: ResultSink, *, max_rows: int, timeout: float,
                is_explain: bool, admit: Admission | None = None) -> QueryStats:
        with self._read_only(timeout, admit=admit) as conn:
            raw = conn.connection.driver_connection
            cursor = raw.cursor()
            raw.set_authorizer(query_authorizer())
            # No value of a user query may grow past max_value_bytes: SQLite stops building it
            # ("string or blob too big") instead of materializing e.g. randomblob(3e8).
            length_limit = raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH,
                                        self.connection.config.max_value_bytes)
            try:
                cursor.execute(sql)  # sqlite3 refuses more than one statement per call
                if cursor.description is None:  # a statement, not a query (e.g. REINDEX)
                    raise QueryExecutionError(
                        f"SQLite ran no query on database '{self.db_id}': the statement "
                        f"returns no rows; send one SELECT, WITH or VALUES query.",
                        db_id=self.db_id)
                columns = [d[0] for d in cursor.description]
                return self._drain(cursor, sink, columns, max_rows,
                                   None if is_explain else
                                   self._columnar_take_over(raw, sql, sink, columns, max_rows))
            finally:
                cursor.close()
                raw.set_authorizer(read_only_authorizer)
                raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, length_limit)

    def _columnar_take_over(self, raw: sqlite3.Connection, sql: str, sink: ResultSink,
                            columns: list[str], max_rows: int) -> ColumnarTakeOver | None:
        """The hook that hands a big result written to a CSV file to the columnar export."""
        writer = getattr(sink, "sink", None)
        if not hasattr(writer, "adopt_file") or not hasattr(sink, "deadline") \
                or not columnar_available():
            return None
        return ColumnarTakeOver(raw, lambda: self.connection.read_only_uri, sql,
                                sink, writer, columns,  # type: ignore[arg-type]
                                max_rows=max_rows,
                                max_value_bytes=self.connection.config.max_value_bytes,
                                value_too_big=self._value_too_big_error,
                                tables=lambda: {table.name: [c.name for c in table.columns]
                                                for table in self.db_info.tables})

    def _translate(self, exc: BaseException | None, timeout: float) -> Exception:
        message = str(exc).strip().splitlines()[0] if exc else "unknown error"
        if message == "interrupted":
            return self._timeout_error(timeout)
        if message == "string or blob too big":
            return self._value_too_big_error()
        if message in ("not authorized", "authorization denied") or "too many attached" in message:
            message = "not authorized: the database is read-only (writes, ATTACH, settings " \
                      "and side-effect functions are refused)"
        return QueryExecutionError(f"SQLite rejected the query on database '{self.db_id}': "
                                   f"{message.rstrip('.')}; fix the SQL and try again.", db_id=self.db_id)


#: The first bytes of every SQLite 3 database file (https://sqlite.org/fileformat.html).
_SQLITE_HEADER = b"SQLite format 3\x00"


def _is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` starts as an SQLite database does (an empty file is an empty
    database); an unreadable file is left for the connection to report."""
    try:
        with path.open("rb") as file:
            head = file.read(len(_SQLITE_HEADER))
    except OSError:
        return True
    return not head or head == _SQLITE_HEADER
