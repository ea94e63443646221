"""nl2sql: ask SQL databases questions in plain language.

Importing ``nl2sql`` stays fast: the public functions load their modules on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from nl2sql.errors import Nl2SqlError

if TYPE_CHECKING:
    from nl2sql.agents.answer import Answer
    from nl2sql.agents.ask import ask, ask_async
    from nl2sql.context_engine.api import context
    from nl2sql.agents.metrics_api import metrics, query_metrics
    from nl2sql.context_engine.prompt_context import PromptContext
    from nl2sql.operations.verified_api import (accept, list_proposed, list_verified,
                                                reject, unverify)

# name -> module that defines it, imported on first access
_LAZY = {
    "Answer": "nl2sql.agents.answer",
    "ask": "nl2sql.agents.ask",
    "ask_async": "nl2sql.agents.ask",
    "context": "nl2sql.context_engine.api",
    "PromptContext": "nl2sql.context_engine.prompt_context",
    "accept": "nl2sql.operations.verified_api",
    "list_verified": "nl2sql.operations.verified_api",
    "list_proposed": "nl2sql.operations.verified_api",
    "reject": "nl2sql.operations.verified_api",
    "metrics": "nl2sql.agents.metrics_api",
    "query_metrics": "nl2sql.agents.metrics_api",
    "unverify": "nl2sql.operations.verified_api",
}

__all__ = ["Answer", "Nl2SqlError", "PromptContext", "__version__", "accept", "ask", "ask_async",
           "context", "list_proposed", "list_verified", "metrics", "query_metrics", "reject",
           "unverify"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return [*globals(), *__all__]
