"""The MCP tools: one thin adapter per ``*_op`` (names as in ARCHITECTURE.md), no logic.

Each tool takes the ``OpsContext`` the server's lifespan yields, runs its operation in a worker
thread (database and file work must not block the event loop, so concurrent calls overlap), and
returns the operation's ``render()`` text. An ``Nl2SqlError`` becomes ``ToolError(message)``:
the client gets ``isError=True`` and one sentence saying what to do next (the SDK puts
"Error executing tool <name>: " before it).

Annotations: ``readOnlyHint`` describes the tool's effect on its environment. Every tool is
read-only except ``db_execute_sql``, which never changes the database but writes a result CSV and
its metadata into the workspace, replacing an earlier result of the same name (the file name is
``output_file`` or derived from the query text): so ``readOnlyHint=False``,
``destructiveHint=True`` (a same-named result is overwritten, which is not purely additive) and
``idempotentHint=True`` (the same call again rewrites the same file). ``saved_queries_list``
refreshes a private search index (a cache of the metadata files), which changes nothing a user
sees: read-only. All tools are closed-world (``openWorldHint=False``): they touch only the configured databases and
the workspace.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from nl2sql.errors import Nl2SqlError

DbId = Annotated[str, Field(description="A database id from db_list, e.g. 'bookstore'.")]
CsvFile = Annotated[str, Field(
    description="A result file in the workspace, as listed by saved_queries_list or returned "
                "by db_execute_sql, e.g. 'top_customers.csv'. Paths outside the workspace are "
                "refused.")]
RowCount = Annotated[int, Field(ge=1, le=1000, description="How many rows to show (1-1000).")]


async def _run(ctx: Context, op_name: str, *args: Any, **kwargs: Any) -> str:
    """Run ``nl2sql.operations.<op_name>`` in a worker thread; translate expected errors."""
    from nl2sql import operations  # lazy: the server answers tools/list before this is loaded

    ops_context = ctx.request_context.lifespan_context
    op = getattr(operations, op_name)
    try:
        result = await anyio.to_thread.run_sync(functools.partial(op, ops_context, *args, **kwargs))
    except Nl2SqlError as error:
        raise ToolError(str(error)) from None
    return result.render()


async def db_list(ctx: Context) -> str:
    """List the databases you can query: db_id, type (sqlite or postgres), description, number of
    tables and whether an annotated schema is cached. Call this first when you do not know which
    db_id to use."""
    return await _run(ctx, "db_list_op")


async def db_show_schema(db_id: DbId, ctx: Context) -> str:
    """Show the annotated schema of one database as SQL DDL with comments: tables, columns and
    types, primary and foreign keys, enum values, descriptions, sample rows and example queries.
    Read it before writing SQL for that database; write SQL in the dialect it names."""
    return await _run(ctx, "db_show_schema_op", db_id)


async def db_execute_sql(
    db_id: DbId,
    query: Annotated[str, Field(description=(
        "One read-only SQL query (SELECT, WITH ... SELECT, VALUES) in the database's dialect. "
        "Quote identifiers exactly as db_show_schema shows them."))],
    ctx: Context,
    output_file: Annotated[str | None, Field(description=(
        "Optional file name for the result in the workspace, e.g. 'top_customers.csv' (an "
        "existing result of that name is replaced); derived from the query when omitted."))] = None,
    nl_query: Annotated[str | None, Field(description=(
        "The question in plain language this query answers; saved with the result so "
        "saved_queries_list can find it later."))] = None,
) -> str:
    """Run one read-only SQL query. The full result is saved in the workspace as a CSV file plus
    a metadata JSON; you get the file name, the row and column counts and the first rows. Use
    csv_head / csv_tail to read more of it. Statements that write (INSERT, UPDATE, DDL...) are
    refused; on an SQL error you get the database's message: fix the query and call again."""
    return await _run(ctx, "db_execute_sql_op", db_id, query, output_file=output_file,
                      nl_query=nl_query)


async def db_get_row_by_id(
    db_id: DbId,
    table: Annotated[str, Field(description="Table name as db_show_schema shows it.")],
    row_id: Annotated[int | str | list[int | str] | dict[str, int | str], Field(description=(
        "The primary key value, e.g. 42 or 'ALFKI'. For a composite key: a list of values in "
        "key order, or an object {column: value}."))],
    ctx: Context,
    follow_foreign_keys: Annotated[bool, Field(description=(
        "Also fetch the rows this row's foreign keys point to."))] = True,
) -> str:
    """Fetch one row of a table by its primary key and, by default, the rows its foreign keys
    point to: look up a record and its related records without writing joins."""
    return await _run(ctx, "db_get_row_by_id_op", db_id, table, row_id,
                      follow_foreign_keys=follow_foreign_keys)


async def saved_queries_list(
    ctx: Context,
    search: Annotated[str | None, Field(description=(
        "Words to look for in the saved questions and SQL (all must match, prefixes count: "
        "'cust' finds 'customers'). Omit to list the newest."))] = None,
) -> str:
    """List the query results saved in the workspace, newest first: file name, database, row
    count, time, the question and the SQL. Reuse a saved result instead of running the same
    query again."""
    return await _run(ctx, "saved_queries_list_op", search)


async def saved_query_get_details(csv_file: CsvFile, ctx: Context) -> str:
    """Show one saved result: its SQL, question, database, time, row and column counts, and its
    first rows."""
    return await _run(ctx, "saved_query_get_details_op", csv_file)


async def csv_head(csv_file: CsvFile, ctx: Context, n: RowCount = 10) -> str:
    """Show the header and the first n rows of a result CSV in the workspace."""
    return await _run(ctx, "csv_head_op", csv_file, n)


async def csv_tail(csv_file: CsvFile, ctx: Context, n: RowCount = 10) -> str:
    """Show the header and the last n rows of a result CSV in the workspace (read from the end
    of the file, so it is fast on large results)."""
    return await _run(ctx, "csv_tail_op", csv_file, n)


_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
              "openWorldHint": False}
TOOLS: list[tuple[Any, str, dict[str, bool]]] = [
    (db_list, "List databases", _READ_ONLY),
    (db_show_schema, "Show a database's annotated schema", _READ_ONLY),
    (db_execute_sql, "Run a read-only SQL query and save the result",
     {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
      "openWorldHint": False}),
    (db_get_row_by_id, "Fetch a row by primary key", _READ_ONLY),
    (saved_queries_list, "List or search saved query results", _READ_ONLY),
    (saved_query_get_details, "Show a saved query result", _READ_ONLY),
    (csv_head, "First rows of a result file", _READ_ONLY),
    (csv_tail, "Last rows of a result file", _READ_ONLY),
]


def register_tools(server: MCPServer) -> None:
    for fn, title, hints in TOOLS:
        description = " ".join((fn.__doc__ or "").split())  # one paragraph, no indentation
        server.add_tool(fn, title=title, description=description,
                        annotations=ToolAnnotations(title=title, **hints), structured_output=False)
