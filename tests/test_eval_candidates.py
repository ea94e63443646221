"""``nl2sql-eval --model M --candidates N``: each question answered by N candidates, the
answer's confidence kept; the calibration table (accuracy per confidence bucket), computed on a
seeded set with known verdicts per bucket; the cost in total and per question (priced models
only); report.json and report.html carry both; predictions files are unchanged."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price
from pydantic_ai.messages import (ModelMessage, ModelRequest, ModelResponse, ToolCallPart,
                                  UserPromptPart)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from nl2sql.config.bundled import question_set_path
from nl2sql.evaluation import EvalSettings, evaluate, load_questions
from nl2sql.evaluation.generate import CACHE_NAME, generate_predictions
from nl2sql.evaluation.html import render_html
from nl2sql.evaluation.report import Report, calibration, cost_line, generation_cost
from nl2sql.evaluation.scoring import QuestionResult
from nl2sql.operations.ops_context import OpsContext

QUESTIONS = load_questions(question_set_path("bookstore"))[:4]
WRONG = "SELECT 42 AS answer"


def _result(index: int, confidence: float | None, correct: bool,
            broken: bool = False) -> QuestionResult:
    return QuestionResult(id=f"q{index}", db_id="x", question="?", gold_sql=["SELECT 1"],
                          correct=None if broken else correct, broken_gold=broken,
                          generated=True, confidence=confidence, cost_usd=0.001)


def test_calibration_on_a_seeded_set_with_known_verdicts_per_bucket() -> None:
    """Per bucket (confidence, questions, correct), shuffled with a fixed seed; the table must
    give back exactly these counts whatever the order."""
    known = {1.0: (20, 19), 0.8: (10, 8), 0.6: (8, 4), 0.4: (6, 2), 0.2: (4, 0), 0.0: (2, 0)}
    rng = random.Random(2026)
    results = []
    for confidence, (questions, correct) in known.items():
        verdicts = [True] * correct + [False] * (questions - correct)
        rng.shuffle(verdicts)
        results += [_result(len(results) + i, confidence, v) for i, v in enumerate(verdicts)]
    results += [_result(999, 1.0, False, broken=True)]  # a broken gold does not count
    rng.shuffle(results)
    table = calibration(results)
    assert [(b.confidence_min, b.confidence_max) for b in table] == \
        [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.0)]
    # (lo, hi]: 0.0 and 0.2 share the first bucket, each other share its own
    assert [(b.questions, b.correct) for b in table] == [(6, 0), (6, 2), (8, 4), (10, 8), (20, 19)]
    assert [b.accuracy for b in table] == [0.0, 0.3333, 0.5, 0.8, 0.95]
    assert table[4].interval_95 is not None and table[4].interval_95[0] < 0.95
    # 3 candidates: 1/3 and 2/3 fall in the buckets that hold them
    thirds = calibration([_result(1, 0.3333, True), _result(2, 0.6667, False),
                          _result(3, 0.6667, True)])
    assert [b.questions for b in thirds] == [0, 1, 0, 2, 0]
    assert calibration([_result(1, None, True)]) is None  # one candidate: no table


def test_cost_is_summed_only_when_every_question_is_priced() -> None:
    results = [_result(i, 1.0, True) for i in range(4)]
    assert generation_cost(results) == 0.004
    report = Report.build(results)
    assert report.cost_usd == 0.004 and report.cost_per_question == 0.001
    assert cost_line(report) == "cost: $0.004000 for 4 questions, $0.001000 per question"
    results[2].cost_usd = None  # one answer from a model without a price
    unpriced = Report.build(results)
    assert unpriced.cost_usd is None and unpriced.cost_per_question is None
    assert cost_line(unpriced) == "cost: unknown (no price for this model)"
    for result in results:
        result.generated = False  # predictions from a file: no cost at all
    assert cost_line(Report.build(results)) is None


class Voters:
    """Answers the candidates of each question from its list, in the order they ask (each
    candidate's first request); the model is named like a priced one."""

    def __init__(self, votes: dict[str, list[str]]) -> None:
        self.votes = votes
        self.asked: dict[str, int] = {}
        self.lock = threading.Lock()

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        question = next(str(p.content) for m in messages if isinstance(m, ModelRequest)
                        for p in m.parts if isinstance(p, UserPromptPart))
        with self.lock:
            turn = self.asked.get(question, 0)
            self.asked[question] = turn + 1
        return ModelResponse(parts=[ToolCallPart("final_result", {
            "sql": self.votes[question][turn], "explanation": "From the schema."})])

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(self.respond, model_name="gpt-4o-mini")


def test_model_run_with_candidates_reports_calibration_and_cost(bookstore_ops: OpsContext,
                                                                tmp_path: Path) -> None:
    gold = [q.golds[0] for q in QUESTIONS]
    votes = {QUESTIONS[0].question: [gold[0]] * 3,  # 3/3 agree, right
             QUESTIONS[1].question: [gold[1], gold[1], WRONG],  # 2/3, right
             QUESTIONS[2].question: [WRONG, gold[2], WRONG],  # 2/3, wrong
             QUESTIONS[3].question: [WRONG] * 3}  # 3/3 agree, wrong
    voters = Voters(votes)
    out = tmp_path / "out"
    generations = generate_predictions(QUESTIONS, bookstore_ops, model=voters.model, cache_dir=out,
                                       candidates=3)
    assert voters.asked == {q.question: 3 for q in QUESTIONS}
    report = evaluate(QUESTIONS, generations, bookstore_ops, EvalSettings(context_recall=False))
    by_id = {q.id: (q.confidence, q.correct) for q in report.questions}
    assert [by_id[q.id] for q in QUESTIONS] == [(1.0, True), (0.6667, True), (0.6667, False),
                                                (1.0, False)]
    table = {(b.confidence_min, b.confidence_max): (b.questions, b.correct)
             for b in report.calibration}
    assert table[(0.6, 0.8)] == (2, 1) and table[(0.8, 1.0)] == (2, 1)
    assert sum(n for n, _ in table.values()) == 4
    # priced by genai-prices from the tokens the model reported, per question and in total
    expected = sum(calc_price(Usage(input_tokens=q.input_tokens, output_tokens=q.output_tokens),
                              model_ref="gpt-4o-mini").total_price for q in report.questions)
    assert report.cost_usd == pytest.approx(float(expected), rel=1e-3) and report.cost_usd > 0
    assert report.cost_per_question == pytest.approx(report.cost_usd / 4, rel=1e-3)
    report.write_json(out / "report.json")
    written = json.loads((out / "report.json").read_text())
    assert written["cost_usd"] == report.cost_usd
    assert {tuple(sorted(b)) for b in written["calibration"]} >= {
        ("accuracy", "confidence_max", "confidence_min", "correct", "interval_95", "questions")}
    html = render_html(report)
    assert "Calibration" in html and "confidence 0.8–1.0" in html and "per question" in html
    # the cache keeps the candidates: a run with another N asks again, the same N does not
    cached = [json.loads(line) for line in (out / CACHE_NAME).read_text().splitlines()]
    assert {c["candidates"] for c in cached} == {3} and all("confidence" in c for c in cached)
    again = Voters(votes)
    generate_predictions(QUESTIONS, bookstore_ops, model=again.model, cache_dir=out, candidates=3)
    assert again.asked == {}


def test_candidates_without_a_model_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([str(Path(sys.executable).parent / "nl2sql-eval"), "--set",
                           "bookstore", "--predictions", str(tmp_path / "p.jsonl"),
                           "--candidates", "3"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--candidates needs --model" in done.stderr


def test_cli_prints_the_calibration_table_and_the_cost(bookstore_ops: OpsContext, tmp_path: Path,
                                                       stub_openai) -> None:  # noqa: ANN001
    """Over HTTP (the stub answers as gpt-4o-mini, a priced name), in a child process."""
    from stub_openai import tool_call

    gold = [q.golds[0] for q in QUESTIONS[:2]]
    votes = {QUESTIONS[0].question: [gold[0]] * 3, QUESTIONS[1].question: [gold[1], WRONG, WRONG]}
    asked: dict[str, int] = {}

    def respond(body: dict):  # noqa: ANN202
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        turn = asked[question] = asked.get(question, -1) + 1
        return tool_call("final_result", sql=votes[question][turn], explanation="From it.")

    stub_openai.responder = respond
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps({"id": q.id, "db_id": q.db_id, "question":
                                             q.question, "query": q.golds}) + "\n"
                                 for q in QUESTIONS[:2]))
    out = tmp_path / "out"
    done = subprocess.run(
        [str(Path(sys.executable).parent / "nl2sql-eval"), str(questions), "--model",
         "openai-chat:gpt-4o-mini", "--candidates", "3", "--out", str(out), "--no-context",
         "--data-dir", str(bookstore_ops.data_dir), "--workspace", str(tmp_path / "cli-ws")],
        capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "Calibration" in done.stdout and "0.6–0.8" in done.stdout
    assert "cost: $0.000081 for 2 questions, $0.000041 per question" in done.stdout  # 6 x 50+10
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["candidates"] == 3 and report["cost_usd"] > 0
    buckets = {b["confidence_max"]: (b["questions"], b["accuracy"]) for b in
               report["calibration"]}
    assert buckets[1.0] == (1, 1.0) and buckets[0.8] == (1, 0.0)  # 2/3 agreed on a wrong one
    assert asked == {q.question: 2 for q in QUESTIONS[:2]}  # turns 0, 1, 2: three candidates
    assert len(stub_openai.requests) == 6
