"""Candidates run at once: the wall time of ``nl2sql.ask(..., candidates=5)`` against
``candidates=1`` with a model that takes 300 ms per request. Target: 5 candidates within 1.5x
the wall time of 1.

Two models, both answering each request after ``--delay`` seconds with the final SQL (one
request per candidate; with 5 candidates the answer's 5 requests overlap):

- ``function``: pydantic-ai's ``FunctionModel`` with an ``asyncio.sleep`` (in process);
- ``http``: the real ``openai`` client and pydantic-ai's chat model against a local
  OpenAI-compatible server (``tests/stub_openai.py``) whose handler threads sleep, so the
  requests also cross HTTP and the provider SDK.

The bundled bookstore sample is the database (annotated without a model in a temporary
folder). Each round asks once with 1 and once with 5 candidates (alternating, so machine load
hits both alike) after one warm-up of each; the medians are compared. Exits 1 when the ratio
is above ``--target``.

Usage:
    .venv/bin/python bench/candidates_concurrency.py [--model function http] [--rounds 7]
        [--delay 0.3] [--candidates 5] [--target 1.5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import nl2sql  # noqa: E402
from nl2sql.annotation.pipeline import annotate_database  # noqa: E402
from nl2sql.operations.ops_context import OpsContext  # noqa: E402

QUESTION = "How many books are in the catalogue?"
SQL = "SELECT count(*) AS books FROM books"


def _ops(folder: Path) -> OpsContext:
    ops = OpsContext.load(None, data_dir=folder / "data", workspace=folder / "ws")
    annotate_database(ops.config("bookstore"), ops.data_dir)  # offline steps only, no model
    return ops


def _function_model(delay: float) -> object:
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    async def respond(messages: object, info: object) -> ModelResponse:
        await asyncio.sleep(delay)
        return ModelResponse(parts=[ToolCallPart("final_result", {
            "sql": SQL, "explanation": "Counts the books."})])

    return FunctionModel(respond, model_name="slow-scripted")


def _stub(delay: float) -> object:
    from stub_openai import StubOpenAI, tool_call

    def respond(body: dict) -> object:
        reply = tool_call("final_result", sql=SQL, explanation="Counts the books.")
        reply.delay = delay  # slept in the request's own thread: concurrent requests overlap
        return reply

    stub = StubOpenAI(responder=respond).__enter__()
    os.environ.update(stub.env())
    return stub


def _time(ops: OpsContext, model: object, candidates: int) -> float:
    started = time.perf_counter()
    answer = nl2sql.ask(QUESTION, db_id="bookstore", model=model, config=ops,
                        candidates=candidates, reuse=False)
    elapsed = time.perf_counter() - started
    assert answer.usage.requests == candidates and answer.row_count == 1, answer
    assert candidates == 1 or answer.confidence == 1.0
    return elapsed


def run(kind: str, rounds: int, delay: float, candidates: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="nl2sql-bench-cands-") as tmp:
        ops = _ops(Path(tmp))
        stub = None
        if kind == "http":
            stub = _stub(delay)
            model: object = "openai-chat:stub-model"
        else:
            model = _function_model(delay)
        try:
            _time(ops, model, 1)
            _time(ops, model, candidates)  # warm-up: context index, imports, connections
            one, many = [], []
            for _ in range(rounds):
                one.append(_time(ops, model, 1))
                many.append(_time(ops, model, candidates))
        finally:
            ops.close()
            if stub is not None:
                stub.close()
    return statistics.median(one), statistics.median(many)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", nargs="+", choices=["function", "http"],
                        default=["function", "http"])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--delay", type=float, default=0.3, help="seconds per model request")
    parser.add_argument("--candidates", type=int, default=5)
    parser.add_argument("--target", type=float, default=1.5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; "
          f"{args.delay * 1000:.0f} ms per request; {args.rounds} rounds, medians")
    missed = False
    for kind in args.model:
        one, many = run(kind, args.rounds, args.delay, args.candidates)
        ratio = many / one
        missed |= ratio > args.target
        print(f"{kind:8} 1 candidate {one * 1000:7.0f} ms   {args.candidates} candidates "
              f"{many * 1000:7.0f} ms   ratio {ratio:.2f}x (target <= {args.target}x)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
