"""Asking the person behind an MCP client to confirm what a model proposed.

A tool whose operation ``asks_person`` (``saved_query_accept``) only makes a proposal. When the
client declares the elicitation capability (form mode) and its user may curate the database,
the tool then asks the person through the client: accept makes it the verified answer (``accepted_by`` = the person), decline rejects
it, cancel leaves it waiting for ``nl2sql-ask --accept ID``. The answer decides the proposal the
person was shown (its question and SQL), never the result file read again: a model running a
second call at once could replace that file while the person reads. The question is the SDK's
``Resolve``/``Elicit`` resolver, so it works on every protocol version: a request to the client
in the middle of the call (2025-11-25 and before), or an ``InputRequiredResult`` the client
answers and retries with (2026-07-28); the proposal is made again on each round (the same
result is the same proposal). The client is trusted to show the question to a person, as the
MCP specification asks; a client without the capability is never asked.
"""

from __future__ import annotations

import functools
import inspect
from contextvars import ContextVar
from typing import Annotated, Any

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel

from nl2sql._helpers import one_line
from nl2sql._worker import run_in_worker
from nl2sql.access.permissions import can
from nl2sql.mcp.callers import request_ops
from nl2sql.mcp.edge import tool_errors
from nl2sql.operations.recorded import call_recorded
from nl2sql.operations.registry import Operation, face_function
from nl2sql.operations.saved_queries import AcceptResult
from nl2sql.operations.verified_answers import decide_proposal


#: The proposal the person was asked about in this round of the call: the resolver sets it as
#: it asks (it runs in the call's own task before the tool body, in every protocol version).
_shown: ContextVar[Any] = ContextVar("nl2sql_confirm_shown", default=None)


class Confirmation(BaseModel):
    """Nothing to fill in: the person's answer is the action (accept, decline or cancel)."""


def can_elicit(ctx: Context) -> bool:
    """The client declared form-mode elicitation (an empty ``elicitation: {}`` means form)."""
    declared = ctx.client_capabilities
    elicitation = declared.elicitation if declared is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def person() -> str:
    """Who answers an elicitation on this connection: the request's caller (the OS account
    over stdio, the token's user over HTTP); whether they may curate the database the accept
    path asks (``nl2sql.access.can``)."""
    return request_ops().caller.name


def confirming_tool(op: Operation) -> Any:
    """The MCP tool of ``op``: its proposal, confirmed by the person when the client can ask."""

    async def propose(ctx: Context, arguments: dict[str, Any]) -> AcceptResult | Elicit[Any]:
        result: AcceptResult = await _run(op, ctx, _ops_call(op, arguments))
        proposal = result.answer
        if proposal.state != "proposed" or not can_elicit(ctx) \
                or not can(request_ops().caller, "curate", proposal.db_id):
            return result  # nobody to ask: only a person who may curate it confirms it
        _shown.set(proposal)
        return Elicit(_message(proposal), Confirmation)

    proposal = face_function(op, ("ctx", Context), propose, name=f"{op.name}_proposal")
    proposal.__annotations__["return"] = AcceptResult | Elicit[Confirmation]

    async def call(ctx: Context, arguments: dict[str, Any]) -> str:
        outcome = arguments.pop("confirmation")
        if isinstance(outcome, AcceptedElicitation) and isinstance(outcome.data, AcceptResult):
            return outcome.data.render()  # not asked: the proposal (or what it already was)
        shown = _shown.get()
        if shown is None:  # not asked in this call's task: nothing a person saw to decide
            result: AcceptResult = await _run(op, ctx, _ops_call(op, arguments))
            return result.render()
        decided = await _run(op, ctx, functools.partial(
            decide_proposal, shown=shown, decision=outcome.action, user=person()))
        return AcceptResult(answer=decided).render()

    tool = face_function(op, ("ctx", Context), call)
    resolved = inspect.Parameter("confirmation", inspect.Parameter.KEYWORD_ONLY,
                                 annotation=Annotated[ElicitationResult[Confirmation],
                                                      Resolve(proposal)])
    signature = inspect.signature(tool)
    tool.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), resolved])
    tool.__annotations__["confirmation"] = resolved.annotation
    return tool


def _ops_call(op: Operation, arguments: dict[str, Any]) -> Any:
    """The accept itself: always a proposal, whatever the face and whoever's token the client
    holds. A tool call is the model's act, not the person's: a model driving a curator's
    client must not replace a verified answer by calling the tool (issue 28); the curator
    confirms it when asked (elicitation), on the web page or with ``nl2sql-ask --accept``."""
    return lambda ops: call_recorded(op.name, op.function, ops, curator=False, **arguments)


async def _run(op: Operation, ctx: Context, function: Any) -> Any:
    """``function(the request's OpsContext view)`` in a worker; a failure as one sentence."""
    with tool_errors(op.name):
        return await run_in_worker(function, request_ops(), name=op.name)


def _message(proposal: Any) -> str:
    sql = one_line(proposal.sql)
    return (f"The assistant proposes this as the right answer on database '{proposal.db_id}'. "
            f"Accept to make it a verified answer (reused for the same question with no model "
            f"request and shown as an example); decline to reject it.\n\n"
            f"Question: {one_line(proposal.question)}\nSQL: {sql}")
