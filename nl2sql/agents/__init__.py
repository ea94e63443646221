"""Standalone pydantic-ai agents over the ``*_op`` functions: no MCP server needed.

``ask`` / ``ask_async`` (also ``nl2sql.ask``), their ``Answer``, the catalog agent
(``choose_database`` -> ``CatalogChoice``), the NL2SQL agent (``build_sql_agent`` ->
``SqlAnswer``), the agent tools (``tools.AGENT_TOOLS``) and ``ConversationStore``. Names load
on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nl2sql.agents.answer import Answer, Attempt
    from nl2sql.agents.ask import ask, ask_async
    from nl2sql.agents.catalog import CatalogChoice, choose_database
    from nl2sql.agents.conversations import ConversationStore
    from nl2sql.agents.sql_agent import SqlAnswer, build_sql_agent

_WHERE = {
    "Answer": "answer", "Attempt": "answer", "ask": "ask", "ask_async": "ask",
    "CatalogChoice": "catalog", "choose_database": "catalog",
    "ConversationStore": "conversations", "SqlAnswer": "sql_agent",
    "build_sql_agent": "sql_agent",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
