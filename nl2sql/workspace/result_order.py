"""Does a gold query order its rows, and by which output columns? (sqlglot, outermost query)."""

from __future__ import annotations

from collections.abc import Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from nl2sql.workspace.result_compare import OrderSpec


def order_spec(sql: str, dialect: str, columns: Sequence[str]) -> OrderSpec:
    """How ``sql``'s outermost query orders its result.

    ``columns`` are the result's column names as the database returned them. Each ``ORDER BY``
    key is mapped to an output column: a position (``ORDER BY 2``), an output name or alias, or
    an expression identical to a projection. When any key is none of these (``ORDER BY
    COUNT(*)`` not selected), ``key_columns`` is None and whole rows must follow the gold.
    """
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return OrderSpec()
    while isinstance(tree, (exp.Subquery, exp.Paren)) and not tree.args.get("order"):
        tree = tree.this
    order = tree.args.get("order") if isinstance(tree, exp.Expression) else None
    if not isinstance(order, exp.Order) or not order.expressions:
        return OrderSpec()
    keys: list[int] = []
    for ordered in order.expressions:
        index = _key_column(ordered.this, tree, columns)
        if index is None:
            return OrderSpec(ordered=True, key_columns=None)
        keys.append(index)
    return OrderSpec(ordered=True, key_columns=tuple(dict.fromkeys(keys)))


def _key_column(key: exp.Expression, tree: exp.Expression, columns: Sequence[str]) -> int | None:
    if isinstance(key, exp.Literal) and key.is_int:
        position = int(key.this) - 1
        return position if 0 <= position < len(columns) else None
    lowered = [c.lower() for c in columns]
    if isinstance(key, exp.Column) and not key.table and key.name.lower() in lowered:
        return lowered.index(key.name.lower())
    selects = tree.selects if isinstance(tree, exp.Query) else []
    if len(selects) != len(columns) or any(
            isinstance(s, exp.Star) or (isinstance(s, exp.Column) and s.is_star) for s in selects):
        return None  # a * expands to columns the parse cannot see: no positional mapping
    wanted = key.sql()
    for index, projection in enumerate(selects):
        body = projection.this if isinstance(projection, exp.Alias) else projection
        if body.sql() == wanted:
            return index
    if isinstance(key, exp.Column):  # ORDER BY t.name where the projection is plain name
        for index, projection in enumerate(selects):
            body = projection.this if isinstance(projection, exp.Alias) else projection
            if isinstance(body, exp.Column) and body.name.lower() == key.name.lower() and \
                    (not body.table or not key.table or body.table == key.table):
                return index
    return None
