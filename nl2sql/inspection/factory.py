"""A connection's schema inspector, looked up in the registry (``nl2sql.backends``)."""

from __future__ import annotations

from nl2sql.db.base import DbConnection
from nl2sql.inspection.base import DbSchemaInspector


def create_inspector(connection: DbConnection) -> DbSchemaInspector:
    return connection.config.backend.load("inspector_class")(connection)
