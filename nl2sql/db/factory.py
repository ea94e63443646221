"""Factories: a config's backend classes, looked up in the registry (``nl2sql.backends``)."""

from __future__ import annotations

from nl2sql.config.registry import DbConnectionConfig
from nl2sql.db.base import DbConnection, DbOperations
from nl2sql.schema.models import DbInfo


def create_connection(config: DbConnectionConfig) -> DbConnection:
    return config.backend.load("connection_class")(config)


def create_operations(connection: DbConnection, db_info: DbInfo) -> DbOperations:
    """The runtime operations for ``connection``; ``db_info`` validates every identifier."""
    return connection.config.backend.load("operations_class")(connection, db_info)
