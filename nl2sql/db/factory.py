"""Factories: the one place that maps a ``DatabaseType`` to its backend classes."""

from __future__ import annotations

from nl2sql.config import DatabaseType, DbConnectionConfig
from nl2sql.db.base import DbConnection


def create_connection(config: DbConnectionConfig) -> DbConnection:
    match config.type:
        case DatabaseType.SQLITE:
            from nl2sql.db.sqlite import SqliteConnection

            return SqliteConnection(config)
        case DatabaseType.POSTGRES:
            from nl2sql.db.postgres import PostgresConnection

            return PostgresConnection(config)
