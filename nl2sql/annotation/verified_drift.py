"""Verified answers kept honest when the schema moves: after ``annotate-schema`` the answers
that read a table whose structure changed (or that went away) are run again; one that fails is
marked stale (never served or shown as an example, listed with the reason) until it is
accepted again or removed. One that still runs is recorded as checked on the new schema.
"""

from __future__ import annotations

from nl2sql.annotation.drift import compare_schemas
from nl2sql.db.base import DbOperations
from nl2sql.errors import Nl2SqlError, QueryTimeoutError
from nl2sql.schema.models import DbInfo
from nl2sql.store.answers import AnswerStore


def recheck_verified(operations: DbOperations, previous: DbInfo | None, current: DbInfo,
                     store: AnswerStore) -> list[str]:
    """Run again the verified answers that read a table drift touched (``previous`` cache ->
    ``current``); those that fail are marked stale. One line per stale answer."""
    if previous is None:
        return []
    touched = compare_schemas(current, previous).touched()
    if not touched:
        return []
    fingerprint = current.fingerprint()
    lines = []
    for answer in store.list(include_stale=False):
        reads = {name.casefold() for name in answer.tables}
        hit = [touched[name] for name in sorted(reads & touched.keys() if reads else touched)]
        if not hit:
            continue
        try:
            operations.count_rows(answer.sql, limit=1)
        except QueryTimeoutError:
            continue  # slow today says nothing about the schema
        except Nl2SqlError as exc:
            if not exc.model_fixable:
                raise
            reason = f"schema drift: {', '.join(hit)}; the SQL fails: {exc}"
            store.mark(answer.id, stale_reason=reason)
            lines.append(f"verified answer {answer.id} ({answer.question}) is stale: {reason}")
            continue
        store.mark(answer.id, stale_reason=None, schema_fingerprint=fingerprint)
    return lines
