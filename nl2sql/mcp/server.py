"""Layer 1: build the MCP server, register its tools and resources. Nothing else lives here."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver import MCPServer

from nl2sql import __version__
from nl2sql.access.caller import Caller, os_caller
from nl2sql.access.users import local_caller
from nl2sql.mcp.auth import http_auth
from nl2sql.mcp.edge import Nl2SqlServer
from nl2sql.mcp.prompts import register_prompts
from nl2sql.mcp.resources import register_resources
from nl2sql.mcp.tools import register_tools
from nl2sql.mcp.warmup import start_warm_up
from nl2sql.operations.first_use import prepare
from nl2sql.operations.ops_context import OpsContext

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
INSTRUCTIONS = (
    "Answer questions from SQL databases. Start with db_list, read db_show_schema for the "
    "database (for a large one, db_search_schema with the question gives the tables and values "
    "it needs), then run read-only SQL with db_execute_sql (results are saved as CSV files in "
    "the workspace; browse them with csv_head / csv_tail; find earlier results with "
    "saved_queries_list).")


def build_server(config_path: str | Path | None = None, *, data_dir: str | Path | None = None,
                 workspace: str | Path | None = None, log_level: LogLevel = "WARNING",
                 transport: Literal["stdio", "http"] = "stdio") -> Nl2SqlServer:
    """The server for the registry at ``config_path`` (flags win over NL2SQL_* variables).

    The registry is loaded now, so a broken dbs.yaml fails at start with its message.
    ``log_level`` is the HTTP server's (uvicorn's); WARNING keeps per-request lines out.
    Over stdio every request acts as the OS account (``local_caller``); over HTTP as the user
    its bearer token names when users are configured (``http_auth``), else as the account
    running the server (a one-user server)."""
    ops_context = OpsContext.load(config_path, data_dir=data_dir, workspace=workspace)
    auth = http_auth(ops_context) if transport == "http" else None

    @asynccontextmanager
    async def lifespan(_server: MCPServer[OpsContext]) -> AsyncIterator[OpsContext]:
        try:
            yield ops_context
        finally:
            ops_context.close()  # dispose pooled connections; reopened if the server runs again

    verifier, settings = auth or (None, None)
    server = Nl2SqlServer("nl2sql", version=__version__, instructions=INSTRUCTIONS,
                          lifespan=lifespan, log_level=log_level, token_verifier=verifier,
                          auth=settings)
    server.ops_context = ops_context
    server.face = f"mcp-{transport}"
    if transport == "stdio":  # looked up once, by the warm-up or the first request
        server.default_caller = functools.cache(lambda: stdio_caller(ops_context))
    elif auth is None:
        server.default_caller = os_caller
    server.on_initialized = lambda: start_warm_up(ops_context, server.default_caller)
    server.startup_note = startup_note(ops_context)
    register_tools(server)
    register_resources(server)
    register_prompts(server)
    return server


def stdio_caller(ops_context: OpsContext) -> Caller:
    """The OS account a stdio server acts for (``local_caller``). The users store loads
    SQLAlchemy: under ``prepare``'s lock, so a first call never imports it beside the warm-up."""
    prepare(ops_context)
    return local_caller(ops_context.configs, ops_context.store)


def startup_note(ops_context: OpsContext) -> str | None:
    """Where the caches and results are when no dbs.yaml was found (said once the server is
    up, on stderr: stdout belongs to MCP over stdio), else None."""
    if ops_context.configs.config_path is not None:
        return None
    return (f"nl2sql-mcp: no dbs.yaml in {Path.cwd()}: serving the bundled bookstore; schema "
            f"caches in {ops_context.data_dir}, result files in {ops_context.workspace} (set "
            f"NL2SQL_CONFIG to serve your own databases).")
