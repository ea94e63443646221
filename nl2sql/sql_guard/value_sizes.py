"""Values too big to build: a call that makes a value from a count refused before it runs.

``max_value_bytes`` is checked where each engine hands a value out, but some engines die while
building one: ``SELECT repeat('x', 200000000)`` took the Spark Connect server down (executor out
of memory), and DuckDB builds it in nl2sql's own memory. A count written in the query is known
before anything runs, so on such a backend (``DbConnection.refuses_big_literal_counts``) a call of a function that builds its value from a
count (``repeat``, ``space``, ``lpad``/``rpad``, ``array_repeat``...) whose literal count is over
the database's ``max_value_bytes`` is refused here. A computed count is left to the engine's
own check of the values it hands out.
"""

from __future__ import annotations

from sqlglot import exp

from nl2sql.errors import QueryRejectedError

#: Functions whose result grows with a count argument (bytes, characters or elements).
SIZED_FUNCTIONS = frozenset({"repeat", "space", "pad", "lpad", "rpad", "array_repeat",
                             "list_repeat", "randomblob", "zeroblob", "replicate",
                             "array_fill", "make_array", "repeat_row"})


def check_value_sizes(expression: exp.Expr, max_value_bytes: int, *, db_id: str) -> None:
    """Refuse a sized call with a literal count over ``max_value_bytes``."""
    for node in expression.find_all(exp.Func):
        names = {node.name.lower()} if isinstance(node, exp.Anonymous) else {
            name.lower() for name in node.sql_names()}
        if not names & SIZED_FUNCTIONS:
            continue
        arguments = [a for v in node.args.values() for a in (v if isinstance(v, list) else [v])]
        for literal in arguments:  # a count written as it is; a computed one is the engine's
            if not isinstance(literal, exp.Literal) or literal.is_string:
                continue
            try:
                count = float(literal.this)
            except ValueError:
                continue
            if count > max_value_bytes:
                name = min(names & SIZED_FUNCTIONS)
                raise QueryRejectedError(
                    f"{name}(..., {literal.this}) would build a value larger than the limit of "
                    f"{max_value_bytes:,} bytes (max_value_bytes) of database '{db_id}'; build "
                    f"a smaller value, or raise max_value_bytes for db {db_id} in dbs.yaml.",
                    db_id=db_id)
