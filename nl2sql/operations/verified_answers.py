"""Accepting an answer: its SQL is run again through the read-only path (it must still run),
then stored with the question, the tables it reads and the schema it was checked on.

Who accepts decides what it becomes: a person (``curator=True``: the CLI, Python and other local
faces, a user of the team server, a person answering an MCP elicitation) who may curate the
database (``nl2sql.access.can(caller, "curate", db_id)``: the OS account of a local face, a
member of a ``curator: true`` group) makes a *verified* answer, served again and shown as an
example; anyone else, and every model over MCP (the tool ``saved_query_accept``, stdio or HTTP,
with any user's token), makes a
*proposal*, kept apart and never served nor shown until a curator confirms it (``accept_answer``
with its id) or rejects it (``reject_proposal``). A proposal never replaces a verified answer.
``accepted_by``, ``proposed_by`` and ``rejected_by`` name the caller.

An answer is found by its id (``Answer.id``, written into its result's metadata), by its result
file (``saved_query_accept``), or as a verified answer or proposal with that id (a verified
answer's id checks it again, after it went stale); only among what the caller sees
(``OpsContext.configs``: their results folder, the databases ``can`` lets them query), so an id
of another user's result, or of another group's database, is refused as an unknown one. Also:
listing and removing across the configured databases.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from nl2sql._helpers import one_line
from nl2sql.access.permissions import can
from nl2sql.errors import (AccessDeniedError, Nl2SqlError, SchemaCacheMissingError,
                           VerifiedAnswerError)
from nl2sql.schema.models import DbInfo, utc_now
from nl2sql.operations.ops_context import OpsContext
from nl2sql.workspace.results import (CSV_SUFFIX, METADATA_SUFFIX, new_result_id, read_metadata_for_csv,
                            resolve_workspace_path)
from nl2sql.workspace.saved_query_store import saved_query_index
from nl2sql.verified.questions import question_key, tables_read
from nl2sql.store.records import VerifiedAnswer

#: What a person answered when asked to confirm a proposal (the MCP elicitation's actions).
Decision = Literal["accept", "decline", "cancel"]


def accept_answer(ops: OpsContext, answer_id: str, *, user: str | None = None,
                  curator: bool = True) -> VerifiedAnswer:
    """Accept the answer, saved result or proposal with id ``answer_id`` (or check a verified
    answer with that id again): verified when ``curator`` and the caller may curate its
    database, else a proposal. ``user``: who accepts (default: the caller)."""
    answer_id = answer_id.strip()
    existing = find_verified(ops, answer_id) or find_proposal(ops, answer_id)
    if existing is not None:
        return settle(ops, existing.db_id, existing.question, existing.sql, existing.id,
                      user=user, curator=curator)
    found = saved_query_index(ops.workspace, ops.store).find(answer_id) if answer_id else None
    if found is None or not found.db_id or not found.sql_query:
        raise VerifiedAnswerError(
            f"No answer with id '{answer_id}' {_among_results(ops)}; the id is in "
            f"`nl2sql-ask --json` output (\"id\") and in the result's metadata file.")
    return settle(ops, found.db_id, found.natural_language_query, found.sql_query, answer_id,
                  user=user, curator=curator)


def _among_results(ops: OpsContext) -> str:
    """Where an answer id was looked for, as the refusal names it: a configured user's own
    results (the server's folders are not theirs to know), else the workspace."""
    return "among your results" if ops.caller.configured else f"in the workspace {ops.workspace}"


def accept_saved_result(ops: OpsContext, csv_file: str, *, user: str | None = None,
                        curator: bool = False) -> VerifiedAnswer:
    """Accept the saved result ``csv_file`` (workspace-relative; ``.csv`` may be left out): a
    proposal unless ``curator``."""
    name = csv_file.removesuffix(METADATA_SUFFIX)
    if not PurePosixPath(name).suffix:
        name += CSV_SUFFIX
    path = resolve_workspace_path(ops.workspace, name, must_exist=True)
    metadata = read_metadata_for_csv(path, ops.workspace)
    if metadata is None:
        raise VerifiedAnswerError(f"{name} has no readable metadata file beside it; run the "
                                  f"query again with db_execute_sql and accept that result.")
    return settle(ops, metadata.db_id, metadata.natural_language_query, metadata.sql_query,
                  metadata.id or new_result_id(), user=user, curator=curator)


def settle(ops: OpsContext, db_id: str, question: str | None, sql: str, answer_id: str, *,
           user: str | None, curator: bool) -> VerifiedAnswer:
    """Run ``sql`` read-only on ``db_id`` (it must run) and store it as the verified answer to
    ``question`` (``curator``, and the caller may curate ``db_id``) or as a proposal for it."""
    checked = _checked(ops, db_id, question, sql, answer_id)
    store = ops.store.answers(db_id)
    who = user or ops.caller.name
    if not (curator and can(ops.caller, "curate", db_id)):
        return store.propose(checked.model_copy(update={
            "state": "proposed", "proposed_by": who, "proposed_at": utc_now()}))
    answer = checked.model_copy(update={"accepted_by": who, "accepted_at": utc_now()})
    store.add(answer)
    return answer


def _checked(ops: OpsContext, db_id: str, question: str | None, sql: str,
             answer_id: str) -> VerifiedAnswer:
    if not question or not question.strip():
        raise VerifiedAnswerError(
            "This result has no question, so it cannot be reused for one; run it again with "
            "nl_query (the question it answers) and accept that result.", db_id=db_id)
    operations = ops.query_operations(db_id)  # an unknown db_id fails here
    try:
        operations.count_rows(sql, limit=1)
    except Nl2SqlError as exc:
        raise VerifiedAnswerError(f"Not accepted: the SQL no longer runs on {db_id}: {exc}",
                                  db_id=db_id, sql=sql) from None
    info = _cache(ops, db_id)
    question = one_line(question)
    return VerifiedAnswer(
        id=answer_id, db_id=db_id, question=question,
        question_key=question_key(question), sql=sql.strip(),
        tables=tables_read(sql, operations.connection.sqlglot_dialect, info),
        schema_fingerprint=info.fingerprint() if info is not None else None)


def reject_proposal(ops: OpsContext, proposal_id: str, *,
                    user: str | None = None) -> VerifiedAnswer:
    """A person rejects the waiting proposal ``proposal_id``: never served, not proposed
    again; the rejected proposal."""
    found = find_proposal(ops, proposal_id.strip())
    if found is not None:
        require_curator(ops, found.db_id, "reject a proposal")
    if found is None or found.state != "proposed" or not ops.store.answers(
            found.db_id).reject(found.id, rejected_by=user or ops.caller.name):
        raise VerifiedAnswerError(f"No proposal '{proposal_id}' waiting for a decision; list "
                                  f"them with nl2sql-ask --list-proposed.")
    rejected = ops.store.answers(found.db_id).get_proposal(found.id)
    assert rejected is not None
    return rejected


def decide_proposal(ops: OpsContext, shown: VerifiedAnswer, decision: Decision, *,
                    user: str | None = None) -> VerifiedAnswer:
    """What a person answered when asked to confirm the proposal ``shown``: accept verifies
    exactly what they were shown (its question and SQL, run again), whatever the store or the
    result file hold by then (a model may have replaced the file meanwhile); decline rejects
    it, cancel leaves it waiting."""
    if decision == "accept":
        return settle(ops, shown.db_id, shown.question, shown.sql, shown.id, user=user,
                      curator=True)
    if decision == "decline":
        return reject_proposal(ops, shown.id, user=user)
    found = find_proposal(ops, shown.id)
    if found is None:
        raise VerifiedAnswerError(f"No proposal '{shown.id}'.")
    return found


def list_verified(ops: OpsContext, db_id: str | None = None) -> list[VerifiedAnswer]:
    """The verified answers of ``db_id`` (every configured database when None), stale ones
    included (``stale_reason`` says why)."""
    return [answer for one in _db_ids(ops, db_id)
            for answer in ops.store.answers(one).list()]


def list_proposed(ops: OpsContext, db_id: str | None = None) -> list[VerifiedAnswer]:
    """The proposals waiting for a person, of ``db_id`` (every configured database when
    None)."""
    return [answer for one in _db_ids(ops, db_id)
            for answer in ops.store.answers(one).proposals()]


def find_verified(ops: OpsContext, verified_id: str) -> VerifiedAnswer | None:
    for db_id in ops.configs.ids():
        found = ops.store.answers(db_id).get(verified_id)
        if found is not None:
            return found
    return None


def find_proposal(ops: OpsContext, proposal_id: str) -> VerifiedAnswer | None:
    for db_id in ops.configs.ids():
        found = ops.store.answers(db_id).get_proposal(proposal_id)
        if found is not None:
            return found
    return None


def unverify(ops: OpsContext, verified_id: str) -> VerifiedAnswer:
    """Remove the verified answer ``verified_id``; the removed answer."""
    found = find_verified(ops, verified_id.strip())
    if found is not None:
        require_curator(ops, found.db_id, "remove a verified answer")
    if found is None or not ops.store.answers(found.db_id).remove(found.id):
        raise VerifiedAnswerError(f"No verified answer '{verified_id}'; list them with "
                                  f"nl2sql-ask --list-verified.")
    return found


def _db_ids(ops: OpsContext, db_id: str | None) -> list[str]:
    return [ops.config(db_id).db_id] if db_id else ops.configs.ids()


def _cache(ops: OpsContext, db_id: str) -> DbInfo | None:
    try:
        return ops.db_info(db_id)
    except SchemaCacheMissingError:
        return None


def require_curator(ops: OpsContext, db_id: str, what: str) -> None:
    """Only a caller who may curate ``db_id`` may ``what``."""
    if not can(ops.caller, "curate", db_id):
        raise AccessDeniedError(f"Only a curator of database '{db_id}' may {what}; "
                                f"{ops.caller.describe()} is not one.", db_id=db_id)
