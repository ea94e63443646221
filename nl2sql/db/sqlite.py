"""SQLite backend: the database file opened read-only through a URI (``mode=ro``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event

from nl2sql.db.base import DbConnection
from nl2sql.errors import DatabaseConnectionError
from nl2sql.sample import ensure_bookstore


class SqliteConnection(DbConnection):
    sqlglot_dialect = "sqlite"

    @property
    def path(self) -> Path:
        assert self.config.path is not None  # enforced by DbConnectionConfig
        return self.config.path

    def _create_engine(self) -> Engine:
        path = self.path
        if not path.is_file():
            if not self.config.is_bundled_sample:
                raise DatabaseConnectionError(
                    f"SQLite file {path} for database '{self.db_id}' does not exist; fix its "
                    f"'path' in dbs.yaml.", db_id=self.db_id)
            ensure_bookstore(path)
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"

        def connect() -> sqlite3.Connection:
            return sqlite3.connect(uri, uri=True, check_same_thread=False)

        engine = create_engine("sqlite+pysqlite://", creator=connect)
        event.listen(engine, "connect", self._on_connect)
        return engine

    def _on_connect(self, dbapi_connection: sqlite3.Connection, _record: object) -> None:
        """Per-connection settings; the runtime adds its read-only guards here."""
        dbapi_connection.execute("PRAGMA busy_timeout = 5000")
