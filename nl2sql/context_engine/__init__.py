"""The context engine: which database, which tables and columns, which stored values and which
examples a model is shown for a question, with reasons; offline indexes, fast at run time.

Governed metrics (``nl2sql.semantic``) the question asks for are listed first
(``metric_retrieval.py``). The entry point is ``nl2sql.context(question, *, db_id=None, budget_tokens=None, config=None)
-> PromptContext`` (defined in ``nl2sql.context_engine.api``); names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nl2sql._helpers import lazy_exports

if TYPE_CHECKING:
    from nl2sql.context_engine.api import context
    from nl2sql.context_engine.prompt_context import (Candidate, ContextExample, GlossaryEntry,
                                                      KeptTable, MetricHint, PromptContext,
                                                      UsedContext, ValueHint)

_WHERE = {
    "context": "api",
    "Candidate": "prompt_context",
    "ContextExample": "prompt_context",
    "GlossaryEntry": "prompt_context",
    "KeptTable": "prompt_context",
    "MetricHint": "prompt_context",
    "PromptContext": "prompt_context",
    "UsedContext": "prompt_context",
    "ValueHint": "prompt_context",
}
__all__ = sorted(_WHERE)


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
