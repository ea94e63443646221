"""The Python API of verified answers: ``nl2sql.accept(answer_id)``, ``nl2sql.list_verified()``,
``nl2sql.unverify(verified_id)``, and of proposals: ``nl2sql.list_proposed()``,
``nl2sql.reject(proposal_id)``. These are a person's calls (the OS user's). ``config``: a registry, an ``OpsContext``, a dbs.yaml path, or
None (``NL2SQL_CONFIG`` or ./dbs.yaml, as ``nl2sql.ask()``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nl2sql.errors import require_string
from nl2sql.operations.ops_context import OpsContext, ops_context_for
from nl2sql.operations import verified_answers as workflow
from nl2sql.store.records import VerifiedAnswer

if TYPE_CHECKING:
    from nl2sql.config.registry import DbConnectionConfigs


def accept(answer_id: str, *, config: DbConnectionConfigs | OpsContext | str | Path | None = None
           ) -> VerifiedAnswer:
    """Mark the answer with id ``answer_id`` (``Answer.id``, or a proposal's id) right: its SQL
    is run again read-only (it must still run) and kept as a verified answer of its database,
    ``accepted_by`` the OS user. The id of a verified answer checks it again (clears a stale
    mark when it runs).

    Example:
        >>> answer = nl2sql.ask("How many customers are there?")
        >>> nl2sql.accept(answer.id)
    """
    require_string(answer_id, "answer_id")
    with ops_context_for(config) as ops:
        return workflow.accept_answer(ops, answer_id)


def list_verified(db_id: str | None = None, *,
                  config: DbConnectionConfigs | OpsContext | str | Path | None = None
                  ) -> list[VerifiedAnswer]:
    """The verified answers of ``db_id`` (all databases when None), newest first; stale ones
    have ``stale_reason``."""
    with ops_context_for(config) as ops:
        return workflow.list_verified(ops, db_id)


def unverify(verified_id: str, *,
             config: DbConnectionConfigs | OpsContext | str | Path | None = None
             ) -> VerifiedAnswer:
    """Remove the verified answer ``verified_id``; returns what was removed."""
    require_string(verified_id, "verified_id")
    with ops_context_for(config) as ops:
        return workflow.unverify(ops, verified_id)


def list_proposed(db_id: str | None = None, *,
                  config: DbConnectionConfigs | OpsContext | str | Path | None = None
                  ) -> list[VerifiedAnswer]:
    """The proposals (answers a model accepted) of ``db_id`` (all databases when None) waiting
    for a person, newest first; ``nl2sql.accept(id)`` confirms one, ``nl2sql.reject(id)``
    rejects it."""
    with ops_context_for(config) as ops:
        return workflow.list_proposed(ops, db_id)


def reject(proposal_id: str, *,
           config: DbConnectionConfigs | OpsContext | str | Path | None = None
           ) -> VerifiedAnswer:
    """Reject the proposal ``proposal_id``: never served, not proposed again; returns it."""
    require_string(proposal_id, "proposal_id")
    with ops_context_for(config) as ops:
        return workflow.reject_proposal(ops, proposal_id)
