"""Per question: did the context the agent is given (``nl2sql.context()``) hold what the gold
query needs? Table recall: the gold's tables among the context's tables. Value-hint recall: the
gold's string literals among the value hints (literals that are dates or numbers, and LIKE
wildcards, are left out: they are not stored values)."""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from nl2sql.context_engine.api import context as find_context
from nl2sql.errors import Nl2SqlError
from nl2sql.evaluation.scoring import QuestionResult

_NOT_A_VALUE = re.compile(r"^[\d\s:.\-+/TZ]*$")  # numbers, dates, times


def gold_tables(sql: str, dialect: str) -> list[str]:
    """Tables the gold reads (CTE names left out), lower case, in order of appearance."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return []
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    names = [t.name.lower() for t in tree.find_all(exp.Table) if t.name]
    return list(dict.fromkeys(n for n in names if n not in ctes))


def gold_literals(sql: str, dialect: str) -> list[str]:
    """String literals of the gold that name stored values (``'AC/DC'``, ``'Rock'``)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return []
    values = []
    for literal in tree.find_all(exp.Literal):
        if not literal.is_string:
            continue
        text = literal.this.strip("%")
        if text and not _NOT_A_VALUE.match(text):
            values.append(text)
    return list(dict.fromkeys(values))


def _recall(wanted: list[str], found: set[str]) -> float | None:
    if not wanted:
        return None
    return round(sum(1 for w in wanted if w.lower() in found) / len(wanted), 4)


def add_context_recall(result: QuestionResult, configs: object, dialect: str) -> None:
    """Fill the context fields of ``result`` from ``nl2sql.context()`` for its database."""
    gold = result.gold_sql[result.matched_gold or 0]
    result.gold_tables = gold_tables(gold, dialect)
    result.gold_literals = gold_literals(gold, dialect)
    try:
        context = find_context(result.question, db_id=result.db_id, config=configs)
    except Nl2SqlError as exc:
        result.context_error = str(exc)
        return
    result.context_tables = [t.name for t in context.tables]
    result.value_hints = [f"{h.table}.{h.column} = {h.value}" for h in context.value_hints]
    result.table_recall = _recall(result.gold_tables, {t.rsplit('.', 1)[-1].lower()
                                                       for t in result.context_tables})
    result.value_hint_recall = _recall(result.gold_literals,
                                       {h.value.lower() for h in context.value_hints})
