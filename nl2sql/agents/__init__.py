"""Standalone pydantic-ai agents over the ``*_op`` functions: no MCP server needed."""
