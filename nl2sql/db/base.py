"""Backend-neutral connection and operations interfaces (layer 4 in ARCHITECTURE.md).

Backend facts (``sqlglot_dialect``, ``default_schema``...) come from the registry entry
(``nl2sql.backends``) and driver differences are class attributes; never
``isinstance`` checks or dialect-name tests in the callers.
"""

from __future__ import annotations

import copy
import functools
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlglot import exp

from nl2sql.config.registry import DbConnectionConfig
from nl2sql.errors import (ConfigError, DatabaseConnectionError, QueryExecutionError,
                           QueryTimeoutError, UnknownTableError)
from nl2sql.db.catalogue_reads import CatalogueRead
from nl2sql.db.logins import LoginPrivileges
from nl2sql.schema.models import DbInfo, TableInfo
from nl2sql.sql_guard.value_sizes import check_value_sizes
from nl2sql.sql_guard.user_functions import (NO_USER_FUNCTIONS, UserFunctions,
                                             check_user_functions, refuse_view)
from nl2sql.sql_guard import validate_read_only
from nl2sql.db import lookup
from nl2sql._call_stop import CallStop, stop_with
from nl2sql._tracing import span
from nl2sql._worker import call_stoppably

if TYPE_CHECKING:
    from nl2sql.sql_guard import ValidatedQuery


@dataclass(frozen=True)
class Admission:
    """A check of one call against the catalogue's user-defined functions: ``check`` raises to
    refuse. What the call reaches, for a backend that looks up only that
    (``admission_functions``): the query's ``expression``, or the ``relation`` it reads (a row
    lookup, a sample)."""

    check: Callable[[UserFunctions], None]
    expression: exp.Expr | None = None
    relation: str | None = None
    #: The query's calls as its text writes them (``ValidatedQuery.written_calls``).
    written_calls: frozenset[tuple[str | None, str]] = frozenset()

    def __call__(self, functions: UserFunctions) -> None:
        self.check(functions)


class DbConnection(ABC):
    """A lazily created SQLAlchemy engine for one configured database.

    Engines are read-only at the engine level (SQLite ``mode=ro``; Postgres read-only
    transactions): nl2sql never writes to the databases it describes.
    """

    #: Sample rows are read in primary-key order only from tables up to this many rows (None:
    #: always; an index makes it cheap). Without indexes the order costs a sort of the table.
    sample_order_max_rows: ClassVar[int | None] = None
    #: Modules the query path imports lazily (the driver's first connect, pyarrow's pandas
    #: shim), loaded ahead by ``nl2sql.operations.first_use``: two threads must not import
    #: them at once.
    first_use_imports: ClassVar[tuple[str, ...]] = ()

    #: The engine builds a value in nl2sql's own memory (DuckDB) or can die building a huge one
    #: (Spark's executor): a literal count over max_value_bytes is refused before the query runs.
    refuses_big_literal_counts: ClassVar[bool] = False
    #: Building a big value kills the engine or runs past its time limit: a count computed from
    #: the data is refused too.
    refuses_computed_counts: ClassVar[bool] = False
    #: The catalogue version (``catalogue_version``) is read with SQL on a connection.
    catalogue_version_in_sql: ClassVar[bool] = False

    def __init__(self, config: DbConnectionConfig) -> None:
        self.config = config
        self._engine: Engine | None = None
        self._engine_lock = threading.Lock()
        self._user_functions = CatalogueRead(self.read_user_functions)
        self._login: LoginPrivileges | None = None
        self._stop: CallStop | None = None
        self._keywords: frozenset[str] | None = None

    @property
    def db_id(self) -> str:
        return self.config.db_id

    @property
    def sqlglot_dialect(self) -> str:
        """sqlglot dialect name used to parse and render SQL for this backend (registry)."""
        return self.config.backend.sqlglot_dialect

    @property
    def schema(self) -> str | None:
        """Schema to reflect and query (None: the backend's default)."""
        return self.config.effective_schema

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            with self._engine_lock:  # concurrent first calls (a threaded server) build one
                if self._engine is None:
                    self._engine = self._create_engine()
        return self._engine

    def load_driver(self) -> None:
        """Load this database's driver without connecting: creating the SQLAlchemy engine
        imports the dialect's DBAPI module (``operations.first_use`` runs it once per backend,
        before concurrent calls import it)."""
        self.engine  # noqa: B018

    def user_functions(self) -> UserFunctions:
        """The database's user-defined functions and the views that reach them, as the
        catalogue lists them now (its version read on a connection of its own)."""
        if not self.catalogue_version_in_sql:
            return self.user_functions_at(self.catalogue_version(None))
        with self.connect() as conn:
            return self.user_functions_at(self.catalogue_version(conn), conn)

    def warm_user_functions(self) -> None:
        """Read what the first call would otherwise wait for (at the server's start)."""
        self.user_functions()

    def admission_functions(self, conn: Any, admission: Admission) -> UserFunctions:
        """The user-defined functions ``admission`` is checked against, read on ``conn`` (the
        call's own connection, its transaction open): by default the whole catalogue at its
        current version (``user_functions_at``)."""
        return self.user_functions_at(self.catalogue_version(conn), conn)

    def user_functions_at(self, version: Hashable, conn: Any = None) -> UserFunctions:
        """The user-defined functions at catalogue ``version`` (read just before on ``conn``,
        the caller's connection): the kept read, or a new one on ``conn`` when it moved."""
        return self._user_functions.get(version, conn)

    def catalogue_version(self, conn: Any) -> Hashable:
        """A value that changes whenever ``read_user_functions`` could answer differently,
        read on ``conn`` (the call's own connection) before the call runs anything. Default:
        a catalogue that cannot change (no user functions)."""
        return None

    def read_user_functions(self, conn: Any = None) -> UserFunctions:
        """The catalogue's user-defined functions, read on ``conn`` (None: a connection of
        its own); a backend without any: none."""
        return NO_USER_FUNCTIONS

    @contextmanager
    def _on(self, conn: Connection | None) -> Iterator[Connection]:
        """``conn``, or a pooled connection of its own when None."""
        if conn is not None:
            yield conn
        else:
            with self.connect() as own:
                yield own

    def keywords(self) -> frozenset[str]:
        """The words this engine's parser takes for keywords where a name could stand, so that
        a column or alias named so must be quoted (lowercase; read once, on the error path of
        a query that failed to parse). None known: empty."""
        if self._keywords is None:
            with self.connect() as conn:
                self._keywords = frozenset(w.lower() for w in self.read_keywords(conn))
        return self._keywords

    def read_keywords(self, conn: Connection) -> list[str]:
        """The engine's keyword list (``keywords``); a backend whose syntax errors name the
        word itself (SQLite's ``near "order"``) reads none."""
        return []

    def login_privileges(self) -> LoginPrivileges | None:
        """What the configured login may do now (None: a backend without logins, whose files
        nl2sql opens read-only); read at every call (a GRANT counts at once)."""
        self._login = self.read_login_privileges()
        return self._login

    def known_login_privileges(self) -> LoginPrivileges | None:
        """The last ``login_privileges`` read, without connecting (None: not read yet)."""
        return self._login

    def read_login_privileges(self) -> LoginPrivileges | None:
        return None

    def check_login(self) -> None:
        """With ``require_read_only_login``, refuse a login that can write or is privileged."""
        if self.config.require_read_only_login:
            login = self.login_privileges()
            if login is not None and not login.read_only:
                raise login.refusal(self.db_id)

    def check_query(self, query: ValidatedQuery) -> None:
        """What the guard cannot know alone, checked before the engine runs ``query``: the
        login (``require_read_only_login``), literal value sizes. (User-defined functions are
        checked in the query's own transaction: ``query_admission``.)"""
        self.check_login()
        if self.refuses_big_literal_counts:
            check_value_sizes(query.expression, self.config.max_value_bytes, db_id=self.db_id,
                              computed_counts=not self.refuses_computed_counts,
                              dialect=self.sqlglot_dialect)

    def query_admission(self, query: ValidatedQuery) -> Admission:
        """Refuses ``query`` when it reaches a user-defined function dbs.yaml does not allow."""
        def admit(functions: UserFunctions) -> None:
            check_user_functions(query.expression, functions, self.config.allowed_functions,
                                 db_id=self.db_id, sql=query.sql, dialect=self.sqlglot_dialect,
                                 written=query.written_calls)
        return Admission(admit, expression=query.expression, written_calls=query.written_calls)

    def relation_admission(self, name: str) -> Admission:
        """Refuses reading the table or view ``name`` when it is a view reaching a
        user-defined function dbs.yaml does not allow (a row lookup, a sample)."""
        def admit(functions: UserFunctions) -> None:
            refuse_view(name, None, functions, self.config.allowed_functions, db_id=self.db_id)
        return Admission(admit, relation=name)

    def check_relation(self, name: str) -> None:
        """``relation_admission`` against the catalogue as it is now (on a connection of its
        own where the catalogue is read with SQL)."""
        admission = self.relation_admission(name)
        with self._on(None) if self.catalogue_version_in_sql else nullcontext() as conn:
            admission(self.admission_functions(conn, admission))

    @abstractmethod
    def _create_engine(self) -> Engine:
        """Build the engine; raise ``DatabaseConnectionError`` for a missing database."""

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        """A pooled connection; a failure to connect becomes ``DatabaseConnectionError``. Under
        ``stopped_by``, what it runs is stopped with the switch (and none starts after)."""
        try:
            connection = self.engine.connect()
        except DBAPIError as exc:
            reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
            raise DatabaseConnectionError(
                f"Cannot connect to database '{self.db_id}': {reason}; check its connection "
                f"settings in dbs.yaml.", db_id=self.db_id) from None
        with connection:
            switch = self._stop
            stop = switch and self.statement_stop(connection.connection.driver_connection)
            if stop is None:
                yield connection
                return
            with stop_with(f"database '{self.db_id}'", stop, switch):
                try:
                    yield connection
                except DBAPIError:
                    if not switch.stopped:
                        raise
                    # stopped on purpose: not a statement failing, which callers work around
                    raise QueryExecutionError(f"The call was cancelled while its query ran on "
                                              f"database '{self.db_id}'.",
                                              db_id=self.db_id) from None

    @contextmanager
    def stopped_by(self, switch: CallStop | None) -> Iterator[None]:
        """While the block runs, every connection this object hands out (in any thread) is
        stopped by ``switch``: for work that has no stop of its own per query, such as the
        inspection statements of an annotation, some of them on threads of their own."""
        self._stop = switch
        try:
            yield
        finally:
            self._stop = None

    def statement_stop(self, raw: Any) -> Callable[[], object] | None:
        """How another thread stops what the driver connection ``raw`` runs (each backend its
        own way: a cancel request, an interrupt, KILL QUERY), made in the thread that holds
        ``raw``; None: it cannot be stopped."""
        return None

    def dispose(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def __enter__(self) -> DbConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.dispose()


# -- runtime query execution -----------------------------------------------------------------

@dataclass
class QueryStats:
    """What a streamed query produced; the rows themselves went to the sink."""

    columns: list[str]
    row_count: int
    truncated: bool  # True when the row cap (or the sink's byte budget) cut the result
    elapsed_seconds: float = 0.0
    truncated_by: str | None = None  # "rows" (max_rows) or "bytes" (the sink's budget)
    #: Each column's type as the database described it (``nl2sql.workspace.column_types``);
    #: None where the backend's path did not learn them (the sink may know from the values).
    column_types: list[str | None] | None = None
    #: The time zone (an IANA name) the database wrote zoned timestamps in, its session's,
    #: where a column is a timestamp and the backend says; None otherwise.
    time_zone: str | None = None

    def __post_init__(self) -> None:
        if self.truncated and self.truncated_by is None:
            self.truncated_by = "rows"


@runtime_checkable
class ResultSink(Protocol):
    """Receives a result in batches, so no backend ever holds the whole result in memory.

    ``write_rows`` may return how many of the rows it kept: fewer than it was given means its
    byte budget is spent, and the query stops there, reported as truncated (``None``: all).

    A backend may hand a value over as the text a CSV export writes for it (MySQL's DECIMAL); a
    sink that compares values by type sets ``python_values = True`` to get the driver's Python
    value instead (``Decimal``), see ``wants_python_values``."""

    def begin(self, columns: Sequence[str]) -> None: ...

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> int | None: ...


@runtime_checkable
class CsvResultSink(ResultSink, Protocol):
    """A sink that also takes ready-made CSV records (one record per item, no header)."""

    def write_csv_records(self, records: Sequence[bytes]) -> int | None: ...


_TAKES_CSV: dict[type, bool] = {}


def takes_csv_records(sink: ResultSink) -> bool:
    """``isinstance(sink, CsvResultSink)``, remembered per sink class: the check of a
    runtime-checkable Protocol lists the protocol's members on every call in Python 3.11
    (~15 us, a tenth of a SQLite point query's execution)."""
    kind = type(sink)
    known = _TAKES_CSV.get(kind)
    if known is None:
        known = _TAKES_CSV[kind] = isinstance(sink, CsvResultSink)
    return known


def wants_python_values(sink: ResultSink) -> bool:
    """Whether ``sink`` asked for every value as its driver's Python type (``python_values``),
    not as export text: nl2sql-eval's scorer compares a DECIMAL by value."""
    return bool(getattr(sink, "python_values", False))


class SinkFull(Exception):
    """Raised through a backend's loop when the sink's byte budget is spent."""


class _BoundedSink:
    """Wraps a sink for one query: the deadline holds while rows are converted and written
    (not only while the engine runs), and a sink that keeps fewer rows than it was given
    stops the query. Counts what the sink kept."""

    def __init__(self, sink: ResultSink, deadline: float, on_timeout: Any) -> None:
        self.sink = sink
        self.deadline = deadline
        self.on_timeout = on_timeout  # () -> the backend's QueryTimeoutError
        self.columns: list[str] = []
        self.rows = 0

    @property
    def bytes_written(self) -> int | None:
        return getattr(self.sink, "bytes_written", None)

    @property
    def python_values(self) -> bool:
        return wants_python_values(self.sink)

    def begin(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)
        self.sink.begin(columns)

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self._kept(len(rows), self.sink.write_rows(rows))

    def _kept(self, given: int, kept: int | None) -> None:
        self.rows += given if kept is None else kept
        if kept is not None and kept < given:
            raise SinkFull
        if time.monotonic() > self.deadline:
            raise self.on_timeout()


class _BoundedCsvSink(_BoundedSink):
    def write_csv_records(self, records: Sequence[bytes]) -> None:
        self._kept(len(records), self.sink.write_csv_records(records))  # type: ignore[attr-defined]

    def write_csv_block(self, data: memoryview, ends: Sequence[int]) -> None:
        self._kept(len(ends), self.sink.write_csv_block(data, ends))  # type: ignore[attr-defined]


class _RowCounter:
    """A result sink that only counts: checking that a query runs needs no rows kept."""

    def begin(self, columns: Sequence[str]) -> None:
        pass

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        pass


class DbOperations(ABC):
    """Read-only runtime operations on one database, bounded in rows and time.

    Table and column names are checked against the cached schema (``DbInfo``) before any SQL is
    built; values are always bound parameters.
    """

    #: Rows handed to a sink per call (bounds memory while keeping per-call overhead low).
    batch_size: ClassVar[int] = 2000
    #: Bytes of CSV a batch may grow to before batches get smaller (see ``_drain``).
    batch_bytes: ClassVar[int] = 4 << 20
    #: Who the database is told is asking (``for_session``): PostgreSQL sets both in each
    #: query's transaction (``application_name``, ``SET LOCAL ROLE``), MySQL/MariaDB takes the
    #: role for each query (``SET ROLE``); SQLite, DuckDB and Spark have no roles.
    application_name: str = "nl2sql"
    session_role: str | None = None

    def __init__(self, connection: DbConnection, db_info: DbInfo) -> None:
        self.connection = connection
        self.db_info = db_info

    def for_session(self, application_name: str, role: str | None) -> DbOperations:
        """These operations for one caller: the same connection and schema, the database told
        ``application_name`` and, where it has roles (PostgreSQL), taking ``role``."""
        if (application_name, role) == (self.application_name, self.session_role):
            return self
        view = copy.copy(self)
        view.application_name, view.session_role = application_name, role
        return view

    @property
    def db_id(self) -> str:
        return self.connection.db_id

    def role_error(self, message: str) -> ConfigError:
        """One sentence for a ``session_role`` the login may not take (the server's
        ``message``), naming the GRANT that fixes it."""
        return ConfigError(
            f"Database '{self.db_id}': the login cannot take the role '{self.session_role}' "
            f"that a group's db_role names ({message}); run GRANT {self.session_role} TO "
            f"{self.connection.config.user or 'the login'} on the database, or change db_role "
            f"in dbs.yaml.", db_id=self.db_id)

    def execute_select_query(self, query: ValidatedQuery | str, sink: ResultSink, *,
                             max_rows: int | None = None, timeout_seconds: float | None = None,
                             validate: bool = True) -> QueryStats:
        """Run one read-only query, streaming its rows into ``sink``.

        A plain string is checked by the parser guard first; ``validate=False`` switches that
        layer off and exists only so tests can prove the engine layers hold on their own.
        """
        config = self.connection.config
        max_rows = max_rows or config.max_rows
        timeout = timeout_seconds or config.query_timeout_seconds
        admit: Admission | None = None
        if isinstance(query, str) and not validate:
            sql, is_explain = query, False
        else:
            if isinstance(query, str):
                query = validate_read_only(query, self.connection.sqlglot_dialect,
                                           allowed_functions=config.allowed_functions)
            self.connection.check_query(query)
            admit = self.connection.query_admission(query)
            sql, is_explain = query.sql, query.is_explain
        started = time.monotonic()
        bounded_type = _BoundedCsvSink if takes_csv_records(sink) else _BoundedSink
        bounded = bounded_type(sink, started + timeout, lambda: self._timeout_error(timeout))
        stream = functools.partial(self._stream, sql, bounded, max_rows=max_rows,
                                   timeout=timeout, is_explain=is_explain, admit=admit)
        with span("nl2sql.query", db__namespace=self.db_id, db__query__text=sql,
                  db__system__name=config.type.value) as current:
            try:  # in the main thread: in a worker, so that Ctrl-C stops it
                stats = call_stoppably(stream, name="the interrupted call")
            except SinkFull:
                stats = QueryStats(bounded.columns, bounded.rows, True, truncated_by="bytes")
            current.set_attribute("db.response.returned_rows", stats.row_count)
        stats.elapsed_seconds = time.monotonic() - started
        return stats

    def count_rows(self, query: str, *, limit: int) -> int:
        """Check ``query`` with the read-only guard, run it under the database's time limit
        and count its rows (at most ``limit``; none are kept): "does this SQL still run"."""
        return self.execute_select_query(query, _RowCounter(), max_rows=limit).row_count

    def _value_too_big_error(self) -> Exception:
        limit = self.connection.config.max_value_bytes
        return QueryExecutionError(
            f"A value in the result of the query on database '{self.db_id}' is larger than the "
            f"limit of {limit:,} bytes (max_value_bytes); select a part of it (e.g. substr) or "
            f"raise max_value_bytes for db {self.db_id} in dbs.yaml.", db_id=self.db_id)

    def _timeout_error(self, timeout: float) -> Exception:
        return QueryTimeoutError(
            f"Query on database '{self.db_id}' stopped after {timeout:g} s; add a "
            f"LIMIT/filter or raise query_timeout_seconds for db {self.db_id} in dbs.yaml.",
            db_id=self.db_id)

    def fetch_row_by_id(self, table: str, row_id: object) -> dict[str, Any] | None:
        """The row of ``table`` whose primary key is ``row_id`` (see ``lookup.primary_key_values``)."""
        info = lookup.resolve_table(self.db_info, table)
        return self._fetch_one(info, lookup.primary_key_values(info, row_id))

    def fetch_related_row(self, table: str, column: str | Sequence[str],
                          value: object) -> dict[str, Any] | None:
        """The first row of ``table`` whose ``column`` (or columns) equal ``value``."""
        info = lookup.resolve_table(self.db_info, table)
        return self._fetch_one(info, lookup.column_values(info, column, value))

    def _fetch_one(self, info: TableInfo, where: dict[str, Any]) -> dict[str, Any] | None:
        return call_stoppably(self._fetch_one_here, info, where, name="the interrupted call")

    def _fetch_one_here(self, info: TableInfo, where: dict[str, Any]) -> dict[str, Any] | None:
        self.connection.check_login()
        statement = lookup.select_where(info, where, schema=self.connection.schema)
        timeout = self.connection.config.query_timeout_seconds
        admit = self.connection.relation_admission(info.name)
        with self._read_only(timeout, admit=admit) as conn:
            try:
                row = conn.execute(statement).mappings().first()
            except OverflowError:  # e.g. SQLite binds 64-bit integers only: no row has it

                raise UnknownTableError(
                    f"A key value for table '{info.name}' is outside the database's integer "
                    f"range, so no row has it; check row_id.", db_id=self.db_id,
                    table=info.name) from None
        return dict(row) if row is not None else None

    def _drain(self, cursor: Any, sink: ResultSink, columns: list[str], max_rows: int,
               take_over: Callable[[Sequence[Sequence[Any]], int], QueryStats | None]
               | None = None) -> QueryStats:
        """Feed a DB-API cursor's rows into ``sink`` in batches, stopping at the row cap.

        Batches start at one row and grow while they stay under ``batch_bytes`` (when the sink
        counts its bytes), so a result of huge values is never held ``batch_size`` rows at a
        time. ``take_over`` sees each batch once written (and the row count so far); when it
        answers with stats, another path has written the whole result and the rows stop here."""
        sink.begin(columns)
        count, truncated, size = 0, False, 1
        written = getattr(sink, "bytes_written", None)
        while True:
            wanted = min(size, max_rows - count)
            if wanted == 0:  # the cap is reached: one more row means it cut the result
                truncated = cursor.fetchone() is not None
                break
            batch = cursor.fetchmany(wanted)
            if not batch:
                break
            sink.write_rows(batch)
            count += len(batch)
            if take_over is not None and len(batch) == wanted \
                    and (stats := take_over(batch, count)) is not None:
                return stats
            size = self._next_batch_size(sink, size, len(batch), written)
            written = getattr(sink, "bytes_written", None)
        return QueryStats(columns, count, truncated)

    def _next_batch_size(self, sink: ResultSink, size: int, rows: int,
                         written_before: int | None) -> int:
        written = getattr(sink, "bytes_written", None)
        if written is None or written_before is None:
            return self.batch_size
        per_row = max(1, (written - written_before) // max(rows, 1))
        return max(1, min(self.batch_size, size * 2, self.batch_bytes // per_row))

    def _admit(self, conn: Any, admit: Admission | None) -> None:
        """Check the call against the catalogue as it is now: its version read on the call's
        own connection ``conn``, once the transaction is open and before anything runs."""
        if admit is not None:
            connection = self.connection
            admit(connection.admission_functions(conn, admit))

    @abstractmethod
    def _stream(self, sql: str, sink: ResultSink, *, max_rows: int, timeout: float,
                is_explain: bool, admit: Admission | None = None) -> QueryStats:
        """Execute ``sql`` under every engine layer of the backend; feed ``sink``. ``admit``
        is passed to ``_read_only``."""

    @abstractmethod
    def _read_only(self, timeout: float, *, admit: Admission | None = None
                   ) -> AbstractContextManager[Connection]:
        """A connection inside a read-only transaction that is always rolled back; before it
        is handed out, ``admit`` checks the call against the catalogue (``_admit``)."""


def create_connection(config: DbConnectionConfig) -> DbConnection:
    """The connection class of ``config``'s backend (``nl2sql.backends``), opened lazily."""
    return config.backend.load("connection_class")(config)


def create_operations(connection: DbConnection, db_info: DbInfo) -> DbOperations:
    """The runtime operations for ``connection``; ``db_info`` validates every identifier."""
    return connection.config.backend.load("operations_class")(connection, db_info)
