"""Read-only guard, parser layer: one query statement, no writes, no side-effect functions.

The engine layers (read-only transactions, SQLite authorizer) live in ``nl2sql.db`` and hold
even when this check is wrong; this one gives the fast, readable refusal. What it knows about
each backend's SQL is declared in that backend's profile (``profiles.py``).
"""

from __future__ import annotations

from nl2sql.sql_guard.guard import ValidatedQuery, validate_read_only
from nl2sql.sql_guard.profiles import (
    DENIED_FUNCTION_EFFECTS,
    DENIED_FUNCTION_PREFIXES,
    DENIED_FUNCTIONS,
    GuardProfile,
    is_denied_function,
    profile_for,
)

__all__ = [
    "DENIED_FUNCTIONS",
    "DENIED_FUNCTION_EFFECTS",
    "DENIED_FUNCTION_PREFIXES",
    "GuardProfile",
    "ValidatedQuery",
    "is_denied_function",
    "profile_for",
    "validate_read_only",
]
