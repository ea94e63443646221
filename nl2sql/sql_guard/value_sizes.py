"""Values too big to build: a call that builds a value from a count, bounded before it runs.

``max_value_bytes`` is checked where each engine hands a value out, but some engines die while
building one: ``SELECT repeat('x', 200000000)`` and ``sequence(1, id * 300000000)`` took the
Spark Connect server down (the executor ran out of memory), and DuckDB builds its values in
nl2sql's own memory. So on such a backend (``DbConnection.refuses_big_literal_counts``) every
call that builds a value from a count gets an upper bound of its size before anything runs:

- the sized calls: ``repeat``, ``space``, ``lpad``/``rpad``, ``array_repeat``/``list_repeat``,
  ``randomblob``/``zeroblob``, ``replicate``, and ``sequence``/``generate_series``/``range``
  used as a value (in ``FROM`` they stream rows: no value is built);
- a count is any constant expression, folded: ``2e8``, ``2000 * 100000``, ``CAST('2e8' AS
  INT)``, and for a series its bounds and step (numbers, or dates with an interval step);
- nested calls multiply and concatenations add: ``repeat(repeat('x', 20000), 10000)`` is
  200,000,000 bytes though each count alone is small.

A bound over ``max_value_bytes`` is refused. A count computed from the data is known only once
the engine built the value: where building it can kill the engine
(``DbConnection.refuses_computed_counts``: Spark) such a call is refused too; elsewhere it is
left to the engine's own check of the values it hands out (and, for DuckDB, to its memory limit
and the server's memory cap). Values grown by aggregates over many rows (``collect_list``,
``string_agg``) are bounded by the data, not here: on Spark, the executor's memory
(docs/security.md).
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass

from sqlglot import exp

from nl2sql.errors import QueryRejectedError

#: Anonymous sized calls (as sqlglot leaves them): SQL name -> (position of the operand whose
#: copies make the value, or None; position of the count).
_ANONYMOUS = {"repeat": (0, 1), "replicate": (0, 1), "array_repeat": (0, 1),
              "list_repeat": (0, 1), "lpad": (None, 1), "rpad": (None, 1), "space": (None, 0),
              "randomblob": (None, 0), "zeroblob": (None, 0)}
#: Series built as a list when called as a value: (start, end[, step]) or (end).
_SERIES = frozenset({"sequence", "generate_series", "range"})
#: Bytes counted per element of a built list (a 64-bit number).
_ELEMENT_BYTES = 8
#: Days in one unit of an interval step, the smallest when it varies (a month: 28), so that a
#: series of dates gets its largest element count.
_DAYS = {"microsecond": 1 / 86_400_000_000, "millisecond": 1 / 86_400_000,
         "second": 1 / 86_400, "minute": 1 / 1_440, "hour": 1 / 24, "day": 1.0, "week": 7.0,
         "month": 28.0, "quarter": 89.0, "year": 365.0}


@dataclass(frozen=True)
class _Sized:
    """A call that builds its value from a count."""

    name: str
    counts: tuple[exp.Expr, ...]  # what the size depends on: the count; a series' bounds
    operand: exp.Expr | None = None  # copied ``count`` times (None: the count is the size)
    series: bool = False

    def shown(self) -> str:
        counts = ", ".join(c.sql() for c in self.counts)
        return f"{self.name}({counts})" if self.series else f"{self.name}(..., {counts})"

    def size(self) -> float | None:
        """Bytes, an upper bound; None when a count is computed from the data."""
        values = [_constant(c) for c in self.counts]
        if any(v is None for v in values):
            return None
        if self.series:
            start, end, step = (values + [1.0])[:3] if len(values) > 1 else [1.0, values[0], 1.0]
            return _ELEMENT_BYTES * (abs(end - start) / (abs(step) or 1.0) + 1)
        count = max(values[0], 0.0)
        return count * (max(_size(self.operand), 1.0) if self.operand is not None else 1.0)


def check_value_sizes(expression: exp.Expr, max_value_bytes: int, *, db_id: str,
                      computed_counts: bool = True) -> None:
    """Refuse a call whose value is bound to exceed ``max_value_bytes`` (a sized call, or one
    that joins sized values), or (with ``computed_counts=False``) a sized call whose count is
    computed from the data."""
    for node in expression.find_all(exp.Func):
        sized = _sized_call(node)
        if sized is None:
            continue
        size = sized.size()
        if size is None:
            if computed_counts:
                continue  # the engine's own check of the values it hands out
            raise QueryRejectedError(
                f"{sized.shown()} builds a value from a count computed from the data; database "
                f"'{db_id}' builds the whole value before nl2sql can check its size, and a big "
                f"one takes its server down, so it is not run: use a constant count (the value "
                f"at most {max_value_bytes:,} bytes, max_value_bytes).", db_id=db_id)
        if size > max_value_bytes:
            raise _too_big(sized.shown(), max_value_bytes, db_id)
    for node in expression.find_all(exp.Func, exp.Binary):  # values joined: concat, ||
        if not isinstance(node, exp.AggFunc) and _size(node) > max_value_bytes:
            text = node.sql()
            raise _too_big(text if len(text) <= 80 else text[:77] + "...", max_value_bytes,
                           db_id)


def _too_big(call: str, max_value_bytes: int, db_id: str) -> QueryRejectedError:
    return QueryRejectedError(
        f"{call} would build a value larger than the limit of {max_value_bytes:,} bytes "
        f"(max_value_bytes) of database '{db_id}'; build a smaller value, or raise "
        f"max_value_bytes for db {db_id} in dbs.yaml.", db_id=db_id)


def _sized_call(node: exp.Expr) -> _Sized | None:
    """The sized call ``node`` is, or None (a call in ``FROM`` streams rows: no value)."""
    if not isinstance(node, exp.Func) or (isinstance(node.parent, exp.Table)
                                          and node.parent.this is node):
        return None
    if isinstance(node, exp.GenerateSeries):
        counts = [node.args.get(k) for k in ("start", "end", "step")]
        return _Sized("sequence/generate_series", tuple(c for c in counts if c is not None),
                      series=True)
    if isinstance(node, exp.Repeat):
        return _Sized("repeat", (node.args["times"],), node.this)
    if isinstance(node, exp.Pad):
        return _Sized("lpad" if node.args.get("is_left") else "rpad", (node.expression,))
    if isinstance(node, exp.Space):
        return _Sized("space", (node.this,))
    if not isinstance(node, exp.Anonymous):
        return None
    name, arguments = node.name.lower(), node.expressions
    if name in _SERIES and 1 <= len(arguments) <= 3:
        return _Sized(name, tuple(arguments), series=True)
    operand, count = _ANONYMOUS.get(name, (None, None))
    if count is None or len(arguments) <= count:
        return None
    return _Sized(name, (arguments[count],), arguments[operand] if operand is not None else None)


def _size(node: exp.Expr | None) -> float:
    """An upper bound of the bytes of ``node``'s value from what the query itself says
    (a value read from the data counts as 0: the engine checks those)."""
    if node is None or isinstance(node, exp.Column | exp.Subquery | exp.AggFunc | exp.Null):
        return 0.0
    if isinstance(node, exp.Literal):
        return len(str(node.this).encode()) if node.is_string else _ELEMENT_BYTES
    sized = _sized_call(node)
    if sized is not None:
        return sized.size() or 0.0  # computed from the data: the engine's check
    return sum(_size(child) for child in node.iter_expressions())


def _constant(node: exp.Expr | None) -> float | None:
    """The number a constant expression folds to (a date: its day number; an interval: its
    days), or None when it depends on the data."""
    if node is None:
        return None
    if isinstance(node, exp.Literal):
        return _number(str(node.this))
    if isinstance(node, exp.Null):
        return 0.0
    if isinstance(node, exp.Paren | exp.Cast | exp.TryCast | exp.TsOrDsToDate | exp.Date
                  | exp.StrToDate):
        return _constant(node.this)
    if isinstance(node, exp.Neg):
        value = _constant(node.this)
        return None if value is None else -value
    if isinstance(node, exp.Interval):
        amount = _constant(node.this)
        unit = node.unit.name.lower().rstrip("s") if node.unit else "day"
        return None if amount is None else amount * _DAYS.get(unit, 1.0)
    if isinstance(node, exp.Binary):
        left, right = _constant(node.this), _constant(node.expression)
        if left is None or right is None:
            return None
        return _fold(node, left, right)
    return None


def _fold(node: exp.Binary, left: float, right: float) -> float | None:
    try:
        if isinstance(node, exp.Add):
            return left + right
        if isinstance(node, exp.Sub):
            return left - right
        if isinstance(node, exp.Mul):
            return left * right
        if isinstance(node, exp.Div | exp.IntDiv):
            return left / right if right else 0.0
        if isinstance(node, exp.Mod):
            return abs(right)
        if isinstance(node, exp.Pow):
            return float(left ** right)
    except (OverflowError, ZeroDivisionError, TypeError):
        return math.inf
    return None


def _number(text: str) -> float | None:
    """A numeric literal, or a date / timestamp literal as its day number."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.toordinal() + (moment - moment.replace(hour=0, minute=0, second=0,
                                                         microsecond=0)).total_seconds() / 86_400
