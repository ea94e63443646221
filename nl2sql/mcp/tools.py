"""The MCP tools: ``nl2sql.operations.registry.OPERATIONS`` adapted, one tool per operation.

Each tool takes its caller's view of the server's ``OpsContext`` (``nl2sql.mcp.callers``), runs
its operation in a worker
thread (database and file work must not block the event loop, so concurrent calls overlap;
``nl2sql._worker``: persistent threads, a cheaper hand-off than ``anyio.to_thread``; a call the
client cancels, or whose session ends, stops its query there), and returns the operation's
``render()`` text. An ``Nl2SqlError`` becomes ``ToolError(message)``: the client gets
``isError=True`` and one sentence saying what to do next (the SDK puts "Error executing tool
<name>: " before it); a file-system failure becomes one sentence too, and anything else
"internal error, see the log" with the details only in the log
(``nl2sql.errors.as_one_sentence``; argument errors and stray stdio lines: ``edge.py``). Names,
titles, descriptions and parameter docs come from the operation list and
``nl2sql.operations.params``; nothing is repeated here.

Annotations: ``readOnlyHint`` describes the tool's effect on its environment. Every tool is
read-only except ``db_execute_sql``, which never changes the database but adds a result CSV and
its metadata to the workspace: ``readOnlyHint=False``. It is not destructive
(``destructiveHint=False``): it only adds files; an earlier result is replaced only when the
call passes ``overwrite=true`` (a derived name that is taken gets a ``_2`` suffix, an explicit
``output_file`` that is taken is refused), checked under the workspace lock, so clients need
not ask for confirmation on every query. It is not idempotent (``idempotentHint=False``): the
same call again adds another file. ``csv_chart`` writes a chart PNG beside the result CSV
(``readOnlyHint=False``); the file's name is derived from the CSV's and only ever replaced by
another chart of that CSV, which the CSV can redraw: not destructive, and idempotent. It answers
the PNG as image content plus one line of text (``Operation.image``). ``saved_queries_list`` refreshes a private search index (a
cache of the metadata files), which changes nothing a user sees: read-only. All tools are
closed-world (``openWorldHint=False``): they touch only the configured databases and the
workspace.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ToolAnnotations

from nl2sql._worker import run_in_worker
from nl2sql.mcp.callers import request_ops
from nl2sql.mcp.confirm import confirming_tool
from nl2sql.mcp.edge import tool_errors
from nl2sql.operations.recorded import call_recorded
from nl2sql.operations.registry import OPERATIONS, Operation, face_function


def mcp_tool(op: Operation) -> Any:
    """The async tool function for ``op``: its parameters plus the MCP ``Context``. A call the
    client cancels, or whose session ends, stops its query (``run_in_worker``)."""

    if op.asks_person:  # a proposal: the person may confirm it at once (elicitation)
        return confirming_tool(op)

    async def call(ctx: Context, arguments: dict[str, Any]) -> str | list[Any]:
        with tool_errors(op.name):
            return await run_in_worker(_run, op, request_ops(), arguments, name=op.name)

    return face_function(op, ("ctx", Context), call)


def _run(op: Operation, ops_context: Any, arguments: dict[str, Any]) -> str | list[Any]:
    # render() in the worker too: a long preview must not be built on the event loop.
    result = call_recorded(op.name, op.function, ops_context, **arguments)
    if op.image:  # the picture first, then the line saying what it shows
        return [Image(data=result.png, format="png"), result.render()]
    return result.render()


def register_tools(server: MCPServer) -> None:
    for op in OPERATIONS:
        server.add_tool(mcp_tool(op), name=op.name, title=op.title, description=op.description,
                        annotations=tool_annotations(op), structured_output=False)
        tool = server._tool_manager.get_tool(op.name)  # the SDK keeps no public handle on it
        tool.parameters = compact_schema(tool.parameters)


def tool_annotations(op: Operation) -> ToolAnnotations:
    """The hints a client needs: destructive and idempotent only mean something for a tool
    that writes (MCP spec), and the tool's title is already on the tool."""
    if op.read_only:
        return ToolAnnotations(readOnlyHint=True, openWorldHint=False)
    return ToolAnnotations(readOnlyHint=False, destructiveHint=op.destructive,
                           idempotentHint=op.idempotent, openWorldHint=False)


def compact_schema(schema: Any) -> Any:
    """An input schema without what every client pays for on every request and no model needs:
    pydantic's generated titles, ``default: null``, and the ``anyOf [X, null]`` of an optional
    parameter (it is optional by not being required; the tool still accepts null)."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    compact = {key: (({name: compact_schema(value) for name, value in item.items()}
                      if key == "properties" else compact_schema(item)))
               for key, item in schema.items() if key != "title"}
    options = compact.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options and len(options) == 2:
        compact.pop("anyOf")
        compact = {**next(o for o in options if o != {"type": "null"}), **compact}
    if "default" in compact and compact["default"] is None:
        compact.pop("default")
    return compact
