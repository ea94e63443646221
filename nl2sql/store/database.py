"""Where an area of the store lives: a SQLite file (the default, in the data dir) or the shared
PostgreSQL database (``store: postgresql://...``), both through SQLAlchemy Core, so each area
writes its SQL once.

- SQLite: one pooled engine per file in a process (closing a file's last connection checkpoints
  its WAL, an fsync: 30-40 ms per write on a busy disk when every use opened and closed one);
  the pool is emptied when the file is replaced or removed while the process runs. WAL and a
  busy timeout so processes share the file, and every write one ``BEGIN IMMEDIATE`` transaction
  (one writer at a time, never a deadlock upgrading a read lock). A read of a file that does not
  exist returns its default and creates nothing.
- PostgreSQL: one pooled engine per URL in a process (statements planned for their values, not
  prepared once: a word search planned without its words walked every row); a write that must
  see the writes before it (replace by question, the next turn number) takes its area's
  transaction-level advisory lock, the same one-writer-at-a-time as SQLite; appends (the audit)
  take none.

Before first use in a process (for SQLite: whenever the file is new to it) the area's schema is
brought to the code's version (``schema``). A failure to reach the database is one sentence
naming the store without its password (``StoreError``).
"""

from __future__ import annotations

import sqlite3
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, exc, text
from sqlalchemy.engine import make_url

from nl2sql.config.dbs_yaml import STORE_DRIVER
from nl2sql.errors import StoreError

T = TypeVar("T")
BUSY_TIMEOUT_MS = 30_000
CONNECT_TIMEOUT_SECONDS = 10
#: The pooled engines of this process: PostgreSQL by URL, SQLite files by path (the
#: ``SQLITE_ENGINES`` used last).
_ENGINES: dict[str, Engine] = {}
_SQLITE_ENGINES: OrderedDict[str, Engine] = OrderedDict()
SQLITE_ENGINES = 32
_ENGINES_LOCK = threading.Lock()
#: (database, area) -> what ``_schema_key`` was when its schema was last brought up to date in
#: this process: checked once per process (per file, for SQLite), not once per call.
_READY: dict[tuple[str, str], object] = {}
_READY_LOCK = threading.Lock()


class Database:
    """One area's database. ``prepare(connection)`` brings its schema up to date (run inside a
    write transaction, before the first use)."""

    def __init__(self, engine: Engine, where: str, area: str,
                 prepare: Callable[[Connection], None]) -> None:
        self.engine = engine
        self.where = where  # for messages: a file path, or the URL without its password
        self.area = area
        self._prepare = prepare

    # -- use ------------------------------------------------------------------------------
    def read(self, work: Callable[[Connection], T], default: T) -> T:
        """``work(connection)`` in a read transaction; ``default`` when there is nothing yet."""
        if not self.exists():
            return default
        with self._connection(write=False) as connection:
            return work(connection)

    def write(self, work: Callable[[Connection], T], *, ordered: bool = True) -> T:
        """``work(connection)`` in a write transaction, after the writes before it when
        ``ordered`` (SQLite is always ordered)."""
        with self._connection(write=True, ordered=ordered) as connection:
            return work(connection)

    def stream(self, query: Any, batch: int = 1000) -> Iterator[Any]:
        """The rows of ``query``, read ``batch`` at a time (a server-side cursor on
        PostgreSQL), so a large result is never held in memory."""
        if not self.exists():
            return
        with self._connection(write=False) as connection:
            yield from connection.execution_options(yield_per=batch).execute(query)

    def exists(self) -> bool:
        return True

    @contextmanager
    def _connection(self, *, write: bool, ordered: bool = True) -> Iterator[Connection]:
        try:
            self._ensure_schema()
            with self.engine.connect() as connection:
                connection = connection.execution_options(nl2sql_write=write)
                with connection.begin():
                    if write and ordered:
                        self._order(connection, self.area)
                    yield connection
        except exc.OperationalError as error:
            raise StoreError(self._unreachable(error)) from None

    def _ensure_schema(self) -> None:
        key = self._schema_key()
        if key is not None and _READY.get((self.where, self.area)) == key:
            return
        with _READY_LOCK, self.engine.connect() as connection:
            connection = connection.execution_options(nl2sql_write=True)
            with connection.begin():
                self._order(connection, "schema")
                self._prepare(connection)
            _READY[(self.where, self.area)] = self._schema_key()

    def _schema_key(self) -> object:
        """What must stay the same for the schema to be known up to date (None: check)."""
        return True

    def _order(self, connection: Connection, area: str) -> None:
        """Take the write lock of ``area`` (SQLite: ``BEGIN IMMEDIATE`` already did)."""

    def _unreachable(self, error: exc.OperationalError) -> str:
        reason = str(error.orig or error).strip().splitlines()[0]
        return (f"The store {self.where} cannot be used: {reason}; check 'store:' in dbs.yaml "
                f"and that the database is up.")


class SqliteDatabase(Database):
    """An area in a SQLite file of its own."""

    def __init__(self, path: Path, area: str, prepare: Callable[[Connection], None],
                 busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
        super().__init__(sqlite_engine(path, busy_timeout_ms), str(path), area, prepare)
        self.path = path

    def _ensure_schema(self) -> None:
        key = self._schema_key()
        known = _READY.get((self.where, self.area))
        if key is not None and known == key:
            return
        if known is not None:  # the file was replaced or removed: no connection to the old one
            self.engine.dispose()
        super()._ensure_schema()

    def exists(self) -> bool:
        return self.path.is_file()

    def _connection(self, *, write: bool, ordered: bool = True) -> Any:
        if write:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        return super()._connection(write=write, ordered=ordered)

    def _schema_key(self) -> object:
        try:
            status = self.path.stat()
        except FileNotFoundError:
            return None
        return (status.st_dev, status.st_ino)

    def _unreachable(self, error: exc.OperationalError) -> str:
        reason = str(error.orig or error).strip().splitlines()[0]
        return f"The store file {self.where} cannot be used: {reason}."


class PostgresDatabase(Database):
    """An area in the shared PostgreSQL store (every area shares the one engine)."""

    def __init__(self, url: str, area: str, prepare: Callable[[Connection], None]) -> None:
        super().__init__(postgres_engine(url), safe_url(url), area, prepare)

    def _order(self, connection: Connection, area: str) -> None:
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                           {"key": zlib.crc32(f"nl2sql.store.{area}".encode())})


def postgres_engine(url: str) -> Engine:
    """The process's pooled engine for ``url`` (made on first use)."""
    with _ENGINES_LOCK:
        engine = _ENGINES.get(url)
        if engine is None:
            engine = _ENGINES[url] = create_engine(
                sqlalchemy_url(url), pool_pre_ping=True, pool_size=5, max_overflow=10,
                connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS,
                              "prepare_threshold": None})
        return engine


def sqlite_engine(path: Path, busy_timeout_ms: int) -> Engine:
    """The process's pooled engine for the SQLite file ``path`` (made on first use). One idle
    connection is kept per file, for the ``SQLITE_ENGINES`` files used last (each holds three
    file descriptors: the file, its WAL and its shared memory)."""
    key = f"sqlite:{path}:{busy_timeout_ms}"
    with _ENGINES_LOCK:
        engine = _SQLITE_ENGINES.pop(key, None)
        if engine is None:
            engine = create_engine(f"sqlite:///{path}", pool_size=1, max_overflow=16,
                                   connect_args={"timeout": busy_timeout_ms / 1000})
            event.listen(engine, "connect", _sqlite_setup(busy_timeout_ms))
            event.listen(engine, "begin", _sqlite_begin)
        _SQLITE_ENGINES[key] = engine  # the newest last
        while len(_SQLITE_ENGINES) > SQLITE_ENGINES:
            _SQLITE_ENGINES.popitem(last=False)[1].dispose()
        return engine


def dispose_engines() -> None:
    """Close every pooled connection of this process's stores (tests, a server's end)."""
    with _ENGINES_LOCK:
        for engine in [*_ENGINES.values(), *_SQLITE_ENGINES.values()]:
            engine.dispose()
        _ENGINES.clear()
        _SQLITE_ENGINES.clear()


def sqlalchemy_url(url: str) -> str:
    """A ``store:`` URL (``postgresql://``, ``postgres://``) with SQLAlchemy's psycopg (3)
    driver."""
    _scheme, _, rest = url.partition("://")
    return f"{STORE_DRIVER}://{rest}"


def safe_url(url: str) -> str:
    """``url`` for messages and logs: the password left out."""
    try:
        return make_url(sqlalchemy_url(url)).set(drivername="postgresql").render_as_string(
            hide_password=True)
    except exc.ArgumentError:
        return "(the 'store:' URL)"


def _sqlite_setup(busy_timeout_ms: int) -> Callable[[Any, Any], None]:
    def setup(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        """Autocommit at the driver (``_sqlite_begin`` opens each transaction), the busy
        timeout, and WAL. Switching a new file to WAL needs it alone, and SQLite answers
        "database is locked" at once instead of waiting when another connection holds it:
        that is retried within the busy timeout."""
        dbapi_connection.isolation_level = None
        dbapi_connection.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
        # WAL with NORMAL: a commit survives the process (a crash, a kill), not a power cut, and
        # costs no fsync (40 -> 1 ms per audit record on this VM's shared disk, bench/store.py)
        dbapi_connection.execute("PRAGMA synchronous = NORMAL")
        deadline = time.monotonic() + busy_timeout_ms / 1000
        while True:
            try:
                if dbapi_connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    dbapi_connection.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    return setup


def _sqlite_begin(connection: Connection) -> None:
    write = connection.get_execution_options().get("nl2sql_write")
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
