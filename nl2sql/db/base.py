"""Backend-neutral connection and operations interfaces (layer 4 in ARCHITECTURE.md).

Backend facts (``sqlglot_dialect``, ``default_schema``...) come from the registry entry
(``nl2sql.backends``) and driver differences are class attributes; never
``isinstance`` checks or dialect-name tests in the callers.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from nl2sql.config import DbConnectionConfig
from nl2sql.errors import DatabaseConnectionError
from nl2sql.models import DbInfo, TableInfo

if TYPE_CHECKING:
    from nl2sql.sql_guard import ValidatedQuery


class DbConnection(ABC):
    """A lazily created SQLAlchemy engine for one configured database.

    Engines are read-only at the engine level (SQLite ``mode=ro``; Postgres read-only
    transactions): nl2sql never writes to the databases it describes.
    """

    def __init__(self, config: DbConnectionConfig) -> None:
        self.config = config
        self._engine: Engine | None = None

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
            self._engine = self._create_engine()
        return self._engine

    @abstractmethod
    def _create_engine(self) -> Engine:
        """Build the engine; raise ``DatabaseConnectionError`` for a missing database."""

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        """A pooled connection; a failure to connect becomes ``DatabaseConnectionError``."""
        try:
            connection = self.engine.connect()
        except DBAPIError as exc:
            reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
            raise DatabaseConnectionError(
                f"Cannot connect to database '{self.db_id}': {reason}; check its connection "
                f"settings in dbs.yaml.", db_id=self.db_id) from None
        with connection:
            yield connection

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
    truncated: bool  # True when the row cap cut the result
    elapsed_seconds: float = 0.0


@runtime_checkable
class ResultSink(Protocol):
    """Receives a result in batches, so no backend ever holds the whole result in memory."""

    def begin(self, columns: Sequence[str]) -> None: ...

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None: ...


@runtime_checkable
class CsvResultSink(ResultSink, Protocol):
    """A sink that also takes ready-made CSV records (one record per item, no header)."""

    def write_csv_records(self, records: Sequence[bytes]) -> None: ...


class DbOperations(ABC):
    """Read-only runtime operations on one database, bounded in rows and time.

    Table and column names are checked against the cached schema (``DbInfo``) before any SQL is
    built; values are always bound parameters.
    """

    #: Rows handed to a sink per call (bounds memory while keeping per-call overhead low).
    batch_size: ClassVar[int] = 2000

    def __init__(self, connection: DbConnection, db_info: DbInfo) -> None:
        self.connection = connection
        self.db_info = db_info

    @property
    def db_id(self) -> str:
        return self.connection.db_id

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
        if isinstance(query, str):
            if validate:
                from nl2sql.sql_guard import validate_read_only

                query = validate_read_only(query, self.connection.sqlglot_dialect)
                sql, is_explain = query.sql, query.is_explain
            else:
                sql, is_explain = query, False
        else:
            sql, is_explain = query.sql, query.is_explain
        started = time.monotonic()
        stats = self._stream(sql, sink, max_rows=max_rows, timeout=timeout,
                             is_explain=is_explain)
        stats.elapsed_seconds = time.monotonic() - started
        return stats

    def fetch_row_by_id(self, table: str, row_id: object) -> dict[str, Any] | None:
        """The row of ``table`` whose primary key is ``row_id`` (see ``lookup.primary_key_values``)."""
        from nl2sql.db import lookup

        info = lookup.resolve_table(self.db_info, table)
        return self._fetch_one(info, lookup.primary_key_values(info, row_id))

    def fetch_related_row(self, table: str, column: str | Sequence[str],
                          value: object) -> dict[str, Any] | None:
        """The first row of ``table`` whose ``column`` (or columns) equal ``value``."""
        from nl2sql.db import lookup

        info = lookup.resolve_table(self.db_info, table)
        return self._fetch_one(info, lookup.column_values(info, column, value))

    def _fetch_one(self, info: TableInfo, where: dict[str, Any]) -> dict[str, Any] | None:
        from nl2sql.db import lookup

        statement = lookup.select_where(info, where, schema=self.connection.schema)
        timeout = self.connection.config.query_timeout_seconds
        with self._read_only(timeout) as conn:
            row = conn.execute(statement).mappings().first()
        return dict(row) if row is not None else None

    def _drain(self, cursor: Any, sink: ResultSink, columns: list[str],
               max_rows: int) -> QueryStats:
        """Feed a DB-API cursor's rows into ``sink`` in batches, stopping at the row cap."""
        sink.begin(columns)
        count, truncated = 0, False
        while True:
            wanted = min(self.batch_size, max_rows - count)
            if wanted == 0:  # the cap is reached: one more row means it cut the result
                truncated = cursor.fetchone() is not None
                break
            batch = cursor.fetchmany(wanted)
            if not batch:
                break
            sink.write_rows(batch)
            count += len(batch)
        return QueryStats(columns, count, truncated)

    @abstractmethod
    def _stream(self, sql: str, sink: ResultSink, *, max_rows: int, timeout: float,
                is_explain: bool) -> QueryStats:
        """Execute ``sql`` under every engine layer of the backend; feed ``sink``."""

    @abstractmethod
    def _read_only(self, timeout: float) -> AbstractContextManager[Connection]:
        """A connection inside a read-only transaction that is always rolled back."""
