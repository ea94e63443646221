"""Every call a face makes for a caller is recorded: an audit record (``nl2sql.access.audit``)
and an OpenTelemetry span (``nl2sql._tracing``), whatever the face (MCP tools, resources and
the prompt, the agents' tools, ``ask``).

``recorded(ctx, tool, ...)`` wraps the call; what the record says comes from the arguments and
the result: the database, the SQL (a query's text, a saved result's or an accepted answer's),
the rows, the answer's id. The outcome is ``ok``, ``refused`` (the caller may not: another
group's database, a curator's action; or the read-only guard refused the SQL), ``cancelled``
(the client cancelled, Ctrl-C) or ``error``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from nl2sql._call_stop import CallStop
from nl2sql._tracing import span
from nl2sql.errors import (AccessDeniedError, LoginNotReadOnlyError, QueryRejectedError,
                           WorkspacePathError)
from nl2sql.operations.first_use import call_prepared
from nl2sql.operations.ops_context import OpsContext

T = TypeVar("T")
#: Failures that are a refusal (the caller may not, or the guard says no), not an error.
REFUSALS = (AccessDeniedError, QueryRejectedError, LoginNotReadOnlyError, WorkspacePathError)


@dataclass
class Record:
    """What one call did, filled in as it runs (``note`` a result)."""

    db_id: str | None = None
    sql: str | None = None
    row_count: int | None = None
    answer_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def note(self, result: Any) -> None:
        """Read the database, SQL, rows and answer id off a result (an operation's, an
        ``Answer``, an accept's)."""
        for source in (result, getattr(result, "answer", None)):
            if source is None:
                continue
            self.db_id = self.db_id or _text(getattr(source, "db_id", None))
            self.sql = self.sql or _text(getattr(source, "sql_query", None)) \
                or _text(getattr(source, "sql", None))
            if self.row_count is None and isinstance(getattr(source, "row_count", None), int):
                self.row_count = source.row_count
            self.answer_id = self.answer_id or _text(getattr(source, "id", None))


def outcome_of(error: BaseException | None) -> str:
    if error is None:
        return "ok"
    stop = CallStop.current()
    if isinstance(error, (asyncio.CancelledError, KeyboardInterrupt)) or (
            stop is not None and stop.stopped):
        return "cancelled"
    return "refused" if isinstance(error, REFUSALS) else "error"


@contextmanager
def recorded(ctx: OpsContext, tool: str, *, db_id: str | None = None,
             sql: str | None = None) -> Iterator[Record]:
    """Record the block as one call of ``tool`` for ``ctx``'s caller, through its face."""
    record = Record(db_id=db_id, sql=sql)
    started = time.monotonic()
    error: BaseException | None = None
    with span(f"nl2sql.tool {tool}", nl2sql__user=ctx.caller.name, nl2sql__face=ctx.face,
              db__namespace=db_id) as current:
        try:
            yield record
        except BaseException as exc:
            error = exc
            raise
        finally:
            outcome = outcome_of(error)
            current.set_attribute("nl2sql.outcome", outcome)
            ctx.audit(user=ctx.caller.name, face=ctx.face, tool=tool, db_id=record.db_id,
                      sql=record.sql, row_count=record.row_count,
                      duration_ms=round((time.monotonic() - started) * 1000),
                      outcome=outcome, answer_id=record.answer_id)


def call_recorded(tool: str, function: Callable[..., T], ctx: OpsContext, **arguments: Any) -> T:
    """``call_prepared(function, ctx, **arguments)``, recorded as a call of ``tool``."""
    with recorded(ctx, tool, db_id=_text(arguments.get("db_id")),
                  sql=_text(arguments.get("query"))) as record:
        result = call_prepared(function, ctx, **arguments)
        record.note(result)
        return result


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
