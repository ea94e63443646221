"""Warm-up after the MCP handshake, so the first query answers like the second.

The server starts without SQLAlchemy, sqlglot's dialects or the query modules (they are not
needed for ``tools/list``, and importing them would slow the cold start); the first
``db_execute_sql`` used to pay for them (about 250 ms). Once the client has sent
``notifications/initialized`` (on stdio; over HTTP once the port is open), a daemon thread
prepares the query path (``nl2sql.operations.first_use.prepare``: the modules, the result
models, and each backend's classes and dialects) and opens one pooled connection per
configured database (up to ``WARM_DATABASES``), and looks up who a stdio call acts for (the
account's entry in the users store, whose opening was a few ms of the first call). Preparing
runs under the lock every call takes first, so a call that arrives meanwhile waits for that work
instead of importing the same modules alongside it (which broke the process for good); the
caller's lookup takes that lock first too. Connecting to a server runs outside
the lock, so a database that is slow to answer delays no call but its own. Any failure (a
database that is down) is logged at debug level and left to the first call to report.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from nl2sql._helpers import freeze_imports
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.first_use import prepare
from nl2sql.operations.logins import report_logins

logger = logging.getLogger(__name__)

#: Databases whose first connection is opened in advance (the first of the registry).
WARM_DATABASES = 4


def start_warm_up(ctx: OpsContext, caller: Callable[[], object] | None = None
                  ) -> threading.Thread:
    """Start the warm-up thread (daemon: it never delays the process's exit)."""
    thread = threading.Thread(target=warm_up, args=(ctx, caller), name="nl2sql-warm-up",
                              daemon=True)
    thread.start()
    return thread


def warm_up(ctx: OpsContext, caller: Callable[[], object] | None = None) -> None:
    """Prepare the query path; ``caller``: the server's lookup of who a request acts for
    (cached by the server), made now rather than by the first call."""
    prepare(ctx)
    if caller is not None:
        try:
            caller()
        except Exception as exc:  # noqa: BLE001 (the first call reports it in one sentence)
            logger.debug("warm-up: looking up the caller failed: %s", exc)
    for db_id in ctx.configs.ids()[:WARM_DATABASES]:
        prepare(ctx, db_id)
        try:
            with ctx.query_operations(db_id).connection.connect():  # kept for the first call
                pass
        except Exception as exc:  # noqa: BLE001 (the first call reports it in one sentence)
            logger.debug("warm-up of %s failed: %s", db_id, exc)
    report_logins(ctx)  # a login that can write or is privileged: said at start (stderr)
    # What the warm-up imported and built lives as long as the server: out of the collector's
    # reach, as the command's own imports are (a first query paid a 2-4 ms collection of it).
    freeze_imports()
