"""Asking and running SQL from the page, answered as they progress.

``POST /ask`` (``question``, ``db_id`` optional, ``conversation_id`` optional: a follow-up) and
``POST /sql`` (``db_id``, ``sql``: a query a person wrote, through the same read-only guard)
answer with a stream of JSON lines (``application/x-ndjson``), one event each:

- ``{"event": "started", "conversation_id": ...}`` (ask): the conversation the turn goes to;
- ``{"event": "status", "text": ...}``: what runs now, as ``nl2sql-ask``'s spinner says it
  (the tables chosen, the candidates being written, the query running, the rows);
- ``{"event": "answer", "answer": {...}, "html": ...}`` / ``{"event": "result", ...}``: the
  answer or result (its JSON, and the same rendered for the page);
- ``{"event": "error", "error": sentence, "status": code}``.

Stop: the page aborts its request. The server sees the client go (``http.disconnect``) and
cancels the work, whose running queries ``nl2sql._worker.run_in_worker`` stops on the engine
(a PostgreSQL cancel request, ``KILL QUERY``, an interrupt); the ask is recorded as
``cancelled``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from nl2sql._helpers import say, status_to
from nl2sql._worker import run_in_worker
from nl2sql.agents.ask import ask_async
from nl2sql.access.disclosure import shown_to
from nl2sql.errors import UsageError, as_one_sentence
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.operations.recorded import call_recorded
from nl2sql.web.context import signed_in, web_of
from nl2sql.web.render import render, status_of
from nl2sql.web.views import answer_view, sql_view

logger = logging.getLogger(__name__)
Event = dict[str, Any]
NDJSON = "application/x-ndjson"


async def events(work: Callable[[], Awaitable[Event]], ops: OpsContext,
                 first: Event | None = None) -> AsyncIterator[bytes]:
    """``first``, then every status ``work`` says while it runs, then its final event (or the
    error event). Cancelled (the client went away): ``work`` is cancelled and awaited, so its
    queries are stopped before this ends."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Event] = asyncio.Queue()

    def status(text: str) -> None:  # from worker threads too
        try:
            loop.call_soon_threadsafe(queue.put_nowait, {"event": "status", "text": text})
        except RuntimeError:  # the loop closed: nobody listens any more
            pass

    with status_to(status):
        task = asyncio.ensure_future(work())  # the task's context carries the listener
    try:
        if first is not None:
            yield _line(first)
        while not task.done():
            getter = asyncio.ensure_future(queue.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield _line(getter.result())
            else:
                getter.cancel()
        while not queue.empty():
            yield _line(queue.get_nowait())
        yield _line(_final(task, ops))
    finally:
        if not task.done():
            task.cancel()
            with anyio.CancelScope(shield=True):  # the queries stop before the request ends
                await asyncio.wait([task])


def _final(task: asyncio.Future[Event], ops: OpsContext) -> Event:
    try:
        return task.result()
    except Exception as exc:  # noqa: BLE001 - the stream's edge: one sentence for all
        error = as_one_sentence(exc, "web ask")
        return {"event": "error", "error": shown_to(ops, str(error)),
                "status": 500 if error is not exc else status_of(error)}


def _line(event: Event) -> bytes:
    return json.dumps(event, default=str).encode() + b"\n"


async def _fields(request: Request) -> dict[str, str]:
    """The request's form fields (or JSON object) as stripped strings."""
    if request.headers.get("content-type", "").startswith("application/json"):
        body = await request.json()
        items = body.items() if isinstance(body, dict) else []
    else:
        items = (await request.form()).items()
    return {key: value.strip() for key, value in items if isinstance(value, str)}


@signed_in
async def ask(request: Request, ops: OpsContext) -> Response:
    web = web_of(request)
    fields = await _fields(request)
    question = fields.get("question", "")
    if not question:
        raise UsageError("Type a question first.")
    conversation_id = fields.get("conversation_id") or uuid.uuid4().hex
    page = web.page(ops)

    async def work() -> Event:
        answer = await ask_async(question, db_id=fields.get("db_id") or None, model=web.model,
                                 conversation_id=conversation_id, config=ops)
        say(f"{answer.row_count:,} row(s); showing them…")
        view = await run_in_worker(answer_view, ops, answer, name="web answer")
        return {"event": "answer", "answer": view,
                "html": render("_answer.html", answer=view, page=page)}

    return StreamingResponse(events(work, ops, {"event": "started",
                                                "conversation_id": conversation_id}),
                             media_type=NDJSON)


@signed_in
async def run_sql(request: Request, ops: OpsContext) -> Response:
    fields = await _fields(request)
    db_id, sql = fields.get("db_id", ""), fields.get("sql", "")
    if not db_id or not sql:
        raise UsageError("Choose a database and write a query first.")
    page = web_of(request).page(ops)

    async def work() -> Event:
        result = await run_in_worker(functools.partial(
            call_recorded, "db_execute_sql", db_execute_sql_op, ops, db_id=db_id, query=sql),
            name="db_execute_sql")
        say(f"{result.row_count:,} row(s); showing them…")
        view = await run_in_worker(sql_view, ops, result, name="web result")
        return {"event": "result", "result": view,
                "html": render("_sql_result.html", result=view, page=page)}

    return StreamingResponse(events(work, ops), media_type=NDJSON)


def routes() -> list[Route]:
    return [Route("/ask", ask, methods=["POST"]), Route("/sql", run_sql, methods=["POST"])]

