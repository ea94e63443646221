"""The page for people who do not write code (``nl2sql-web``): a face beside ``mcp/`` and
``cli/`` that adapts the same operations, with the MCP endpoint at ``/mcp`` in the same
process. ``build_app`` makes the ASGI app; ``docs/web.md`` describes what a person sees."""

from nl2sql.web.app import build_app

__all__ = ["build_app"]
