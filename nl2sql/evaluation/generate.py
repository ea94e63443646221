"""Predictions from a model (``nl2sql-eval --model M``): the NL2SQL agent answers each question
(``nl2sql.ask_async``), several at once, and every answer is appended to
``{out}/predictions.jsonl`` as soon as it arrives. A later run with the same model reuses the
cached answers for the same questions, so an interrupted run resumes without paying twice.
A metric question (``metric: true`` in the question set) on a database with governed metrics is
also answered with them hidden (``metrics: false`` in the cache), so the report shows what the
semantic layer buys.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

from nl2sql.agents.ask import ask_async
from nl2sql.errors import ModelSetupError, Nl2SqlError
from nl2sql.evaluation.inputs import Question
from nl2sql.evaluation.runner import Generation
from nl2sql.llm.providers import model_label
from nl2sql.operations.ops_context import OpsContext
from nl2sql.semantic import semantic_model
from nl2sql._helpers import NullProgress, ProgressReporter

log = logging.getLogger("nl2sql.eval")
CACHE_NAME = "predictions.jsonl"


_Key = tuple[str, str, str, str, int, bool]


def _cache_key(model: str, question: Question, candidates: int, metrics: bool = True) -> _Key:
    return (model, question.id, question.db_id, question.question, candidates, metrics)


def load_cache(path: Path) -> dict[_Key, Generation]:
    """Cached answers by (model, id, db_id, question, candidates); unreadable lines are
    skipped."""
    cached: dict[_Key, Generation] = {}
    if not path.is_file():
        return cached
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
            key = (record["model"], record["id"], record["db_id"], record["question"],
                   int(record.get("candidates") or 1), bool(record.get("metrics", True)))
            cached[key] = Generation(sql=record.get("sql"), attempts=record.get("attempts"),
                                     input_tokens=record.get("input_tokens"),
                                     output_tokens=record.get("output_tokens"),
                                     latency_seconds=record.get("latency_seconds"),
                                     error=record.get("error"),
                                     confidence=record.get("confidence"),
                                     cost_usd=record.get("cost_usd"),
                                     source=record.get("source"))
        except (json.JSONDecodeError, KeyError, TypeError):
            continue  # a line cut by an interruption: that question is asked again
    return cached


def _record(model: str, question: Question, generation: Generation, candidates: int,
            metrics: bool = True) -> str:
    return json.dumps({"id": question.id, "db_id": question.db_id,
                       "question": question.question, "model": model,
                       "candidates": candidates, "metrics": metrics, "source": generation.source,
                       "confidence": generation.confidence,
                       "cost_usd": generation.cost_usd, "sql": generation.sql,
                       "attempts": generation.attempts, "input_tokens": generation.input_tokens,
                       "output_tokens": generation.output_tokens,
                       "latency_seconds": generation.latency_seconds,
                       "error": generation.error}, ensure_ascii=False) + "\n"


def _from_answer(answer: Any, seconds: float) -> Generation:
    usage = getattr(answer, "usage", None)

    def field(name: str) -> int | None:
        value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
        return int(value) if value is not None else None

    attempts = getattr(answer, "attempts", None)
    return Generation(sql=getattr(answer, "sql", None) or None,
                      attempts=len(attempts) if attempts is not None else None,
                      input_tokens=field("input_tokens"), output_tokens=field("output_tokens"),
                      latency_seconds=round(seconds, 3),
                      confidence=getattr(answer, "confidence", None),
                      cost_usd=getattr(answer, "cost_usd", None),
                      source=getattr(answer, "source", None))


def generate_predictions(questions: list[Question], ctx: OpsContext, *, model: Any,
                         cache_dir: Path, concurrency: int = 4, candidates: int = 1,
                         progress: ProgressReporter | None = None) -> dict[str, Generation]:
    """A ``Generation`` per question id: cached ones first, the rest asked of the agent.

    ``model``: a pydantic-ai model string (``openai:gpt-4o-mini``) or model object;
    ``candidates``: SQL candidates per answer (the answer's confidence is kept)."""
    return asyncio.run(_generate(questions, ctx, model=model, cache_dir=cache_dir,
                                 concurrency=concurrency, candidates=candidates,
                                 progress=progress or NullProgress()))


async def _generate(questions: list[Question], ctx: OpsContext, *, model: Any, cache_dir: Path,
                    concurrency: int, candidates: int,
                    progress: ProgressReporter) -> dict[str, Generation]:
    name = model_label(model)  # what predictions are cached under
    cache_path = cache_dir / CACHE_NAME
    cached = load_cache(cache_path)
    # Each question once as asked; a metric question on a database with governed metrics also
    # with them hidden, for the report's comparison (metrics=False).
    with_metrics = {db_id: _has_metrics(ctx, db_id)
                    for db_id in {q.db_id for q in questions if q.metric}}
    jobs = [(q, True) for q in questions] + [(q, False) for q in questions
                                             if q.metric and with_metrics[q.db_id]]
    done = {(q.id, metrics): cached[_cache_key(name, q, candidates, metrics)]
            for q, metrics in jobs if _cache_key(name, q, candidates, metrics) in cached}
    todo = [(q, metrics) for q, metrics in jobs if (q.id, metrics) not in done]
    if done:
        log.info("reusing %d cached predictions from %s", len(done), cache_path)
    progress.start(f"asking {name}", len(todo))
    semaphore = asyncio.Semaphore(max(1, concurrency))
    cache_dir.mkdir(parents=True, exist_ok=True)

    async def one(question: Question, metrics: bool, sink: Any) -> None:
        async with semaphore:
            started = time.monotonic()
            try:
                # reuse=False: a verified answer to the question would score the store, not
                # the model being evaluated.
                answer = await ask_async(question.question, db_id=question.db_id, model=model,
                                         config=ctx, candidates=candidates, reuse=False,
                                         use_metrics=metrics)
                generation = _from_answer(answer, time.monotonic() - started)
            except ModelSetupError:
                raise  # no key, unreachable provider: stop the run, cache nothing
            except Nl2SqlError as exc:  # no answer within the retries: wrong, with the reason
                attempts = getattr(exc, "attempts", None)
                generation = Generation(sql=None, error=str(exc),
                                        attempts=len(attempts) if attempts else None,
                                        latency_seconds=round(time.monotonic() - started, 3),
                                        confidence=0.0 if candidates > 1 else None,
                                        cost_usd=getattr(exc, "cost_usd", None))
            sink.write(_record(name, question, generation, candidates, metrics))
            sink.flush()
            done[(question.id, metrics)] = generation
            progress.advance(question.id)

    try:
        with cache_path.open("a", encoding="utf-8") as sink:
            if sink.tell() and not cache_path.read_bytes().endswith(b"\n"):
                sink.write("\n")  # a line cut by an interruption stays on its own
            tasks = [asyncio.create_task(one(q, metrics, sink)) for q, metrics in todo]
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                for task in tasks:
                    task.cancel()
                raise
    finally:
        progress.finish()
    results = {q.id: done[(q.id, True)] for q in questions if (q.id, True) in done}
    for question in questions:
        if (question.id, False) in done and question.id in results:
            results[question.id].without_metrics = done[(question.id, False)]
    return results


def _has_metrics(ctx: OpsContext, db_id: str) -> bool:
    """The database has governed metrics (a semantic model that could be read)."""
    try:
        model = semantic_model(ctx.config(db_id))
    except Nl2SqlError:
        return False
    return model is not None and bool(model.metrics)
