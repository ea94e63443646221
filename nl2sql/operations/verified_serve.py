"""Serving a verified answer again: the same normalised question on the same database is
answered by running the verified SQL on today's data, with no model request.

A verified answer whose SQL fails when served is marked stale (never served or shown again
until re-accepted) and the question goes to the model as usual.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from nl2sql.errors import Nl2SqlError, QueryTimeoutError
from nl2sql.schema.models import utc_now
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import QueryResult, db_execute_sql_op
from nl2sql.verified.questions import question_key
from nl2sql.store.records import VerifiedAnswer

log = logging.getLogger(__name__)


@dataclass
class Served:
    verified: VerifiedAnswer
    result: QueryResult


def serve_verified(ops: OpsContext, question: str, db_id: str | None, *,
                   answer_id: str) -> Served | None:
    """Run the verified answer to ``question`` on ``db_id`` (every configured database when
    None, in registry order) into a new result file named after the question; None when there
    is none that still runs."""
    key = question_key(question)
    for one in [db_id] if db_id else ops.configs.ids():
        store = ops.store.answers(one)
        verified = store.for_question(key)
        if verified is None:
            continue
        try:
            result = db_execute_sql_op(ops, one, verified.sql, nl_query=question,
                                       name_from=question, answer_id=answer_id)
        except Nl2SqlError as exc:
            if not exc.model_fixable or isinstance(exc, QueryTimeoutError):
                raise  # the database is down or busy: that says nothing about the SQL
            reason = f"failed when served on {utc_now():%Y-%m-%d}: {exc}"
            log.warning("verified answer %s of %s is stale: %s", verified.id, one, reason)
            store.mark(verified.id, stale_reason=reason)
            continue
        return Served(verified, result)
    return None
