"""Layer 1: build the MCP server, register its tools and resources. Nothing else lives here."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

from mcp.server.mcpserver import MCPServer

from nl2sql import __version__
from nl2sql.mcp.edge import Nl2SqlServer
from nl2sql.mcp.prompts import register_prompts
from nl2sql.mcp.resources import register_resources
from nl2sql.mcp.tools import register_tools
from nl2sql.mcp.warmup import start_warm_up
from nl2sql.operations.context import OpsContext

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
INSTRUCTIONS = (
    "Answer questions from SQL databases. Start with db_list, read db_show_schema for the "
    "database (for a large one, db_search_schema with the question gives the tables and values "
    "it needs), then run read-only SQL with db_execute_sql (results are saved as CSV files in "
    "the workspace; browse them with csv_head / csv_tail; find earlier results with "
    "saved_queries_list).")
logger = logging.getLogger(__name__)


def build_server(config_path: str | Path | None = None, *, data_dir: str | Path | None = None,
                 workspace: str | Path | None = None,
                 log_level: LogLevel = "WARNING") -> MCPServer[OpsContext]:
    """The server for the registry at ``config_path`` (flags win over NL2SQL_* variables).

    The registry is loaded now, so a broken dbs.yaml fails at start with its message.
    ``log_level`` is the HTTP server's (uvicorn's); WARNING keeps per-request lines out."""
    ops_context = OpsContext.load(config_path, data_dir=data_dir, workspace=workspace)
    if ops_context.configs.config_path is None:  # stderr: stdout belongs to MCP over stdio
        logger.info("No dbs.yaml in %s: serving the bundled bookstore; schema caches in %s, "
                    "result files in %s (set NL2SQL_CONFIG to serve your own databases).",
                    Path.cwd(), ops_context.data_dir, ops_context.workspace)

    @asynccontextmanager
    async def lifespan(_server: MCPServer[OpsContext]) -> AsyncIterator[OpsContext]:
        try:
            yield ops_context
        finally:
            ops_context.close()  # dispose pooled connections; reopened if the server runs again

    server = Nl2SqlServer("nl2sql", version=__version__, instructions=INSTRUCTIONS,
                       lifespan=lifespan, log_level=log_level)
    server.on_initialized = lambda: start_warm_up(ops_context)
    register_tools(server)
    register_resources(server, ops_context)
    register_prompts(server, ops_context)
    return server
