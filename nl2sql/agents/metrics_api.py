"""``nl2sql.metrics()`` and ``nl2sql.query_metrics()``: a database's governed metrics, and a
metric query answered without a model (an ``Answer`` whose ``sql`` is the compiled SQL and
whose ``source`` is ``metric:<names>``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nl2sql.agents.answer import Answer, Attempt, read_dataframe
from nl2sql.operations.metrics import metrics_list_op, metrics_query_op
from nl2sql.operations.ops_context import OpsContext, ops_context_for
from nl2sql.workspace.results import new_result_id

if TYPE_CHECKING:
    from nl2sql.config.registry import DbConnectionConfigs


def metrics(db_id: str, *, config: DbConnectionConfigs | OpsContext | str | Path | None = None
            ) -> list[dict[str, Any]]:
    """The governed metrics of ``db_id`` (its ``semantic_model:``): a list of ``{name, label,
    description, dimensions}`` ([] without a semantic model). A metric the model cannot
    compile is left out; ``metrics_list`` and ``annotate-schema`` say why.

    Example:
        >>> [m["name"] for m in nl2sql.metrics("bookstore")]
        ['average_order_value', 'books_sold', 'order_count', 'revenue', ...]
    """
    with ops_context_for(config) as ops:
        return [metric.model_dump() for metric in metrics_list_op(ops, db_id).metrics]


def query_metrics(db_id: str, metrics: str | Sequence[str], *, dimensions: Sequence[str] = (),
                  where: Sequence[str] = (), order_by: Sequence[str] = (),
                  limit: int | None = None, question: str | None = None,
                  max_rows: int | None = None,
                  config: DbConnectionConfigs | OpsContext | str | Path | None = None) -> Answer:
    """Compute ``metrics`` of ``db_id`` from its semantic model, grouped by ``dimensions``
    (``customer__country``, ``metric_time__month``; Cube: ``invoices.billing_country``),
    filtered by ``where`` (SQL conditions over group-by names), ordered by ``order_by``
    (``-revenue`` descending) and cut at ``limit`` rows. No model is asked: the SQL is compiled
    and run read-only; ``answer.sql`` is it, ``answer.source`` is ``metric:<names>``.
    ``question``: saved with the result (default: the query in words); ``max_rows`` caps the
    rows read into ``answer.df``.

    Example:
        >>> nl2sql.query_metrics("bookstore", "revenue", dimensions=["metric_time__month"]).df
    """
    started = time.monotonic()
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    answer_id = new_result_id()
    with ops_context_for(config) as ops:
        explanation = _explanation(names, dimensions, where, order_by, limit)
        result = metrics_query_op(ops, db_id, names, list(dimensions), list(where),
                                  list(order_by), limit, nl_query=question or explanation,
                                  answer_id=answer_id)
        rows = max_rows or ops.configs.agent.max_rows
        csv_path = ops.workspace.resolve() / result.csv_filename
        answer = Answer(
            id=answer_id, question=question or explanation, db_id=db_id, sql=result.sql_query,
            explanation=explanation + "; the SQL was compiled from the semantic model.",
            df=read_dataframe(csv_path, rows), csv_path=str(csv_path),
            row_count=result.row_count, truncated=result.truncated,
            attempts=[Attempt(sql=result.sql_query)], cost_usd=0.0,
            latency_ms=round((time.monotonic() - started) * 1000),
            schema_fingerprint=ops.schema_fingerprint(db_id),
            source=f"metric:{','.join(result.metrics)}")
        answer._registry = ops.configs  # answer.accept() keeps to the same data dir
        return answer


def _explanation(names: list[str], dimensions: Sequence[str], where: Sequence[str],
                 order_by: Sequence[str], limit: int | None) -> str:
    text = ", ".join(names) + (f" by {', '.join(dimensions)}" if dimensions else "")
    if where:
        text += f" where {' and '.join(where)}"
    if order_by:
        text += f" ordered by {', '.join(order_by)}"
    return text + (f" (first {limit})" if limit is not None else "")
