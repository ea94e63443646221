"""Read-only guard, parser layer: one query statement, no writes, no side-effect functions.

The engine layers (read-only transactions, SQLite authorizer) live in ``nl2sql.db`` and hold
even when this check is wrong; this one gives the fast, readable refusal.
"""

from __future__ import annotations

from nl2sql.sql_guard.denylist import (
    DENIED_FUNCTION_EFFECTS,
    DENIED_FUNCTION_PREFIXES,
    DENIED_FUNCTIONS,
    is_denied_function,
)
from nl2sql.sql_guard.guard import ValidatedQuery, validate_read_only

__all__ = [
    "DENIED_FUNCTIONS",
    "DENIED_FUNCTION_EFFECTS",
    "DENIED_FUNCTION_PREFIXES",
    "ValidatedQuery",
    "is_denied_function",
    "validate_read_only",
]
