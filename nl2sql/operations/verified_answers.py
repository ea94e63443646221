"""Accepting an answer: its SQL is run again through the read-only path (it must still run),
then stored with the question, the tables it reads and the schema it was checked on.

An answer is found by its id (``Answer.id``, written into its result's metadata) or by its
result file (the MCP tool ``saved_query_accept``); a verified answer's own id checks it again
(after it went stale). Also: listing and removing across the configured databases.
"""

from __future__ import annotations

import getpass
from pathlib import PurePosixPath

from nl2sql.errors import Nl2SqlError, SchemaCacheMissingError, VerifiedAnswerError
from nl2sql.schema.models import DbInfo
from nl2sql.operations.ops_context import OpsContext
from nl2sql.workspace.results import (CSV_SUFFIX, METADATA_SUFFIX, new_result_id, read_metadata_for_csv,
                            resolve_workspace_path)
from nl2sql.workspace.saved_query_index import SavedQueryIndex
from nl2sql.verified.questions import question_key, tables_read
from nl2sql.verified.store import VerifiedAnswer, VerifiedStore


def accept_answer(ops: OpsContext, answer_id: str, *,
                  accepted_by: str | None = None) -> VerifiedAnswer:
    """Verify the answer (or saved result) with id ``answer_id``, or check a verified answer
    with that id again."""
    answer_id = answer_id.strip()
    existing = find_verified(ops, answer_id)
    if existing is not None:
        return verify(ops, existing.db_id, existing.question, existing.sql, existing.id,
                      accepted_by=accepted_by)
    found = SavedQueryIndex(ops.workspace).find(answer_id) if answer_id else None
    if found is None or not found.db_id or not found.sql_query:
        raise VerifiedAnswerError(
            f"No answer with id '{answer_id}' in the workspace {ops.workspace}; the id is in "
            f"`nl2sql-ask --json` output (\"id\") and in the result's metadata file.")
    return verify(ops, found.db_id, found.natural_language_query, found.sql_query, answer_id,
                  accepted_by=accepted_by)


def accept_saved_result(ops: OpsContext, csv_file: str, *,
                        accepted_by: str | None = None) -> VerifiedAnswer:
    """Verify the saved result ``csv_file`` (workspace-relative; ``.csv`` may be left out)."""
    name = csv_file.removesuffix(METADATA_SUFFIX)
    if not PurePosixPath(name).suffix:
        name += CSV_SUFFIX
    path = resolve_workspace_path(ops.workspace, name, must_exist=True)
    metadata = read_metadata_for_csv(path, ops.workspace)
    if metadata is None:
        raise VerifiedAnswerError(f"{name} has no readable metadata file beside it; run the "
                                  f"query again with db_execute_sql and accept that result.")
    return verify(ops, metadata.db_id, metadata.natural_language_query, metadata.sql_query,
                  metadata.id or new_result_id(), accepted_by=accepted_by)


def verify(ops: OpsContext, db_id: str, question: str | None, sql: str, verified_id: str, *,
           accepted_by: str | None = None) -> VerifiedAnswer:
    """Run ``sql`` read-only on ``db_id`` (it must run) and store it as the verified answer to
    ``question``."""
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
    answer = VerifiedAnswer(
        id=verified_id, db_id=db_id, question=question.strip(),
        question_key=question_key(question), sql=sql.strip(),
        tables=tables_read(sql, operations.connection.sqlglot_dialect, info),
        schema_fingerprint=info.fingerprint() if info is not None else None,
        accepted_by=accepted_by or _user())
    VerifiedStore(ops.data_dir, db_id).add(answer)
    return answer


def list_verified(ops: OpsContext, db_id: str | None = None) -> list[VerifiedAnswer]:
    """The verified answers of ``db_id`` (every configured database when None), stale ones
    included (``stale_reason`` says why)."""
    db_ids = [ops.config(db_id).db_id] if db_id else ops.configs.ids()
    return [answer for one in db_ids for answer in VerifiedStore(ops.data_dir, one).list()]


def find_verified(ops: OpsContext, verified_id: str) -> VerifiedAnswer | None:
    for db_id in ops.configs.ids():
        found = VerifiedStore(ops.data_dir, db_id).get(verified_id)
        if found is not None:
            return found
    return None


def unverify(ops: OpsContext, verified_id: str) -> VerifiedAnswer:
    """Remove the verified answer ``verified_id``; the removed answer."""
    found = find_verified(ops, verified_id.strip())
    if found is None or not VerifiedStore(ops.data_dir, found.db_id).remove(found.id):
        raise VerifiedAnswerError(f"No verified answer '{verified_id}'; list them with "
                                  f"nl2sql-ask --list-verified.")
    return found


def _cache(ops: OpsContext, db_id: str) -> DbInfo | None:
    try:
        return ops.db_info(db_id)
    except SchemaCacheMissingError:
        return None


def _user() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name in a container
        return None
