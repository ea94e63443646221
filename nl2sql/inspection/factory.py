"""The one place that maps a ``DatabaseType`` to its schema inspector."""

from __future__ import annotations

from nl2sql.config import DatabaseType
from nl2sql.db.base import DbConnection
from nl2sql.inspection.base import DbSchemaInspector


def create_inspector(connection: DbConnection) -> DbSchemaInspector:
    match connection.config.type:
        case DatabaseType.SQLITE:
            from nl2sql.inspection.sqlite import SqliteSchemaInspector

            return SqliteSchemaInspector(connection)
        case DatabaseType.POSTGRES:
            from nl2sql.inspection.postgres import PostgresSchemaInspector

            return PostgresSchemaInspector(connection)
