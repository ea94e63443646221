"""The audit log (the ``audit`` area): one record per tool call, ask and data request, appended
by every face and read back by ``nl2sql-audit``.

``append`` never raises and never waits long: a record that cannot be written (the store is
down, the file locked past ``APPEND_BUSY_TIMEOUT_MS``, the disk full) is logged as a warning and
the call it records goes on. ``read`` streams the records oldest first, filtered by user,
database and time, so a large log is never held in memory.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime, timezone

from sqlalchemy import insert, select

from nl2sql.errors import StoreError
from nl2sql.store.database import Database
from nl2sql.store.records import AuditRecord
from nl2sql.store.schema import audit

logger = logging.getLogger(__name__)

#: How long an append waits for a busy SQLite audit file before it gives up (and logs).
APPEND_BUSY_TIMEOUT_MS = 2_000
#: The append statement, built once: a new ``insert()`` per record cost SQLAlchemy its cache
#: key again each time (~20 us of the ~160 us CPU of one record).
_APPEND = insert(audit)


class AuditLog:
    """The audit log in ``database``. Cheap to create."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def append(self, record: AuditRecord) -> bool:
        """Write ``record``; False (and a warning in the log) when it could not be written.
        Never raises: the call it records must not fail because of it."""
        return self.append_many([record])

    def append_many(self, records: list[AuditRecord]) -> bool:
        """Write ``records`` in one transaction (one round trip for a busy server's backlog,
        ``nl2sql.access.audit``); False (and a warning) when they could not be written. Never
        raises."""
        rows = [record.model_dump() | {"ts": _utc(record.ts)} for record in records]
        if not rows:
            return True
        try:
            self.database.write(lambda connection: connection.execute(_APPEND, rows),
                                ordered=False)
        except StoreError as exc:  # the store is down, locked or full: none would go in
            first = records[0]
            more = f" (and {len(records) - 1} more)" if len(records) > 1 else ""
            logger.warning("audit: a record of %s by %s%s was not written: %s", first.tool,
                           first.user, more, exc)
            return False
        except Exception as exc:  # noqa: BLE001 - an audit write never fails the call
            if len(records) > 1:  # one record the store refused: the others still go in
                return all([self.append_many([record]) for record in records])
            logger.warning("audit: a record of %s by %s was not written: %s", records[0].tool,
                           records[0].user, exc)
            return False
        return True

    def read(self, *, user: str | None = None, db_id: str | None = None,
             since: datetime | None = None, limit: int | None = None) -> Iterator[AuditRecord]:
        """The records oldest first, of ``user`` / on ``db_id`` / at or after ``since`` when
        given (at most ``limit``, the newest ones when limited)."""
        query = select(audit)
        if user is not None:
            query = query.where(audit.c.user == user)
        if db_id is not None:
            query = query.where(audit.c.db_id == db_id)
        if since is not None:
            query = query.where(audit.c.ts >= _utc(since))
        if limit is not None:
            newest = query.order_by(audit.c.ts.desc(), audit.c.id.desc()).limit(limit).subquery()
            query = select(newest)
        query = query.order_by("ts", "id")
        for row in self.database.stream(query):
            values = dict(row._mapping)
            values.pop("id")
            yield AuditRecord(**values)


def _utc(moment: datetime) -> str:
    """``moment`` as stored: ISO text in UTC (a naive time is taken as UTC), so times compare
    as text."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat()
