"""The agent tools: ``nl2sql.operations.registry.OPERATIONS`` adapted for pydantic-ai.

Each tool is a thin wrapper over its ``*_op`` with the shared ``OpsContext`` as deps (or deps
with an ``ops`` attribute holding it); the operation runs in a worker thread. The agent error
edge, next to the CLI's (``error: <message>``) and MCP's (``ToolError``): an ``Nl2SqlError``
the model can fix (bad SQL, unknown table or column, a guard refusal with its reason, a file
outside the workspace) becomes ``ModelRetry`` with the message, so the model tries again; any
other (unknown setup, missing cache, unreachable server) stops the run with its one-line message.

The NL2SQL agent's tools are pinned (``tools_for("nl2sql")``): they work on the database its deps
name, chosen by the caller or the catalog agent, never by the model. Their schemas have no
``db_id``, ``output_file`` or ``overwrite`` (a model that sends them is told so and retried), a
query's result gets a new file of its own, and the saved-result tools read only results of that
database. Text stored in a row can steer a model; it cannot steer these parameters.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any

from pydantic_ai import ModelRetry, RunContext, Tool, UserError

from nl2sql.access.disclosure import shown_to
from nl2sql.errors import Nl2SqlError, as_one_sentence
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.recorded import call_recorded
from nl2sql.operations.registry import OPERATIONS, AgentName, Operation, face_function
from nl2sql._worker import run_in_worker


def agent_error(error: Nl2SqlError, ops: OpsContext | None = None) -> Exception:
    """What an agent raises for ``error``: ``ModelRetry`` when the model can fix it (worded for
    ``ops``' caller: no server path for a configured user), otherwise the error itself, which
    ends the run with its message."""
    if error.model_fixable:
        return ModelRetry(shown_to(ops, str(error)))
    return error


@dataclass
class AgentDeps:
    """Deps of an agent that needs more than the ``OpsContext``; ``observe`` sees every
    operation a tool ran (with its error, or None)."""

    ops: OpsContext

    def observe(self, op_name: str, arguments: dict[str, Any], error: Exception | None) -> None:
        return None


@dataclass
class PinnedDeps(AgentDeps):
    """Deps of an agent that works on one database: ``db_id`` is given to every tool."""

    db_id: str = ""


#: Parameters the NL2SQL agent's model never sets: the database is its deps', a result is
#: always a new file (a derived name, numbered when taken), nothing is replaced.
PINNED_PARAMETERS = frozenset({"db_id", "output_file", "overwrite"})


def ops_context_of(deps: OpsContext | AgentDeps) -> OpsContext:
    """The ``OpsContext`` of an agent's deps: the deps themselves or their ``ops``."""
    return deps if isinstance(deps, OpsContext) else deps.ops


async def run_operation(op: Operation, deps: OpsContext | AgentDeps,
                        arguments: dict[str, Any]) -> Any:
    """Run ``op`` in a worker thread; expected errors cross the agent edge."""
    observe = deps.observe if isinstance(deps, AgentDeps) else None
    call = functools.partial(call_recorded, op.name, op.function, ops_context_of(deps),
                             **arguments)
    try:
        result = await run_in_worker(call, name=op.name)
    except Exception as exc:  # noqa: BLE001 - the face's edge: one sentence for everything
        error = as_one_sentence(exc, op.name)  # unexpected: "internal error, see the log"
        if observe:
            observe(op.name, arguments, error)
        raise agent_error(error, ops_context_of(deps)) from None
    if observe:
        observe(op.name, arguments, None)
    return result


def agent_tool(op: Operation) -> Tool[Any]:
    """The pydantic-ai tool for ``op``: named as the MCP tool, returning the rendered text."""

    async def call(ctx: RunContext[Any], arguments: dict[str, Any]) -> str:
        return (await run_operation(op, ctx.deps, arguments)).render()

    function = face_function(op, ("ctx", RunContext), call, name=f"{op.name}_tool")
    return Tool(function, takes_ctx=True, name=op.name, description=op.description)


def pinned_tool(op: Operation) -> Tool[Any]:
    """``op`` for an agent with ``PinnedDeps``: ``db_id`` (a public or keyword-only parameter)
    comes from the deps; ``output_file`` and ``overwrite`` keep their defaults."""
    takes_db_id = "db_id" in inspect.signature(op.function).parameters

    async def call(ctx: RunContext[PinnedDeps], arguments: dict[str, Any]) -> str:
        if not ctx.deps.db_id:
            raise UserError("The NL2SQL agent's tools need the database: set its deps' db_id.")
        pinned = {"db_id": ctx.deps.db_id} if takes_db_id else {}
        return (await run_operation(op, ctx.deps, arguments | pinned)).render()

    function = face_function(op, ("ctx", RunContext), call, name=f"{op.name}_tool",
                             hidden=PINNED_PARAMETERS)
    return Tool(function, takes_ctx=True, name=op.name, description=op.description)


AGENT_TOOLS: dict[str, Tool[Any]] = {op.name: agent_tool(op) for op in OPERATIONS}
PINNED_TOOLS: dict[str, Tool[Any]] = {op.name: pinned_tool(op) for op in OPERATIONS}

db_list_tool = AGENT_TOOLS["db_list"]
db_show_schema_tool = AGENT_TOOLS["db_show_schema"]
db_search_schema_tool = AGENT_TOOLS["db_search_schema"]
db_execute_sql_tool = AGENT_TOOLS["db_execute_sql"]
db_get_row_by_id_tool = AGENT_TOOLS["db_get_row_by_id"]
metrics_list_tool = AGENT_TOOLS["metrics_list"]
metrics_query_tool = AGENT_TOOLS["metrics_query"]  # the NL2SQL agent answers with it instead
saved_queries_list_tool = AGENT_TOOLS["saved_queries_list"]
saved_query_get_details_tool = AGENT_TOOLS["saved_query_get_details"]
saved_query_accept_tool = AGENT_TOOLS["saved_query_accept"]  # offered to no agent (a person's)
csv_head_tool = AGENT_TOOLS["csv_head"]
csv_tail_tool = AGENT_TOOLS["csv_tail"]
csv_chart_tool = AGENT_TOOLS["csv_chart"]


def tools_for(agent: AgentName) -> list[Tool[Any]]:
    """The tools one agent offers its model, in the order of the operation list: the catalog
    agent's choose among databases, the NL2SQL agent's are pinned to one. An operation the
    agent answers with (``Operation.agent_answer``) is an output tool instead
    (``answer_operations``)."""
    tools = PINNED_TOOLS if agent == "nl2sql" else AGENT_TOOLS
    return [tools[op.name] for op in OPERATIONS if agent in op.agents and not op.agent_answer]


def answer_operations(agent: AgentName) -> list[Operation]:
    """The operations ``agent`` answers with: each becomes an output tool named
    ``op.agent_answer``, its result the answer."""
    return [op for op in OPERATIONS if agent in op.agents and op.agent_answer]


def pinned_answer_function(op: Operation, call: Any) -> Any:
    """``op`` as an output function of an agent with ``PinnedDeps``: named ``op.agent_answer``,
    the pinned parameters and the question (``nl_query``, which the deps hold) hidden."""
    assert op.agent_answer is not None
    return face_function(op, ("ctx", RunContext), call, name=op.agent_answer,
                         hidden=PINNED_PARAMETERS | {"nl_query"})
