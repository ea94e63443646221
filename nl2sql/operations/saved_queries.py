"""``saved_queries_list_op`` / ``saved_query_get_details_op`` / ``saved_query_accept_op``: the
results saved in the workspace, and proposing one as right (a person makes it verified).

Every ``db_execute_sql_op`` call leaves ``{name}.csv`` + ``{name}.metadata.json``; these
operations list them (newest first, optionally full-text searched through
``nl2sql.workspace.saved_query_index``) and show one with a short preview.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict

from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.csv_files import CsvRows, read_head, require_result_of
from nl2sql.operations.params import CsvFile, SearchWords
from nl2sql.workspace.results import (CSV_SUFFIX, METADATA_SUFFIX, ResultMetadata, read_metadata_for_csv,
                            resolve_workspace_path, result_lock)
from nl2sql.workspace.saved_query_store import saved_query_index
from nl2sql._helpers import shorten
from nl2sql.store.records import VerifiedAnswer
from nl2sql.operations.verified_answers import accept_saved_result

DETAILS_PREVIEW_ROWS = 5
_SQL_PREVIEW_CHARS = 200


class SavedQuerySummary(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    csv_file: str  # relative to the workspace: what csv_head / csv_tail / details take
    db_id: str | None = None
    timestamp: str | None = None
    row_count: int | None = None
    column_count: int | None = None
    natural_language_query: str | None = None
    sql_query: str | None = None

    def render(self) -> str:
        question = f" — {self.natural_language_query}" if self.natural_language_query else ""
        sql = shorten(" ".join((self.sql_query or "").split()), _SQL_PREVIEW_CHARS)
        rows = "?" if self.row_count is None else self.row_count
        return (f"- {self.csv_file} [{self.db_id or '?'}; {rows} rows; "
                f"{self.timestamp or 'no timestamp'}]{question}\n  SQL: {sql}")


class SavedQueryList(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    search: str | None = None
    total: int  # matches in the workspace; ``queries`` holds at most ``limit`` of them
    queries: list[SavedQuerySummary]

    def render(self) -> str:
        what = f" matching '{self.search}'" if self.search else ""
        if not self.queries:
            hint = (" Try fewer or other words, or call saved_queries_list without a search."
                    if self.search else " Run db_execute_sql to create one.")
            return f"No saved queries{what}.{hint}"
        shown = (f"{len(self.queries)} of {self.total}" if self.total > len(self.queries)
                 else str(self.total))
        noun = "saved query" if self.total == 1 else "saved queries"
        lines = [f"{shown} {noun}{what}, newest first:"]
        lines += [query.render() for query in self.queries]
        return "\n".join(lines)


class SavedQueryDetails(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    csv_file: str
    metadata: ResultMetadata | None
    preview: CsvRows

    def render(self) -> str:
        lines = [f"Saved query {self.csv_file}"]
        if self.metadata is None:
            lines.append("(no readable metadata file beside it)")
        else:
            meta = self.metadata
            lines += [f"database: {meta.db_id}", f"saved at: {meta.timestamp}",
                      f"rows: {meta.row_count}, columns: {meta.column_count}"]
            if meta.natural_language_query:
                lines.append(f"question: {meta.natural_language_query}")
            lines += ["SQL:", str(meta.sql_query).strip()]
        lines += ["", self.preview.render()]
        return "\n".join(lines)


def saved_queries_list_op(ctx: OpsContext, search: SearchWords = None, *,
                          limit: int = 50, db_id: str | None = None) -> SavedQueryList:
    """Saved queries, newest first; ``search`` matches words of the question and the SQL;
    ``db_id`` keeps that database's only."""
    found, total = saved_query_index(ctx.workspace, ctx.store).search(search, limit=limit,
                                                                      db_id=db_id)
    queries = [SavedQuerySummary(
        csv_file=_csv_file_of(entry.path, entry.csv_filename), db_id=entry.db_id,
        timestamp=entry.timestamp, row_count=entry.row_count, column_count=entry.column_count,
        natural_language_query=entry.natural_language_query, sql_query=entry.sql_query)
        for entry in found]
    return SavedQueryList(search=search or None, total=total, queries=queries)


def saved_query_get_details_op(ctx: OpsContext, csv_file: CsvFile, *,
                               db_id: str | None = None) -> SavedQueryDetails:
    """The metadata of one saved query and its first rows (with ``db_id``: only of a result
    of that database)."""
    name = csv_file.removesuffix(METADATA_SUFFIX)
    if name.strip() and not PurePosixPath(name).suffix:
        name += CSV_SUFFIX  # "top_customers" means "top_customers.csv" ("" stays empty)
    path = resolve_workspace_path(ctx.workspace, name, must_exist=True)
    with result_lock(path.parent, shared=True):  # the CSV and its metadata from one run
        require_result_of(db_id, path, ctx.workspace)
        columns, rows = read_head(path, DETAILS_PREVIEW_ROWS)
        metadata = read_metadata_for_csv(path, ctx.workspace)
    preview = CsvRows(csv_file=name, position="first", columns=columns, rows=rows,
                      total_rows=metadata.row_count if metadata else None)
    return SavedQueryDetails(csv_file=name, metadata=metadata, preview=preview)


class AcceptResult(BaseModel):
    """What an accept made: a proposal (waiting for a person), a verified answer, or a
    proposal a person rejected."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    answer: VerifiedAnswer

    def render(self) -> str:
        answer = self.answer
        if answer.state == "proposed":
            note = (f"Proposed {answer.id} as the answer to its question on {answer.db_id}: it "
                    f"is not reused nor shown as an example until a person confirms it "
                    f"(nl2sql-ask --accept {answer.id}).")
        elif answer.state == "rejected":
            note = f"A person rejected {answer.id}; it is not proposed again."
        else:
            note = (f"{answer.id} is the verified answer to its question on {answer.db_id}"
                    f"{f' (accepted by {answer.accepted_by})' if answer.accepted_by else ''}.")
        return f"{note}\n{answer.render()}"


def saved_query_accept_op(ctx: OpsContext, csv_file: CsvFile, *, user: str | None = None,
                          curator: bool = False) -> AcceptResult:
    """Propose the saved result ``csv_file`` as right: its SQL is run again read-only (it must
    still run) and kept as a proposal for its question (``nl_query``), which a person confirms
    (then it is the verified answer) or rejects. ``curator``: a person with the right to
    curate accepts it, so it is verified at once."""
    return AcceptResult(answer=accept_saved_result(ctx, csv_file, user=user, curator=curator))


def _csv_file_of(metadata_path: str, csv_filename: str | None) -> str:
    """The workspace-relative CSV path of an indexed metadata file."""
    meta = PurePosixPath(metadata_path)
    if csv_filename:
        return str(meta.parent / PurePosixPath(csv_filename).name)
    return str(meta.parent / (meta.name.removesuffix(METADATA_SUFFIX) + CSV_SUFFIX))
