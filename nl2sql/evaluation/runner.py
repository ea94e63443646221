"""One evaluation run: score every question (concurrently), measure the context recall, build
the report. Predictions come from a file or from ``generate.py`` (``--model``)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from nl2sql._call_stop import CallStop
from nl2sql.errors import UnknownDatabaseError, did_you_mean
from nl2sql.workspace.result_compare import ExtraColumns
from nl2sql.evaluation.inputs import EvaluationInputError, Question
from nl2sql.evaluation.report import Report
from nl2sql.evaluation.scoring import DEFAULT_MAX_ROWS, QuestionResult, Scorer
from nl2sql.operations.first_use import prepare
from nl2sql.operations.ops_context import OpsContext
from nl2sql._helpers import NullProgress, ProgressReporter
from nl2sql.evaluation.context_recall import add_context_recall


@dataclass
class Generation:
    """How a prediction was generated (``--model``): attempts, tokens, time, failure."""

    sql: str | None
    attempts: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_seconds: float | None = None
    error: str | None = None
    confidence: float | None = None  # --candidates N > 1: share that agreed (0: none ran)
    cost_usd: float | None = None  # None: the model has no known price
    source: str | None = None  # "model" or "metric:<names>"
    #: The same question answered with the database's governed metrics hidden (databases
    #: with a semantic model only): the report compares both.
    without_metrics: Generation | None = None


@dataclass
class EvalSettings:
    timeout: float | None = None
    max_rows: int = DEFAULT_MAX_ROWS
    extra_columns: ExtraColumns = "strict"
    concurrency: int = 4
    context_recall: bool = True


def check_databases(questions: list[Question], ctx: OpsContext) -> None:
    """Every question's db_id must be configured (else the input is invalid)."""
    known = [c.db_id for c in ctx.configs]
    for question in questions:
        try:
            ctx.config(question.db_id)
        except UnknownDatabaseError:
            hint = did_you_mean(question.db_id, known)
            raise EvaluationInputError(
                f"question {question.id}: database {question.db_id!r} is not configured. "
                f"{hint}Configured: {', '.join(known)} (add it to dbs.yaml).") from None


def evaluate(questions: list[Question], predictions: Mapping[str, str | Generation | None],
             ctx: OpsContext, settings: EvalSettings | None = None,
             progress: ProgressReporter | None = None,
             report_settings: dict[str, Any] | None = None) -> Report:
    """Score ``predictions`` (question id -> SQL, or a ``Generation``) against ``questions``."""
    settings = settings or EvalSettings()
    progress = progress or NullProgress()
    check_databases(questions, ctx)
    scorer = Scorer(ctx, timeout=settings.timeout, max_rows=settings.max_rows,
                    extra_columns=settings.extra_columns)
    started = time.monotonic()
    for db_id in dict.fromkeys(q.db_id for q in questions):
        prepare(ctx, db_id)  # each backend's modules loaded once, before the threads run

    def one(question: Question) -> QuestionResult:
        prediction = predictions.get(question.id)
        generation = prediction if isinstance(prediction, Generation) else None
        sql = generation.sql if generation else prediction
        result = scorer.score(question, sql if isinstance(sql, str) else None)
        if generation:
            _add_generation(result, generation)
            if generation.without_metrics is not None:
                other = scorer.score(question, generation.without_metrics.sql)
                result.metrics_compared = True
                result.predicted_sql_without_metrics = generation.without_metrics.sql
                result.correct_without_metrics = other.correct
        if settings.context_recall:
            add_context_recall(result, ctx.configs, ctx.connection(question.db_id).sqlglot_dialect)
        return result

    progress.start("scoring", len(questions))
    results: list[QuestionResult] = []
    switch = CallStop("scoring")  # Ctrl-C: the queries still running stop, no more start
    try:
        with ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as pool:
            try:
                for result in pool.map(functools.partial(_under, switch, one), questions):
                    results.append(result)
                    progress.advance(result.id)
            except BaseException:
                switch.stop()
                pool.shutdown(cancel_futures=True)
                raise
    finally:
        progress.finish()
    return Report.build(results, settings={**(report_settings or {}),
                                           "timeout_seconds": settings.timeout,
                                           "max_rows": settings.max_rows,
                                           "extra_columns": settings.extra_columns},
                        elapsed_seconds=round(time.monotonic() - started, 3))


def _under(switch: CallStop, one: Callable[[Question], QuestionResult],
           question: Question) -> QuestionResult:
    with switch.active():  # a pool thread: the queries it runs register with the switch
        return one(question)


def _add_generation(result: QuestionResult, generation: Generation) -> None:
    result.attempts = generation.attempts
    result.input_tokens = generation.input_tokens
    result.output_tokens = generation.output_tokens
    result.latency_seconds = generation.latency_seconds
    result.generation_error = generation.error
    result.generated = True
    result.confidence = generation.confidence
    result.source = generation.source
    result.cost_usd = generation.cost_usd
    if generation.error and not generation.sql and not result.broken_gold:
        result.reason = f"no prediction: {generation.error}"
