"""The server's start check of each database's login (``nl2sql.db.logins``)."""

from __future__ import annotations

import logging

from nl2sql.operations.ops_context import OpsContext

logger = logging.getLogger(__name__)


def report_logins(ctx: OpsContext) -> None:
    """Read what each configured login may do and log a warning (stderr) for one that can
    write or is privileged; ``db_list`` shows the same. The catalogue's user-defined functions
    are read too where a call would otherwise wait for them (``warm_user_functions``). Never
    raises: a database that is down is reported by its first call."""
    for config in ctx.configs:
        if config.backend.file_based:
            continue  # no login: nl2sql opens the file read-only (and need not import it now)
        try:
            connection = ctx.connection(config.db_id)
            login = connection.login_privileges()
            connection.warm_user_functions()
        except Exception as exc:  # noqa: BLE001 - a start check must not stop the server
            logger.debug("login check of %s failed: %s", config.db_id, exc)
            continue
        warning = login.warning(config.db_id) if login is not None else None
        if warning:
            logger.warning(warning)
