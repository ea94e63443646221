"""Warm-up after the MCP handshake, so the first query answers like the second.

The server starts without SQLAlchemy, sqlglot's dialects or the query modules (they are not
needed for ``tools/list``, and importing them would slow the cold start); the first
``db_execute_sql`` used to pay for them (about 250 ms). Once the client has sent
``notifications/initialized`` (on stdio; over HTTP once the port is open), a daemon thread
imports them, builds the query path's result models (deferred at start-up), opens one pooled
connection per configured database (up to ``WARM_DATABASES``) and runs the guard once in each
dialect. It only
fills caches that every call fills anyway (modules, engine pools, sqlglot's dialect tables), so
a call that arrives while it still runs waits at most for the same work (Python's import lock),
and any failure (a database that is down) is logged at debug level and left to the first call
to report.
"""

from __future__ import annotations

import logging
import threading

from nl2sql.operations.context import OpsContext
from nl2sql.operations.logins import report_logins

logger = logging.getLogger(__name__)

#: Databases whose first connection is opened in advance (the first of the registry).
WARM_DATABASES = 4


def start_warm_up(ctx: OpsContext) -> threading.Thread:
    """Start the warm-up thread (daemon: it never delays the process's exit)."""
    thread = threading.Thread(target=warm_up, args=(ctx,), name="nl2sql-warm-up", daemon=True)
    thread.start()
    return thread


def warm_up(ctx: OpsContext) -> None:
    try:
        # The modules of a query call (each import also pulls SQLAlchemy and sqlglot).
        import nl2sql.db.factory  # noqa: F401
        from nl2sql.models import DbInfo
        from nl2sql.operations.queries import QueryResult
        from nl2sql.results import ResultMetadata
        from nl2sql.sql_guard import validate_read_only

        # The result models are built on first use (pydantic defer_build, kept out of the
        # start-up): build the query path's now (~10 ms), not in the first call.
        for model in (ResultMetadata, QueryResult, DbInfo):
            model.model_rebuild()
    except Exception as exc:  # noqa: BLE001 (never fatal: the first call imports them again)
        logger.debug("warm-up: imports failed: %s", exc)
        return
    for db_id in ctx.configs.ids()[:WARM_DATABASES]:
        try:
            connection = ctx.query_operations(db_id).connection  # and the operations object
            validate_read_only("SELECT 1", connection.sqlglot_dialect)
            with connection.connect():  # the pool keeps it for the first call
                pass
        except Exception as exc:  # noqa: BLE001 (the first call reports it in one sentence)
            logger.debug("warm-up of %s failed: %s", db_id, exc)
    report_logins(ctx)  # a login that can write or is privileged: said at start (stderr)
