"""When two questions are "the same" (``question_key``), and which tables an SQL reads.

The key folds case, punctuation and spacing, and writes the value literals the question names in
one form (``1,000`` / ``1000.0`` -> ``1000``, ``'Rock'`` / ``"Rock"`` -> ``rock``), so "How many
tracks are in 'Rock'?" and "how many tracks are in rock" meet, and "... in Jazz" does not.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

from nl2sql.schema.models import DbInfo

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+", re.UNICODE)


def question_key(question: str) -> str:
    """``question`` folded for matching: case, punctuation, spacing and number spelling."""
    text = _THOUSANDS.sub("", unicodedata.normalize("NFKC", question).casefold())
    return " ".join(_number(token) if token[0].isdigit() else token
                    for token in _TOKEN.findall(text))


def _number(token: str) -> str:
    try:
        return f"{Decimal(token).normalize():f}"
    except InvalidOperation:
        return token


def tables_read(sql: str, dialect: str, info: DbInfo | None = None) -> list[str]:
    """The tables (and views) ``sql`` reads, sorted, CTE names left out, as the cache names them when
    ``info`` knows them; [] when sqlglot cannot parse it."""
    import sqlglot  # lazy: the MCP server imports this module at start-up (see docs/architecture.md)
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.ParseError:
        return []
    ctes = {cte.alias_or_name.casefold() for cte in tree.find_all(exp.CTE)}
    found: dict[str, None] = {}
    for table in tree.find_all(exp.Table):
        name = table.name
        if not name or (not table.db and name.casefold() in ctes):
            continue
        qualified = f"{table.db}.{name}" if table.db else name
        known = (info.table(qualified) or info.table(name)) if info is not None else None
        found[known.name if known is not None else qualified] = None
    return sorted(found)
