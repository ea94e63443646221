"""The values a CHECK condition allows a column, when it lists them: ``status IN ('new',
'paid')``, PostgreSQL's ``status = ANY (ARRAY['new'::text, ...])`` (a table's constraint, or a
domain's with ``VALUE`` for the column). Such a list is the column's enum values, decided by
the schema (``DbSchemaExtractor``, the PostgreSQL inspector's domains)."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

__all__ = ["allowed_values"]


def allowed_values(condition: str, dialect: str) -> tuple[str, list[str]] | None:
    """``(column, values)`` when a CHECK ``condition`` allows the column only those strings
    (``c IN ('a', 'b')``, ``c = ANY (ARRAY['a'::text, 'b'::text])``, casts and charset
    introducers aside); None for any other condition."""
    try:
        tree = sqlglot.parse_one(condition, read=dialect)
    except sqlglot.errors.SqlglotError:
        return None
    tree = _bare(tree)
    if isinstance(tree, exp.In) and not tree.args.get("query"):
        column, items = _bare(tree.this), tree.expressions
    elif isinstance(tree, exp.EQ) and isinstance(tree.expression, exp.Any):
        column, array = _bare(tree.this), _bare(tree.expression.this)
        items = array.expressions if isinstance(array, exp.Array) else []
    else:
        return None
    values = [_bare(item) for item in items]
    if not isinstance(column, exp.Column) or not values or not all(
            isinstance(v, exp.Literal) and v.is_string for v in values):
        return None
    return column.name, list(dict.fromkeys(v.this for v in values))


def _bare(node: exp.Expr) -> exp.Expr:
    """``node`` without the parentheses, casts and charset introducers around it."""
    while isinstance(node, (exp.Paren, exp.Cast, exp.Introducer)):
        node = node.this if not isinstance(node, exp.Introducer) else node.expression
    return node
