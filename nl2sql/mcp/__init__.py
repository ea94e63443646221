"""The nl2sql MCP server: ``build_server()`` and its tools and resources."""

from __future__ import annotations

from nl2sql.mcp.server import build_server

__all__ = ["build_server"]
