"""The context engine: which database, which tables and columns, which stored values and which
examples a model is shown for a question, with reasons; offline indexes, fast at run time.

``nl2sql.context(question, *, db_id=None, budget_tokens=None, config=None) -> PromptContext``.
This package is itself callable (``nl2sql.context`` is both the function and this package, so
``import nl2sql.context.anything`` cannot shadow the function), and its names load on first use.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from nl2sql.lazy import lazy_exports

if TYPE_CHECKING:
    from nl2sql.context.api import context
    from nl2sql.context.models import (Candidate, ContextExample, GlossaryEntry, KeptTable,
                                       PromptContext, UsedContext, ValueHint)

_WHERE = {
    "context": "api",
    "Candidate": "models",
    "ContextExample": "models",
    "GlossaryEntry": "models",
    "KeptTable": "models",
    "PromptContext": "models",
    "UsedContext": "models",
    "ValueHint": "models",
}
__all__ = sorted(_WHERE)


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)


class _CallableModule(types.ModuleType):
    def __call__(self, question: str, **kwargs: Any) -> Any:
        return self.context(question, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
