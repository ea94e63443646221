"""The data each part of the page shows, read through the operations: an answer (its SQL, rows,
chart, confidence, receipt and whether it is verified), a result file, a database's schema.
Plain dicts, so a template and the JSON twin show the same thing."""

from __future__ import annotations

import base64
import csv
import io
from pathlib import Path
from typing import Any

from nl2sql.access.permissions import can
from nl2sql.agents.answer import Answer
from nl2sql.context_engine.prompt_context import SavedMetricQuery
from nl2sql.errors import ChartError, MetricQueryError, Nl2SqlError
from nl2sql.operations.charts import csv_chart_op
from nl2sql.operations.csv_files import MAX_ROWS, csv_head_op
from nl2sql.operations.metrics import compile_metric_query, metrics_list_op
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import QueryResult
from nl2sql.workspace.preview import number_columns, preview_numbers

#: Rows of a result the page loads (paged and sorted in the browser; the CSV has them all).
TABLE_ROWS = MAX_ROWS
#: Sample rows shown per table on a schema page.
SAMPLE_ROWS = 5


def result_view(ops: OpsContext, csv_file: str, db_id: str | None) -> dict[str, Any]:
    """A result file's first ``TABLE_ROWS`` rows and its chart (None when none fits), or the
    reason it cannot be shown."""
    try:
        head = csv_head_op(ops, csv_file, TABLE_ROWS, db_id=db_id)
    except Nl2SqlError as exc:
        return {"csv_file": csv_file, "problem": str(exc), "columns": [], "rows": [],
                "chart": None}
    # Numbers as every face writes them (``preview_numbers``: no float noise, no trailing
    # zeros), right-aligned; the CSV download keeps the exact text.
    numeric = number_columns(head.rows)
    return {"csv_file": csv_file, "problem": None, "columns": head.columns,
            "rows": preview_numbers(head.rows, numeric), "numeric": numeric,
            "total_rows": head.total_rows, "chart": chart_view(ops, csv_file, db_id)}


def chart_view(ops: OpsContext, csv_file: str, db_id: str | None) -> dict[str, Any] | None:
    """The chart the result's shape calls for (``csv_chart``), as a PNG data URL with the
    sentence that describes it (its alt text); None when no chart fits."""
    try:
        chart = csv_chart_op(ops, csv_file, db_id=db_id)
    except ChartError:
        return None
    return {"description": chart.description, "chart_file": chart.chart_file,
            "src": "data:image/png;base64," + base64.b64encode(chart.png).decode("ascii")}


def answer_view(ops: OpsContext, answer: Answer) -> dict[str, Any]:
    """An answer as the page shows it: its fields (no server path), its result, where it
    stands (served verified, accepted, proposed) and what the caller may do with it."""
    data = answer.model_dump(mode="json", exclude={"csv_path"})
    csv_file = _workspace_file(ops, answer.csv_path)
    data.update(
        csv_file=csv_file,
        result=result_view(ops, csv_file, answer.db_id) if csv_file else None,
        agreement=answer.agreement_line() if answer.confidence is not None else None,
        receipt=answer.receipt_line(),
        served_verified=answer.source.startswith("verified:"),
        status=answer_status(ops, answer.db_id, answer.id),
        can_curate=can(ops.caller, "curate", answer.db_id))
    return data


def answer_status(ops: OpsContext, db_id: str, answer_id: str) -> dict[str, Any] | None:
    """Whether the answer ``answer_id`` was accepted (a verified answer) or proposed; None
    when not, or when ``db_id`` is not the caller's (an answer of theirs from before they
    left its group: what became of it there is not theirs to see)."""
    if not can(ops.caller, "query", db_id):
        return None
    store = ops.store.answers(db_id)
    found = store.get(answer_id) or store.get_proposal(answer_id)
    if found is None:
        return None
    return {"state": "stale" if found.stale else found.state, "id": found.id,
            "by": found.accepted_by if found.state != "proposed" else found.proposed_by,
            "stale_reason": found.stale_reason}


def sql_view(ops: OpsContext, result: QueryResult) -> dict[str, Any]:
    """A query a person ran: its SQL, counts and result."""
    return {"db_id": result.db_id, "sql": result.sql_query, "row_count": result.row_count,
            "truncated": result.truncated, "csv_file": result.csv_filename,
            "hint": result.hint, "result": result_view(ops, result.csv_filename, result.db_id)}


def database_view(ops: OpsContext, db_id: str) -> dict[str, Any]:
    """A database's tables (columns with descriptions, keys, enum values, sample rows) from
    its schema cache, and its governed metrics."""
    info = ops.db_info(db_id)
    tables = []
    for table in info.tables:
        columns, rows = _sample(table.sample_data_csv)
        tables.append({
            "name": table.name, "description": table.description, "row_count": table.row_count,
            "is_view": table.is_view,
            "columns": [{"name": c.name, "data_type": c.data_type, "nullable": c.nullable,
                         "description": c.description, "primary_key": c.is_primary_key,
                         "enum_values": c.enum_values if c.is_enum else None}
                        for c in table.columns],
            "foreign_keys": [{"columns": fk.columns, "table": fk.referenced_table,
                              "referenced_columns": fk.referenced_columns}
                             for fk in table.foreign_keys],
            "sample": {"columns": columns, "rows": rows}})
    metrics = metrics_list_op(ops, db_id)
    return {"db_id": db_id, "db_type": info.db_type, "description": info.description,
            "tables": tables, "metrics": [m.model_dump() for m in metrics.metrics],
            "saved_metric_queries": [_saved_metric_query(ops, db_id, query)
                                     for query in metrics.saved_metric_queries],
            "metric_problems": metrics.problems, "has_semantic_model": metrics.has_semantic_model,
            "example_queries": [q.model_dump() for q in info.example_queries]}


def _saved_metric_query(ops: OpsContext, db_id: str,
                        query: SavedMetricQuery) -> dict[str, Any]:
    """A saved metric query with the SQL it compiles to (the page opens it on the SQL page,
    which runs it as any query), or why it does not compile."""
    try:
        sql, problem = compile_metric_query(ops, db_id, query.metrics, query.dimensions,
                                            query.where, query.order_by, query.limit).sql, None
    except MetricQueryError as error:
        sql, problem = None, str(error)
    return {**query.model_dump(exclude={"matched"}), "sql": sql, "problem": problem}


def _sample(text: str | None) -> tuple[list[str], list[list[str]]]:
    if not text:
        return [], []
    rows = list(csv.reader(io.StringIO(text)))
    return (rows[0], rows[1:1 + SAMPLE_ROWS]) if rows else ([], [])


def _workspace_file(ops: OpsContext, csv_path: str) -> str | None:
    """``csv_path`` relative to the caller's workspace (what the operations take); None when it
    is not in it (an answer stored before the workspace moved)."""
    try:
        return Path(csv_path).resolve().relative_to(ops.workspace_root).as_posix()
    except (ValueError, OSError):
        return None
