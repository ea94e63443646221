"""The MCP resources: the catalog (``db://catalog``) and each schema (``db://{db_id}/schema``).

Same content as the ``db_list`` and ``db_show_schema`` tools, for clients that attach context
as resources, for the request's caller (``request_ops()``: the server runs every read as its
caller, ``nl2sql.mcp.callers``): the catalog lists their databases, another's schema is refused.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from nl2sql.errors import UnknownDatabaseError, as_one_sentence
from nl2sql._worker import run_in_worker
from nl2sql.mcp.callers import caller_message, request_ops
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.recorded import call_recorded
from nl2sql.operations import db_list_op, db_show_schema_op


def register_resources(server: MCPServer) -> None:
    @server.resource("db://catalog", name="catalog", title="Database catalog",
                     mime_type="text/markdown",
                     description="Every configured database: db_id, type, description, table "
                                 "count and whether its annotated schema is cached.")
    async def catalog() -> str:
        return await _render("db://catalog", db_list_op, request_ops())

    @server.resource("db://{db_id}/schema", name="schema", title="Annotated database schema",
                     mime_type="text/x-sql",
                     description="The annotated schema of one database as commented SQL DDL "
                                 "(tables, keys, enums, descriptions, samples, example queries).")
    async def schema(db_id: str) -> str:
        return await _render("db://{db_id}/schema", db_show_schema_op, request_ops(),
                             db_id=db_id)


async def _render(uri: str, op, ops_context: OpsContext,  # noqa: ANN001
                  **arguments: object) -> str:
    try:
        return await run_in_worker(
            lambda: call_recorded(uri, op, ops_context, **arguments).render())
    except UnknownDatabaseError as error:
        raise ResourceNotFoundError(str(error)) from None
    except Exception as exc:  # noqa: BLE001 - the face's edge: one sentence for everything
        raise ResourceError(caller_message(as_one_sentence(exc, "reading a resource"))) from None
