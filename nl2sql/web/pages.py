"""The pages a person reads (each with its JSON twin): Ask (with the conversation so far and
the caller's history), a conversation, History, Schema (databases; a database's tables,
columns, samples and metrics, and the tables a question needs), Saved (saved results and
verified answers, searched), a saved result, Proposals, and the SQL page.

Each endpoint reads through the operations on the caller's view, in a worker thread, inside
one audit record (``recorded``: face ``web``), and answers ``render.respond``'s way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from nl2sql._worker import run_in_worker
from nl2sql.access.permissions import can
from nl2sql.agents.answer import Answer
from nl2sql.agents.conversations import ConversationNotFoundError, ConversationStore
from nl2sql.operations.databases import db_list_op
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.recorded import recorded
from nl2sql.operations.saved_queries import saved_queries_list_op, saved_query_get_details_op
from nl2sql.operations.search import db_search_schema_op
from nl2sql.operations.verified_answers import list_proposed, list_verified
from nl2sql.web.context import signed_in, web_of
from nl2sql.web.render import respond, twin_routes
from nl2sql.web.views import answer_view, database_view, result_view

#: Conversations listed on the Ask page (History lists them all).
RECENT = 10
#: Turns a conversation's page shows (a link leads to the ones before).
TURNS_SHOWN = 20
SAVED_LIMIT = 100


def _page(template: str, read: Callable[[OpsContext, Request], dict[str, Any]],
          tool: str | None) -> Callable[[Request], Any]:
    """An endpoint showing ``read(ops, request)`` with ``template`` (or as JSON), recorded as
    a call of ``tool`` (None: it reads no data)."""

    @signed_in
    async def endpoint(request: Request, ops: OpsContext) -> Response:
        def run() -> dict[str, Any]:
            if tool is None:
                return read(ops, request)
            with recorded(ops, tool, db_id=request.path_params.get("db_id")):
                return read(ops, request)

        data = await run_in_worker(run, name=f"web {request.url.path}")
        return respond(request, template, data, page=web_of(request).page(ops))

    return endpoint


def _databases(ops: OpsContext) -> list[dict[str, Any]]:
    return [{"db_id": c.db_id, "description": c.description} for c in ops.configs]


def _conversations(ops: OpsContext) -> list[dict[str, Any]]:
    found = ConversationStore(ops.store, ops.caller.name).list()
    found.sort(key=lambda c: c.updated_at, reverse=True)
    return [{"conversation_id": c.conversation_id, "question": c.first_question,
             "turns": c.turns, "db_id": c.db_id, "updated_at": c.updated_at} for c in found]


def ask_page(ops: OpsContext, request: Request) -> dict[str, Any]:
    return {"databases": _databases(ops), "history": _conversations(ops)[:RECENT],
            "conversation_id": None, "turns": [], "earlier": None, "later": False}


def conversation_page(ops: OpsContext, request: Request) -> dict[str, Any]:
    conversation_id = request.path_params["conversation_id"]
    before = request.query_params.get("before", "")
    store = ConversationStore(ops.store, ops.caller.name)
    turns, earlier = store.page(conversation_id, TURNS_SHOWN,
                                int(before) if before.isdigit() else None)
    if not turns:
        raise ConversationNotFoundError(f"You have no conversation '{conversation_id}'; start "
                                        f"one on the Ask page, or open one from your History.")
    # an earlier page asks no follow-up (its answer would land under old questions): it
    # links to the newest instead
    later = before.isdigit() and store.page(conversation_id, 1)[0][-1].seq > turns[-1].seq
    shown = [{"question": turn.question, "db_id": turn.db_id,
              "answer": answer_view(ops, Answer.model_validate(turn.answer))
              if turn.answer else None} for turn in turns]
    return {"databases": _databases(ops), "history": _conversations(ops)[:RECENT],
            "conversation_id": conversation_id, "turns": shown, "earlier": earlier,
            "later": later}


def history_page(ops: OpsContext, request: Request) -> dict[str, Any]:
    return {"conversations": _conversations(ops)}


def schema_page(ops: OpsContext, request: Request) -> dict[str, Any]:
    return {"databases": [db.model_dump() for db in db_list_op(ops).databases]}


def database_page(ops: OpsContext, request: Request) -> dict[str, Any]:
    db_id = request.path_params["db_id"]
    data = database_view(ops, db_id)
    question = request.query_params.get("q", "").strip()
    data["question"] = question or None
    data["search"] = None
    if question:
        found = db_search_schema_op(ops, question, db_id).context
        data["search"] = {"tables": [t.model_dump() for t in found.tables],
                          "value_hints": [h.render() for h in found.value_hints]}
    return data


def saved_page(ops: OpsContext, request: Request) -> dict[str, Any]:
    search = request.query_params.get("q", "").strip() or None
    saved = saved_queries_list_op(ops, search, limit=SAVED_LIMIT)
    words = (search or "").lower().split()
    verified = [answer.model_dump(mode="json") for answer in list_verified(ops)
                if all(word in f"{answer.question} {answer.sql}".lower() for word in words)]
    return {"search": search, "total": saved.total,
            "saved": [query.model_dump() for query in saved.queries], "verified": verified}


def result_page(ops: OpsContext, request: Request) -> dict[str, Any]:
    csv_file = request.path_params["csv_file"]
    details = saved_query_get_details_op(ops, csv_file)
    meta = details.metadata
    return {"csv_file": details.csv_file,
            "metadata": meta.model_dump(mode="json") if meta else None,
            "result": result_view(ops, details.csv_file, None)}


def proposals_page(ops: OpsContext, request: Request) -> dict[str, Any]:
    return {"proposals": [{**p.model_dump(mode="json"), "can_curate": can(ops.caller, "curate",
                                                                           p.db_id)}
                          for p in list_proposed(ops)]}


def sql_page(ops: OpsContext, request: Request) -> dict[str, Any]:
    return {"databases": _databases(ops), "db_id": request.query_params.get("db_id"),
            "sql": request.query_params.get("sql", "")}


def routes() -> list[Route]:
    pages = [("/", "ask.html", ask_page, None),
             ("/c/{conversation_id}", "ask.html", conversation_page, "conversation"),
             ("/history", "history.html", history_page, "history"),
             ("/schema", "schema.html", schema_page, "db_list"),
             ("/schema/{db_id}", "database.html", database_page, "db_show_schema"),
             ("/saved", "saved.html", saved_page, "saved_queries_list"),
             ("/results/{csv_file:path}", "result.html", result_page,
              "saved_query_get_details"),
             ("/proposals", "proposals.html", proposals_page, "proposals"),
             ("/sql", "sql.html", sql_page, None)]
    return [route for path, template, read, tool in pages
            for route in twin_routes(path, _page(template, read, tool))]
