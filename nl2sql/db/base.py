"""Backend-neutral connection and operations interfaces (layer 4 in ARCHITECTURE.md).

Backend differences are class attributes (``sqlglot_dialect``, ``default_schema``...), never
``isinstance`` checks or dialect-name tests in the callers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from nl2sql.config import DbConnectionConfig
from nl2sql.errors import DatabaseConnectionError


class DbConnection(ABC):
    """A lazily created SQLAlchemy engine for one configured database.

    Engines are read-only at the engine level (SQLite ``mode=ro``; Postgres read-only
    transactions): nl2sql never writes to the databases it describes.
    """

    #: sqlglot dialect name used to parse and render SQL for this backend.
    sqlglot_dialect: ClassVar[str]

    def __init__(self, config: DbConnectionConfig) -> None:
        self.config = config
        self._engine: Engine | None = None

    @property
    def db_id(self) -> str:
        return self.config.db_id

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
