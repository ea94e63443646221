"""Factories: the one place that maps a ``DatabaseType`` to its backend classes."""

from __future__ import annotations

from nl2sql.config import DatabaseType, DbConnectionConfig
from nl2sql.db.base import DbConnection, DbOperations
from nl2sql.models import DbInfo


def create_connection(config: DbConnectionConfig) -> DbConnection:
    match config.type:
        case DatabaseType.SQLITE:
            from nl2sql.db.sqlite import SqliteConnection

            return SqliteConnection(config)
        case DatabaseType.POSTGRES:
            from nl2sql.db.postgres import PostgresConnection

            return PostgresConnection(config)


def create_operations(connection: DbConnection, db_info: DbInfo) -> DbOperations:
    """The runtime operations for ``connection``; ``db_info`` validates every identifier."""
    match connection.config.type:
        case DatabaseType.SQLITE:
            from nl2sql.db.sqlite import SqliteOperations

            return SqliteOperations(connection, db_info)
        case DatabaseType.POSTGRES:
            from nl2sql.db.postgres import PostgresOperations

            return PostgresOperations(connection, db_info)
