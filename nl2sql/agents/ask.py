"""``nl2sql.ask()`` / ``ask_async()``: a question in, an ``Answer`` with SQL that ran out.

Steps: resolve the model (argument > ``NL2SQL_MODEL`` > ``model:`` in dbs.yaml), pick the
database (the argument, the conversation's database, or the catalog agent), ask
``nl2sql.context()`` for the prompt context, run the NL2SQL agent (once, or as N candidates at
once: ``candidates.py``) bounded by ``UsageLimits`` for the whole answer, pick the answer among
the candidates by their results (``selection.py``), read the result CSV into a DataFrame, and
store the turn when a conversation id is given: what was said and done, never the context,
which is rebuilt for every turn (``history.py``).
``ask()`` also works where an event loop is already running (Jupyter): the run then happens on a
private loop in a worker thread, and interrupting the cell cancels it there. A cancelled run
(a cancelled or timed-out task, Ctrl-C) stops the query it is running (``nl2sql._worker``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import time
import uuid
from pathlib import Path
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage, UsageLimits

from nl2sql.agents.answer import Answer, Attempt, read_dataframe
from nl2sql.agents.candidates import (CandidateRun, candidate_instructions, no_answer,
                                      plan_candidates, run_candidates)
from nl2sql.agents.catalog import choose_database
from nl2sql.agents.conversations import ConversationStore, trim_turns
from nl2sql.agents.history import said_and_done, turn_history
from nl2sql.agents.instructions import nl2sql_instructions
from nl2sql.agents.selection import candidate_records, group_runs, select
from nl2sql.agents.sql_agent import Nl2SqlDeps, answer_source, build_sql_agent
from nl2sql.config.agent_settings import MAX_CANDIDATES, AgentSettings
from nl2sql.errors import (Nl2SqlError, require_question, require_string,
                           require_whole_number)
from nl2sql.llm.meter import ResponseMeter
from nl2sql.llm.providers import build_model, no_model_error
from nl2sql.llm.usage import step_usage
from nl2sql.operations.first_use import prepare_context_engine
from nl2sql.operations.ops_context import OpsContext, ops_context_for
from nl2sql.operations.recorded import recorded
from nl2sql.operations.verified_serve import Served, serve_verified
from nl2sql.workspace.results import metadata_name_for, new_result_id, remove_result
from nl2sql.workspace.saved_query_store import saved_query_index
from nl2sql.store.store import Store
from nl2sql.context_engine import context
from nl2sql._helpers import plural, say, shorten
from nl2sql._worker import run_in_worker

T = TypeVar("T")

if TYPE_CHECKING:
    from nl2sql.config.registry import DbConnectionConfigs
    from nl2sql.context_engine import PromptContext


def ask(question: str, *, db_id: str | None = None, model: Model | str | None = None,
        conversation_id: str | None = None,
        config: DbConnectionConfigs | OpsContext | str | Path | None = None,
        max_rows: int | None = None, candidates: int | None = None,
        request_id: str | None = None, reuse: bool = True, use_metrics: bool = True) -> Answer:
    """Answer ``question`` with SQL that ran; see ``ask_async``. Works in Jupyter too."""
    run = functools.partial(ask_async, question, db_id=db_id, model=model,
                            conversation_id=conversation_id, config=config, max_rows=max_rows,
                            candidates=candidates, request_id=request_id, reuse=reuse,
                            use_metrics=use_metrics)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run())
    # A loop already runs in this thread (Jupyter, an async app): run on a private loop.
    return _on_private_loop(run)


def _on_private_loop(run: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``run()`` on a loop of its own in another thread, this one waiting. Ctrl-C here
    (interrupting a Jupyter cell) cancels it there, so its query stops (``run_in_worker``), and
    is raised once it has ended."""
    running: concurrent.futures.Future[tuple[asyncio.AbstractEventLoop, asyncio.Task[T]]] = \
        concurrent.futures.Future()

    async def main() -> T:
        task = asyncio.current_task()
        assert task is not None
        running.set_result((asyncio.get_running_loop(), task))
        return await run()

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nl2sql-ask") as pool:
        done = pool.submit(asyncio.run, main())
        try:
            return done.result()
        except KeyboardInterrupt:
            concurrent.futures.wait([running, done], return_when="FIRST_COMPLETED")
            if running.done() and not done.done():
                loop, task = running.result()
                try:
                    loop.call_soon_threadsafe(task.cancel)
                except RuntimeError:  # its loop closed meanwhile: it has ended
                    pass
            concurrent.futures.wait([done])  # a second Ctrl-C ends this wait
            raise


async def ask_async(question: str, *, db_id: str | None = None,
                    model: Model | str | None = None, conversation_id: str | None = None,
                    config: DbConnectionConfigs | OpsContext | str | Path | None = None,
                    max_rows: int | None = None, candidates: int | None = None,
                    request_id: str | None = None, reuse: bool = True,
                    use_metrics: bool = True) -> Answer:
    """Answer ``question`` from a configured database.

    ``db_id`` None: the conversation's database, else the catalog agent's choice
    (``answer.db_id`` says which). ``conversation_id``: earlier turns are sent as history and
    this turn is stored; ``request_id`` makes a retried call return the stored turn instead of
    adding another. ``max_rows`` caps the rows read into ``answer.df`` (default: the ``agent:
    max_rows`` setting). ``candidates``: SQL candidates written at once and grouped by result,
    the largest group answering (default: the ``agent: candidates`` setting, 1);
    ``answer.confidence`` is the share of them that agree. ``reuse``: a question with a
    verified answer (the same question once case, punctuation, spacing and number spelling are
    folded) is answered by running that answer's SQL on today's data, with no model request
    (``answer.source`` is ``"verified:<id>"``); False always asks the model. Raises
    ``NoAnswerError`` when no SQL ran within the retries and the request/token budget, and
    other ``Nl2SqlError``s for setup problems. ``use_metrics`` False hides the database's
    governed metrics from the model (``nl2sql-eval`` compares answers with and without them).
    """
    started = time.monotonic()
    question = require_question(question)
    _check_arguments(db_id=db_id, model=model, conversation_id=conversation_id,
                     request_id=request_id, max_rows=max_rows, candidates=candidates)
    with ops_context_for(config) as ops, recorded(ops, "ask", db_id=db_id) as record:
        answer = await _ask(ops, question, db_id=db_id, model=model,
                            conversation_id=conversation_id, max_rows=max_rows,
                            candidates=candidates, request_id=request_id, started=started,
                            reuse=reuse, use_metrics=use_metrics)
        record.note(answer)
        answer._registry = ops.configs  # answer.accept() keeps to the same data dir
        return answer


async def _ask(ops: OpsContext, question: str, *, db_id: str | None, model: Model | str | None,
               conversation_id: str | None, max_rows: int | None, candidates: int | None,
               request_id: str | None, started: float, reuse: bool,
               use_metrics: bool = True) -> Answer:
    settings = ops.configs.agent
    rows = max_rows or settings.max_rows
    count = _candidate_count(candidates, settings)
    store = ConversationStore(ops.store, ops.caller.name) if conversation_id else None
    if store and request_id:
        earlier = store.turn_for_request(request_id)
        if earlier is not None and earlier.answer is not None:
            return _stored_answer(ops, earlier.answer, rows)
    # The newest turns the history can hold (and the last two, for the database and retrieval).
    turns = (store.recent_turns(conversation_id, settings.history_tokens)
             if store and conversation_id else [])
    if store and conversation_id and not turns:  # none of this user's: refused before the
        store.check_owner(conversation_id)       # model is asked if someone else's
    answer_id = new_result_id()
    if reuse and not turns:  # a follow-up depends on the turns before it: never reused
        served = await run_in_worker(functools.partial(
            serve_verified, ops, question, db_id, answer_id=answer_id))
        if served is not None:
            answer = _verified_answer(ops, served, answer_id, rows, started, conversation_id)
            if store and conversation_id:
                store.append(conversation_id, request_id=request_id or uuid.uuid4().hex,
                             question=question, db_id=answer.db_id,
                             answer=answer.model_dump(mode="json"),
                             messages=said_and_done(question, answer.sql, answer.explanation))
            return answer
    chosen = model or ops.configs.model or (settings.models[0] if settings.models else None)
    if not chosen:
        raise no_model_error()
    llm = build_model(chosen)
    models = [build_model(name) for name in settings.models] if count > 1 else []
    usage = RunUsage()  # shared by every run of this answer: the limits bound the whole answer
    meter = ResponseMeter()  # every model response of this answer, for its cost
    requests, tokens = settings.limits(count)
    limits = UsageLimits(request_limit=requests, total_tokens_limit=tokens)
    if db_id is None:
        db_id = turns[-1].db_id if turns and turns[-1].db_id else (await choose_database(
            ops, question, model=llm, usage=usage, top=settings.catalog_candidates,
            retries=settings.retries, usage_limits=limits, capabilities=[meter])).db_id
    config = ops.config(db_id)  # an unknown id fails here, with the known ones
    # A follow-up ("and only for 2024?") names few tables: retrieve with the earlier questions.
    retrieval = " ".join([*(turn.question for turn in turns[-2:]), question])
    say(f"Finding the tables of database '{db_id}' the question needs…")
    prompt_context = await run_in_worker(_prompt_context, ops, retrieval, db_id)
    if not use_metrics:
        prompt_context = prompt_context.model_copy(update={"metrics": []})
    tables = shorten(", ".join(t.name for t in prompt_context.tables), 120)
    say(f"Using {plural(len(prompt_context.tables), 'table')} of '{db_id}' ({tables})"
        + (f"; writing {count} SQL candidates at once…" if count > 1 else "…"))
    render = functools.partial(nl2sql_instructions, db_type=config.type.value,
                               dialect=ops.connection(db_id).sqlglot_dialect,
                               data_dir=ops.data_dir)
    history = [m for turn in trim_turns([t.seen_from(db_id) for t in turns],
                                        settings.history_tokens) for m in turn.messages()]
    runs = await run_candidates(
        build_sql_agent(settings.retries), plan_candidates(count, llm, models), question=question,
        instructions=lambda plan: candidate_instructions(plan, prompt_context, render),
        deps=lambda plan: Nl2SqlDeps(ops=ops, db_id=db_id, question=question,
                                     answer_id=answer_id, metrics=bool(prompt_context.metrics)),
        retries=settings.retries, message_history=history or None, usage=usage,
        usage_limits=limits, capabilities=[meter])
    if not any(run.ran for run in runs):
        error = no_answer(runs, db_id)
        error.cost_usd = meter.cost_usd()
        raise error
    workspace = ops.workspace.resolve()
    groups = await run_in_worker(group_runs, runs, workspace,
                                 ops.connection(db_id).sqlglot_dialect)
    selection = await select(groups, question=question, db_id=db_id, retries=settings.retries,
                             model=llm, usage=usage, usage_limits=limits, capabilities=[meter])
    winner = selection.chosen.first
    query = winner.deps.result
    assert query is not None and winner.result is not None  # the validator ran its final SQL
    csv_path = workspace / query.csv_filename
    await run_in_worker(_remove_other_results, runs, winner, workspace, ops.store)
    answer = Answer(
        id=answer_id, question=question, db_id=config.db_id, sql=winner.result.output.sql,
        explanation=winner.result.output.explanation, df=read_dataframe(csv_path, rows),
        csv_path=str(csv_path), row_count=query.row_count, truncated=query.truncated,
        attempts=winner.deps.attempts, usage=step_usage(usage),
        conversation_id=conversation_id,
        confidence=round(selection.chosen.size / count, 4) if count > 1 else None,
        candidates=candidate_records(runs, selection), selection_reason=selection.reason,
        cost_usd=meter.cost_usd(), latency_ms=round((time.monotonic() - started) * 1000),
        context=prompt_context.used(), models=meter.models,
        schema_fingerprint=_fingerprint(ops, config.db_id),
        source=answer_source(winner.result.output))
    if store and conversation_id:
        store.append(conversation_id, request_id=request_id or uuid.uuid4().hex,
                     question=question, db_id=db_id, answer=answer.model_dump(mode="json"),
                     messages=turn_history(winner.result.new_messages(),
                                           result_preview=query.preview))
    return answer


def _check_arguments(*, db_id: Any, model: Any, conversation_id: Any, request_id: Any,
                     max_rows: Any, candidates: Any) -> None:
    """One line for an argument of the wrong kind, before anything runs (no model request is
    spent on a call that would fail after it)."""
    for name, value in (("db_id", db_id), ("conversation_id", conversation_id),
                        ("request_id", request_id)):
        if value is not None:
            require_string(value, name)
    if model is not None and not isinstance(model, (str, Model)):
        raise Nl2SqlError(f"model must be a model string such as 'openai:gpt-4o-mini' or a "
                          f"pydantic-ai Model (got {type(model).__name__}).")
    if max_rows is not None:
        require_whole_number(max_rows, "max_rows")
    if candidates is not None:  # its range is the agent settings' (_candidate_count)
        require_whole_number(candidates, "candidates", at_least=None)


def _candidate_count(candidates: int | None, settings: AgentSettings) -> int:
    count = settings.candidates if candidates is None else candidates
    if not 1 <= count <= MAX_CANDIDATES:
        raise Nl2SqlError(f"candidates must be between 1 and {MAX_CANDIDATES} (got {count}); "
                          f"5 is a good start for answers that matter.")
    return count


def _prompt_context(ops: OpsContext, question: str, db_id: str) -> PromptContext:
    prepare_context_engine()  # concurrent first questions (the web page) import it once
    return context(question, db_id=db_id, config=ops)


def _verified_answer(ops: OpsContext, served: Served, answer_id: str, rows: int,
                     started: float, conversation_id: str | None) -> Answer:
    """The answer of a verified answer run again: no model, no context, the receipt says so."""
    verified, query = served.verified, served.result
    csv_path = ops.workspace.resolve() / query.csv_filename
    by = f" by {verified.accepted_by}" if verified.accepted_by else ""
    return Answer(
        id=answer_id, question=query.natural_language_query or verified.question,
        db_id=verified.db_id, sql=verified.sql,
        explanation=f"The verified answer {verified.id} to \"{verified.question}\" (accepted "
                    f"{verified.accepted_at:%Y-%m-%d}{by}), run again on today's data.",
        df=read_dataframe(csv_path, rows), csv_path=str(csv_path), row_count=query.row_count,
        truncated=query.truncated, attempts=[Attempt(sql=verified.sql)],
        conversation_id=conversation_id, cost_usd=0.0,
        latency_ms=round((time.monotonic() - started) * 1000),
        schema_fingerprint=_fingerprint(ops, verified.db_id), source=f"verified:{verified.id}")


def _fingerprint(ops: OpsContext, db_id: str) -> str | None:
    """The schema fingerprint of ``db_id``'s cache (None without one)."""
    return ops.schema_fingerprint(db_id)


def _remove_other_results(runs: list[CandidateRun], winner: CandidateRun,
                          workspace: Path, store: Store) -> None:
    """The result files of the candidates not chosen (each wrote new files of its own)."""
    for run in runs:
        if run is not winner and run.deps.output_file:
            csv_path = workspace / run.deps.output_file
            trace = remove_result(csv_path)
            saved_query_index(workspace, store).record(
                csv_path.with_name(metadata_name_for(csv_path.name)), trace.marks)


def _stored_answer(ops: OpsContext, data: dict[str, Any], rows: int) -> Answer:
    answer = Answer.model_validate(data)
    path = Path(answer.csv_path)
    if path.is_file():
        answer.df = read_dataframe(path, rows)
    return answer


__all__ = ["Answer", "Attempt", "ask", "ask_async"]
