"""Score one question: run its gold queries and the prediction on the same database, through the
same read-only path as every other query (parser guard, engine layers, time limit, row cap), and
compare the results (``compare.py``)."""

from __future__ import annotations

import base64
import datetime as dt
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from nl2sql.errors import (DatabaseConnectionError, Nl2SqlError, QueryRejectedError,
                           QueryTimeoutError)
from nl2sql.workspace.result_compare import Comparison, ExtraColumns, OrderSpec, compare_results
from nl2sql.evaluation.inputs import Question
from nl2sql.workspace.result_order import order_spec
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import operations_for_query

#: Rows kept per result for scoring; a gold result beyond it cannot be compared (broken gold).
DEFAULT_MAX_ROWS = 100_000
#: Rows of each result shown in the report.
PREVIEW_ROWS = 5


class QuestionResult(BaseModel):
    """One question's line in ``report.json`` (``questions``)."""

    id: str
    db_id: str
    category: str | None = None
    question: str
    gold_sql: list[str]
    predicted_sql: str | None = None
    correct: bool | None = None  # None: broken gold, left out of the accuracy
    reason: str | None = None  # why it is wrong, or why the gold is broken
    broken_gold: bool = False
    matched_gold: int | None = None  # index in gold_sql of the gold the prediction matched
    gold_columns: list[str] = []
    gold_rows: list[list[Any]] = []
    gold_row_count: int | None = None
    predicted_columns: list[str] = []
    predicted_rows: list[list[Any]] = []
    predicted_row_count: int | None = None
    gold_seconds: float | None = None
    predicted_seconds: float | None = None
    # context the agent is given, against the gold (None: not measured; see context_error)
    gold_tables: list[str] | None = None
    context_tables: list[str] | None = None
    table_recall: float | None = None
    gold_literals: list[str] | None = None
    value_hints: list[str] | None = None
    value_hint_recall: float | None = None
    context_error: str | None = None
    # generation (``--model``): None when predictions came from a file
    attempts: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_seconds: float | None = None
    generation_error: str | None = None
    generated: bool = False  # the prediction came from the model (--model)
    confidence: float | None = None  # share of the candidates that agreed (--candidates N > 1)
    cost_usd: float | None = None  # what generating the prediction cost (None: unpriced)
    # where the prediction came from (--model): "model" or "metric:<names>" (a governed metric)
    source: str | None = None
    # --model on a database with governed metrics: the same question answered without them
    metrics_compared: bool = False
    predicted_sql_without_metrics: str | None = None
    correct_without_metrics: bool | None = None


@dataclass
class QueryRun:
    """What one query returned (rows up to the cap) or why it failed."""

    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False
    seconds: float = 0.0
    error: str | None = None
    kind: str | None = None  # "guard" | "timeout" | "error" when it failed

    def describe_error(self, who: str) -> str:
        if self.kind == "guard":
            return f"{who} refused by the read-only guard: {self.error}"
        if self.kind == "timeout":
            return f"{who} timed out: {self.error}"
        return f"{who} failed: {self.error}"


class _Rows:
    """A result sink that keeps rows in memory (scoring compares typed values, not CSV text:
    a MySQL DECIMAL comes as ``Decimal``, not as the export's text, so it equals the same number
    as a float)."""

    python_values = True

    def __init__(self) -> None:
        self.columns: list[str] = []
        self.rows: list[tuple[Any, ...]] = []

    def begin(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.rows.extend(tuple(r) for r in rows)


def run_query(ctx: OpsContext, db_id: str, sql: str, *, timeout: float | None,
              max_rows: int) -> QueryRun:
    """Run ``sql`` read-only on ``db_id``; an expected failure is returned, not raised (except
    an unreachable database, which is a set-up problem for the whole run)."""
    sink = _Rows()
    started = time.monotonic()
    try:
        stats = operations_for_query(ctx, db_id).execute_select_query(
            sql, sink, max_rows=max_rows, timeout_seconds=timeout)
    except DatabaseConnectionError:
        raise
    except QueryRejectedError as exc:
        return QueryRun(seconds=time.monotonic() - started, error=str(exc), kind="guard")
    except QueryTimeoutError as exc:
        return QueryRun(seconds=time.monotonic() - started, error=str(exc), kind="timeout")
    except Nl2SqlError as exc:
        return QueryRun(seconds=time.monotonic() - started, error=str(exc), kind="error")
    return QueryRun(sink.columns, sink.rows, stats.truncated, time.monotonic() - started)


@dataclass
class _Gold:
    run: QueryRun
    order: OrderSpec


class Scorer:
    """Scores questions against one ``OpsContext``; gold results are computed once per
    (database, gold SQL) and reused. Safe to call from several threads."""

    def __init__(self, ctx: OpsContext, *, timeout: float | None = None,
                 max_rows: int = DEFAULT_MAX_ROWS, extra_columns: ExtraColumns = "strict",
                 preview_rows: int = PREVIEW_ROWS) -> None:
        self.ctx = ctx
        self.timeout = timeout
        self.max_rows = max_rows
        self.extra_columns = extra_columns
        self.preview_rows = preview_rows
        self._golds: dict[tuple[str, str], _Gold] = {}

    def _gold(self, db_id: str, sql: str) -> _Gold:
        key = (db_id, sql)
        if key not in self._golds:
            run = run_query(self.ctx, db_id, sql, timeout=self.timeout, max_rows=self.max_rows)
            dialect = self.ctx.connection(db_id).sqlglot_dialect
            order = order_spec(sql, dialect, run.columns) if run.error is None else OrderSpec()
            self._golds[key] = _Gold(run, order)
        return self._golds[key]

    def score(self, question: Question, predicted_sql: str | None) -> QuestionResult:
        result = QuestionResult(id=question.id, db_id=question.db_id, category=question.category,
                                question=question.question, gold_sql=question.golds,
                                predicted_sql=predicted_sql)
        golds = [(i, self._gold(question.db_id, sql)) for i, sql in enumerate(question.golds)]
        working = [(i, g) for i, g in golds if g.run.error is None and not g.run.truncated]
        if not working:
            result.broken_gold = True
            result.reason = _broken_reason(golds[0][1].run, self.max_rows, len(golds))
            return result
        first = working[0][1].run
        result.gold_columns, result.gold_row_count = first.columns, len(first.rows)
        result.gold_rows = _preview(first.rows, self.preview_rows)
        result.gold_seconds = round(first.seconds, 4)
        if not predicted_sql:
            result.correct, result.reason = False, "no prediction"
            return result
        pred = run_query(self.ctx, question.db_id, predicted_sql, timeout=self.timeout,
                         max_rows=self.max_rows)
        result.predicted_seconds = round(pred.seconds, 4)
        if pred.error is not None:
            result.correct, result.reason = False, pred.describe_error("prediction")
            return result
        result.predicted_columns, result.predicted_row_count = pred.columns, len(pred.rows)
        result.predicted_rows = _preview(pred.rows, self.preview_rows)
        if pred.truncated:
            result.correct = False
            result.reason = (f"prediction returned more than {self.max_rows:,} rows; the gold "
                             f"returns {len(first.rows):,}")
            return result
        closest: tuple[Comparison, int, _Gold] | None = None
        for index, gold in working:
            outcome = compare_results(gold.run.rows, pred.rows,
                                      gold_columns=len(gold.run.columns),
                                      pred_columns=len(pred.columns), order=gold.order,
                                      extra_columns=self.extra_columns)
            if outcome.equal:
                result.correct, result.matched_gold = True, index
                return result
            if closest is None or outcome.closeness > closest[0].closeness:
                closest = (outcome, index, gold)
        result.correct = False
        assert closest is not None  # working is not empty
        comparison, index, gold = closest
        reason = comparison.reason or "differs from the gold"
        if len(working) == 1:
            result.reason = reason
            return result
        # Explained against the gold that agrees most (another gold may have the very columns
        # whose count the first one's explanation would blame), and its rows shown beside.
        result.reason = (f"matches none of the {len(working)} golds; closest is gold "
                         f"{index + 1}: {reason}")
        result.gold_columns, result.gold_row_count = gold.run.columns, len(gold.run.rows)
        result.gold_rows = _preview(gold.run.rows, self.preview_rows)
        return result


def _broken_reason(run: QueryRun, max_rows: int, count: int) -> str:
    which = "gold query" if count == 1 else f"all {count} gold queries; the first"
    if run.truncated:
        return f"broken gold: {which} returns more than {max_rows:,} rows (raise --max-rows)"
    return f"broken gold: {run.describe_error(which)}"


def jsonable(value: Any) -> Any:
    """A result value as JSON can carry it, for the report."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return "base64:" + base64.b64encode(data[:48]).decode() + ("…" if len(data) > 48 else "")
    return str(value)


def _preview(rows: list[tuple[Any, ...]], limit: int) -> list[list[Any]]:
    return [[jsonable(v) for v in row] for row in rows[:limit]]
