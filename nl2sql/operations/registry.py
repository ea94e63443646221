"""The one list of operations: every face (MCP tools, agent tools) adapts this list.

An ``Operation`` names a ``*_op`` function by reference, its public name (MCP tool ``name``,
agent tool ``{name}_tool``), a title, a description for models and people, and hints about its
effect. Its public parameters are the ``*_op``'s own parameters after ``ctx`` (keyword-only ones
are for Python callers only), with the described types of ``nl2sql.operations.params``; so a new
operation is one function plus one entry in ``OPERATIONS``, and every face offers it.

``face_function`` is the adapter both faces use: an async function with the operation's public
parameters after a face-specific context parameter (MCP ``Context``, pydantic-ai
``RunContext``), which is what the MCP SDK and pydantic-ai read to build a tool's schema.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from nl2sql.operations.charts import csv_chart_op
from nl2sql.operations.csv_files import csv_head_op, csv_tail_op
from nl2sql.operations.databases import db_list_op, db_show_schema_op
from nl2sql.operations.metrics import metrics_list_op, metrics_query_op
from nl2sql.operations.queries import db_execute_sql_op, db_get_row_by_id_op
from nl2sql.operations.saved_queries import (saved_queries_list_op, saved_query_accept_op,
                                             saved_query_get_details_op)
from nl2sql.operations.search import db_search_schema_op

#: Which agent offers an operation as a tool: the catalog agent picks a database, the NL2SQL
#: agent writes and runs SQL for one.
AgentName = Literal["catalog", "nl2sql"]


@dataclass(frozen=True)
class Operation:
    function: Callable[..., Any]  # (OpsContext, *public parameters) -> model with render()
    name: str  # MCP tool name; the function is ``{name}_op``, the agent tool ``{name}_tool``
    title: str
    description: str  # one paragraph for a model choosing a tool
    read_only: bool = True  # changes nothing outside nl2sql's private caches
    destructive: bool = False  # may replace something a user sees without being asked to
    idempotent: bool = True  # the same call again has no further effect
    #: () for what only a person asks for through an MCP client (accepting an answer as
    #: right): never offered to nl2sql's own agents.
    agents: tuple[AgentName, ...] = ("nl2sql",)
    #: The result also has ``png`` (bytes): the MCP face answers it as image content.
    image: bool = False
    #: The result is schema text, context rebuilt for every question: a conversation keeps
    #: the call, not the text (``agents/history.py``).
    context: bool = False
    #: The result may be a proposal only a person can confirm (``AcceptResult``): the MCP face
    #: asks the person (elicitation) when the client can.
    asks_person: bool = False
    #: The NL2SQL agent answers with this operation rather than calling it as a tool: an
    #: output tool of this name, whose result is the answer (``metrics_query`` is
    #: ``query_metrics``: a metric answers the question).
    agent_answer: str | None = None
    #: Offered to the NL2SQL agent only for a database with governed metrics.
    needs_metrics: bool = False

    def parameters(self, hidden: frozenset[str] = frozenset()) -> list[inspect.Parameter]:
        """The public parameters (after ``ctx``) but ``hidden``, annotations resolved, as
        keyword-only."""
        hints = typing.get_type_hints(self.function, include_extras=True)
        params = list(inspect.signature(self.function).parameters.values())[1:]
        return [p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints[p.name])
                for p in params
                if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.name not in hidden]


# Adds a result file pair and replaces one only when the call says overwrite=true: additive
# (not destructive); a second identical call adds another file (not idempotent).
_WRITES_RESULT = {"read_only": False, "destructive": False, "idempotent": False}

OPERATIONS: list[Operation] = [
    Operation(
        db_list_op, "db_list", "List databases",
        "List the databases you can query: id, type, description, table count and whether "
        "its schema is cached. Call it first when you do not know the db_id.", agents=("catalog",)),
    Operation(
        db_show_schema_op, "db_show_schema", "Show a database's annotated schema",
        "The annotated schema of one database as SQL DDL with comments: keys, enum values, "
        "descriptions, sample rows, example queries. Read it before writing SQL, in the dialect "
        "it names. tables=[...] for some tables; too big for one answer: db_search_schema.",
        agents=("catalog",), context=True),
    Operation(
        db_search_schema_op, "db_search_schema", "Find the tables and values a question needs",
        "For a question: the tables it needs (each with its reason, plus join paths), the "
        "stored values it names (Artist.Name = 'AC/DC'), similar example queries, as SQL DDL "
        "within a token budget. Prefer it to db_show_schema for large databases. Without db_id: "
        "the databases ranked for the question.", agents=("catalog", "nl2sql"), context=True),
    Operation(
        db_execute_sql_op, "db_execute_sql", "Run a read-only SQL query and save the result",
        "Run one read-only SQL query. The full result is saved as a CSV in the workspace; you "
        "get its file name, counts and first rows (csv_head / csv_tail read more). Writes are "
        "refused; on an SQL error, fix the query from the database's message and call again.", **_WRITES_RESULT),
    Operation(
        metrics_list_op, "metrics_list", "List governed metrics",
        "The metrics of a database's semantic model (dbt, Cube) and their group-bys. Prefer "
        "one to writing SQL when it answers.", needs_metrics=True),
    Operation(
        metrics_query_op, "metrics_query", "Query governed metrics",
        "Compute metrics by group-bys (time ones at a grain): SQL compiled from the semantic "
        "model, run read-only and saved like db_execute_sql.",
        agent_answer="query_metrics", needs_metrics=True, **_WRITES_RESULT),
    Operation(
        db_get_row_by_id_op, "db_get_row_by_id", "Fetch a row by primary key",
        "One row by primary key and, by default, the rows its foreign keys point to: a record "
        "and its related records without writing joins."),
    Operation(
        saved_queries_list_op, "saved_queries_list", "List or search saved query results",
        "The results saved in the workspace, newest first: file, database, rows, time, "
        "question and SQL. Reuse one instead of running the same query again."),
    Operation(
        saved_query_get_details_op, "saved_query_get_details", "Show a saved query result",
        "One saved result: its SQL, question, database, time, row and column counts, and "
        "its first rows."),
    Operation(
        saved_query_accept_op, "saved_query_accept", "Propose a saved result as right",
        "Only when the user says a saved result is right: its SQL is re-run and proposed as "
        "the answer to its question. A person confirms it (then it is reused and shown as an "
        "example) or rejects it.", read_only=False, agents=(), asks_person=True),
    Operation(
        csv_head_op, "csv_head", "First rows of a result file",
        "Show the header and the first n rows of a result CSV in the workspace."),
    Operation(
        csv_tail_op, "csv_tail", "Last rows of a result file",
        "Show the header and the last n rows of a result CSV in the workspace (fast on large "
        "results)."),
    Operation(
        csv_chart_op, "csv_chart", "Chart a result file",
        "Draw a result CSV in the workspace as a chart (PNG image), chosen from its columns "
        "unless kind, x or y say otherwise; saved beside the CSV.",
        read_only=False, image=True),
]


def operation(name: str) -> Operation:
    """The operation with public name ``name``."""
    for op in OPERATIONS:
        if op.name == name:
            return op
    raise KeyError(name)


def face_function(op: Operation, context: tuple[str, Any],
                  call: Callable[[Any, dict[str, Any]], Awaitable[Any]],
                  *, name: str | None = None,
                  hidden: frozenset[str] = frozenset()) -> Callable[..., Awaitable[Any]]:
    """An async function ``name(<context>, **public parameters)`` that awaits
    ``call(context_value, arguments)``; its signature and annotations are the operation's
    (without the ``hidden`` parameters, which the face sets itself), so a tool framework reads
    the right schema from it."""
    context_name, context_type = context

    async def adapted(*args: Any, **arguments: Any) -> Any:
        ctx = args[0] if args else arguments.pop(context_name)
        return await call(ctx, arguments)

    params = [inspect.Parameter(context_name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=context_type), *op.parameters(hidden)]
    adapted.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        params, return_annotation=str)
    adapted.__annotations__ = {p.name: p.annotation for p in params} | {"return": str}
    adapted.__name__ = adapted.__qualname__ = name or op.name
    adapted.__doc__ = op.description
    return adapted
