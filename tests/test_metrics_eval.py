"""Evaluation with governed metrics: the bundled ``bookstore_metrics`` set's hand-written gold
SQL equals the metric query that answers each question (SQLite and PostgreSQL), and
``nl2sql-eval --model`` answers each metric question with and without the metrics and reports
both accuracies for the same questions (a scripted model: with metrics it picks the metric,
without them it writes SQL that forgets the agreed definition)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from conftest import SampleDb, build_cache, write_dbs_yaml
from nl2sql.config.bundled import bookstore_semantic_model_path, question_set_path
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.evaluation.generate import CACHE_NAME, generate_predictions
from nl2sql.evaluation.inputs import load_questions
from nl2sql.evaluation.runner import EvalSettings, evaluate
from nl2sql.evaluation.scoring import run_query
from nl2sql.operations.metrics import metrics_query_op
from nl2sql.operations.ops_context import OpsContext
from nl2sql.workspace.result_compare import compare_results

#: The metric query that answers each metric question of the set.
ANSWERS: dict[str, dict[str, Any]] = {
    "bookstore-metrics-01": {"metrics": ["revenue"],
                             "where": ["metric_time__year = '2024-01-01'"]},
    "bookstore-metrics-02": {"metrics": ["revenue"], "dimensions": ["metric_time__year"]},
    "bookstore-metrics-03": {"metrics": ["revenue"], "dimensions": ["metric_time__month"],
                             "where": ["metric_time__year = '2025-01-01'"]},
    "bookstore-metrics-04": {"metrics": ["average_order_value"],
                             "dimensions": ["order__channel"]},
    "bookstore-metrics-05": {"metrics": ["order_count"], "dimensions": ["order__status"]},
    "bookstore-metrics-06": {"metrics": ["books_sold"], "dimensions": ["book__genre"]},
    "bookstore-metrics-07": {"metrics": ["revenue"], "dimensions": ["customer__country"],
                             "order_by": ["-revenue"], "limit": 5},
    "bookstore-metrics-08": {"metrics": ["cumulative_revenue"],
                             "dimensions": ["metric_time__year"]},
    "bookstore-metrics-09": {"metrics": ["new_customers"], "dimensions": ["metric_time__year"]},
    "bookstore-metrics-10": {"metrics": ["return_count"], "dimensions": ["return__reason"]},
    "bookstore-metrics-11": {"metrics": ["return_rate"]},
    "bookstore-metrics-12": {"metrics": ["revenue"], "dimensions": ["author__country"],
                             "where": ["order__channel = 'web'"]},
}


def _questions() -> list:  # noqa: ANN202
    path = question_set_path("bookstore_metrics")
    assert path is not None
    return load_questions(path)


def test_the_metric_set_golds_equal_the_metrics(bookstore_db: SampleDb, tmp_path: Path) -> None:
    entry = bookstore_db.config.model_copy(
        update={"semantic_model": bookstore_semantic_model_path()})
    registry = DbConnectionConfigs.load(write_dbs_yaml(tmp_path, [entry]),
                                        data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    build_cache(entry, registry.data_dir)
    ops = OpsContext(registry)
    questions = _questions()
    assert {q.id for q in questions if q.metric} == set(ANSWERS)
    failures = []
    try:
        for question in questions:
            gold = run_query(ops, "bookstore", question.golds[0], timeout=30, max_rows=1000)
            assert gold.error is None and gold.rows, (question.id, gold.error)
            if not question.metric:
                continue
            result = metrics_query_op(ops, "bookstore", **ANSWERS[question.id])
            ours = run_query(ops, "bookstore", result.sql_query, timeout=30, max_rows=1000)
            comparison = compare_results(gold.rows, ours.rows)
            if not comparison.equal:
                failures.append(f"{question.id}: {comparison.reason}")
    finally:
        ops.close()
    assert not failures, failures


def _model(asked: list[tuple[str, bool]]) -> FunctionModel:
    """With metrics: the metric query that answers; without: the gold SQL with the agreed
    definition forgotten (cancelled orders counted)."""
    questions = {q.question: q for q in _questions()}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = str(messages[0].parts[-1].content)  # type: ignore[union-attr]
        question = questions[prompt]
        offered = "query_metrics" in {t.name for t in info.output_tools}
        asked.append((question.id, offered))
        if offered and question.id in ANSWERS:
            return ModelResponse(parts=[ToolCallPart("query_metrics", ANSWERS[question.id])])
        sql = question.golds[0].replace("o.status <> 'cancelled' AND ", "").replace(
            "WHERE o.status <> 'cancelled' ", "")
        return ModelResponse(parts=[ToolCallPart("final_result", {
            "sql": sql, "explanation": "Written by hand."})])

    return FunctionModel(respond, model_name="scripted")


def test_the_report_compares_answers_with_and_without_metrics(bookstore_ops: OpsContext,
                                                              tmp_path: Path) -> None:
    questions = _questions()
    asked: list[tuple[str, bool]] = []
    generations = generate_predictions(questions, bookstore_ops, model=_model(asked),
                                       cache_dir=tmp_path / "out", concurrency=2)
    assert sorted(asked) == sorted([(q.id, True) for q in questions]
                                   + [(q.id, False) for q in questions if q.metric])
    report = evaluate(questions, generations, bookstore_ops, EvalSettings(context_recall=False))
    comparison = report.metrics
    assert comparison is not None and comparison.questions == len(ANSWERS)
    assert comparison.with_metrics.correct == len(ANSWERS)
    assert comparison.answered_by_metrics == len(ANSWERS)
    # without the metrics, the questions whose definition excludes cancelled orders go wrong
    assert comparison.without_metrics.correct < len(ANSWERS) - 5
    assert "governed metrics: 100.0%" in comparison.line() and "12 answered by a metric" in \
        comparison.line()
    mystery = next(q for q in report.questions if q.id == "bookstore-metrics-13")
    assert mystery.correct and mystery.source == "model" and not mystery.metrics_compared
    assert json.loads(report.model_dump_json())["metrics"]["without_metrics"]["scored"] == 12
    # a second run asks nothing: both kinds of answers are cached
    again: list[tuple[str, bool]] = []
    generate_predictions(questions, bookstore_ops, model=_model(again),
                         cache_dir=tmp_path / "out")
    assert again == []
    modes = {json.loads(line)["metrics"]
             for line in (tmp_path / "out" / CACHE_NAME).read_text().splitlines()}
    assert modes == {True, False}
