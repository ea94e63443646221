"""Small wording helpers shared by the texts people and models read."""

from __future__ import annotations

ELLIPSIS = "…"


def plural(n: int, noun: str) -> str:
    """``plural(1, "table")`` -> "1 table"; ``plural(1200, "row")`` -> "1,200 rows"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when anything was cut."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS
