"""Values too big to build: each value a query builds gets an upper bound before it runs.

``max_value_bytes`` is checked where each engine hands a value out, but some engines die while
building one: ``SELECT repeat('x', 200000000)``, ``sequence(1, id * 300000000)`` and
``aggregate(sequence(1, 40), Name, (acc, x) -> concat(acc, acc))`` took the Spark Connect server
down (the executor ran out of memory), and DuckDB builds its values in nl2sql's own memory,
inside one scalar function that its interrupt does not stop. So on such a backend
(``DbConnection.refuses_big_literal_counts``) every value of the query gets an upper bound of its
size, as ``fixed + copies * D``: ``fixed`` bytes the query itself says, and ``copies`` times the
largest value read from the data (``D``, a column, a subquery or an aggregate: not known before
the query runs):

- a literal counts its bytes; a column of a CTE or a derived table, or a scalar subquery, counts
  what its projection builds; any other column or aggregate counts ``D``; arithmetic,
  comparisons and numeric casts count a number;
- the sized calls multiply their operand by their count (``repeat``, ``array_repeat``,
  ``list_repeat``, ``replicate``, ``list_resize``/``array_resize``, ``array_insert``'s position)
  or are their count (``space``, ``lpad``/``rpad``, ``randomblob``/``zeroblob``, ``randstr``,
  ``format_number``, ``bar``, and ``sequence``/
  ``generate_series``/``range`` used as a value: in ``FROM`` they stream rows); a count is any
  constant expression, folded (``2e8``, ``2000 * 100000``, ``CAST('2e8' AS INT)``, a date range
  with an interval step);
- ``replace``/``regexp_replace`` count the input plus one replacement per possible match (and a
  back-reference copies the input again), ``translate`` the input times its widest character,
  ``concat_ws``/``array_join`` a separator per element, format strings (``format_string``,
  ``printf``, ``format``) each conversion's width and precision read from the format literal;
- lambdas multiply: ``transform``/``list_transform`` (and any call taking a lambda) count the
  body once per element, ``aggregate``/``reduce``/``list_reduce`` grow their accumulator per
  element (``concat(acc, acc)`` doubles it: ``2 ** n``), and a recursive CTE whose step builds
  a column from more than one copy of the previous row's is refused (it doubles each step);
- everything else (``concat``, ``||``, other functions) adds its operands.

Refused, in one sentence naming the call: a bound over ``max_value_bytes``; a call that copies a
value read from the data more than ``DATA_COPIES`` times per data value it reads
(``repeat(Name, 10000000)``, a doubling lambda started from a column), since its size cannot be
proven before the engine built it; a format or a width that is not a literal; and (with
``computed_counts=False``: Spark, which died building one, and DuckDB, whose interrupt does not
stop the scalar function building one) a count computed from the data. With
``computed_counts=True`` such a count is left to the engine's own check of the values it hands
out. Values grown by aggregates over many rows (``collect_list``,
``string_agg``) are bounded by the data, not here (docs/security.md).
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterable

from sqlglot import exp

from nl2sql.errors import QueryRejectedError
from nl2sql.sql_guard.profiles import profile_for

#: How many copies of the values it reads one call may build: ``replace(Name, ' ', '%20')``,
#: ``concat_ws(', ', City, Country)`` and ``repeat(Code, 3)`` run; ``repeat(Name, 10000000)``
#: and a lambda doubling a column are refused, since the engine builds them whole before any
#: check can see their size.
DATA_COPIES = 4

#: Bytes counted per number (and per element of a built list).
_ELEMENT_BYTES = 8
#: Anonymous sized calls (as sqlglot leaves them): SQL name -> (position of the operand whose
#: copies make the value, or None; position of the count; bytes per unit of the count when
#: there is no such operand).
_ANONYMOUS = {"repeat": (0, 1, 1), "replicate": (0, 1, 1), "array_repeat": (0, 1, 1),
              "list_repeat": (0, 1, 1), "lpad": (None, 1, 1), "rpad": (None, 1, 1),
              "space": (None, 0, 1), "randomblob": (None, 0, 1), "zeroblob": (None, 0, 1),
              "format_number": (None, 1, 1), "bar": (None, 3, 3),
              "list_resize": (2, 1, _ELEMENT_BYTES), "array_resize": (2, 1, _ELEMENT_BYTES)}
#: Series built as a list when called as a value: (start, end[, step]) or (end).
_SERIES = frozenset({"sequence", "generate_series", "range"})
#: Calls that fold a list with an accumulator: (list, lambda[, initial]).
_REDUCERS = frozenset({"list_reduce", "array_reduce", "reduce", "aggregate"})
#: Calls whose lambda only picks or orders the elements of their list (the value: the list).
_KEEPERS = frozenset({"filter", "list_filter", "array_filter", "exists", "forall",
                      "array_sort", "list_sort", "map_filter", "list_any", "list_all"})
#: Calls whose format is read printf-style (``%10s``) on every backend; ``format`` is read as
#: its backend's profile says (``GuardProfile.format_braces``: DuckDB's ``{:>10}``).
_PRINTF_FORMATS = frozenset({"printf", "format_string"})
#: Bytes of a number written out in full (a double's 309 digits and its sign, point, exponent).
_NUMBER_TEXT = 330
#: Days in one unit of an interval step, the smallest when it varies (a month: 28), so that a
#: series of dates gets its largest element count.
_DAYS = {"microsecond": 1 / 86_400_000_000, "millisecond": 1 / 86_400_000,
         "second": 1 / 86_400, "minute": 1 / 1_440, "hour": 1 / 24, "day": 1.0, "week": 7.0,
         "month": 28.0, "quarter": 89.0, "year": 365.0}
_FIXED, _DATA = "", "D"
#: How many values read from the data a size is made of (added, never multiplied): the
#: allowance of DATA_COPIES is per value read.
_READS = "#"
_READ: dict[str, float] = {_DATA: 1.0, _READS: 1.0}
#: Nodes whose value is a number or a truth value, whatever their operands.
_NUMBERS = (exp.Predicate, exp.Connector, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv,
            exp.Mod, exp.Pow, exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor,
            exp.BitwiseLeftShift, exp.BitwiseRightShift, exp.Length, exp.Count, exp.Sum,
            exp.Avg, exp.Abs, exp.Round, exp.Floor, exp.Ceil, exp.Not, exp.Between, exp.In,
            exp.Exists, exp.Extract, exp.StrPosition, exp.ArraySize)
_SAME_AS_OPERAND = (exp.Max, exp.Min, exp.AnyValue, exp.First, exp.Last)
_PRINTF = re.compile(r"%(\d+\$|<)?[-#+ 0,(]*(\d+|\*)?(?:\.(\d+|\*))?([a-zA-Z%])")
_BACKREFERENCE = re.compile(r"\$\d|\$\{|\\\d")

Size = dict[str, float]
"""Bytes, an upper bound: ``fixed`` (key "") + ``D`` times the largest value read from the
data + a coefficient per lambda variable or recursive column (their own keys)."""


class _Unbounded(Exception):
    """No bound can be proven: ``reason`` says why."""

    def __init__(self, reason: str, shown: str | None = None) -> None:
        super().__init__(reason)
        self.reason, self.shown = reason, shown


def check_value_sizes(expression: exp.Expr, max_value_bytes: int, *, db_id: str,
                      computed_counts: bool = True, dialect: str = "spark") -> None:
    """Refuse a query that builds a value bound to exceed ``max_value_bytes``, one whose size
    cannot be proven (a value read from the data copied more than ``DATA_COPIES`` times, a
    format that is not a literal), or (with ``computed_counts=False``) a sized call whose count
    is computed from the data. ``dialect``: how ``format`` reads its format (DuckDB: braces)."""
    _Sizer(max_value_bytes, db_id, computed_counts, dialect).value(expression)


def _shown(node: exp.Expr, dialect: str | None = None) -> str:
    text = node.sql(dialect=dialect)
    return text if len(text) <= 80 else text[:77] + "..."


def _too_big(call: str, max_value_bytes: int, db_id: str) -> QueryRejectedError:
    return QueryRejectedError(
        f"{call} would build a value larger than the limit of {max_value_bytes:,} bytes "
        f"(max_value_bytes) of database '{db_id}'; build a smaller value, or raise "
        f"max_value_bytes for db {db_id} in dbs.yaml.", db_id=db_id)


def _add(*sizes: Size) -> Size:
    total: Size = {}
    for size in sizes:
        for key, value in size.items():
            total[key] = total.get(key, 0.0) + value
    return total


def _scale(size: Size, factor: float) -> Size:
    return {key: (value * factor if value and key != _READS else value)
            for key, value in size.items()}


def _unknown(size: Size) -> bool:
    """Whether ``size`` depends on anything but the query (the data, a lambda variable)."""
    return any(v for k, v in size.items() if k not in (_FIXED, _READS))


def _most(*sizes: Size) -> Size:
    top: Size = {}
    for size in sizes:
        for key, value in size.items():
            top[key] = max(top.get(key, 0.0), value)
    return top


def _mul(left: Size, right: Size) -> Size:
    """``left * right``; a product of two unknowns has no linear bound (``D`` infinite)."""
    reads = {_READS: left.get(_READS, 0.0) + right.get(_READS, 0.0)}
    if not _unknown(left):
        return _add(_scale(right, left.get(_FIXED, 0.0)), {_READS: left.get(_READS, 0.0)})
    if not _unknown(right):
        return _add(_scale(left, right.get(_FIXED, 0.0)), {_READS: right.get(_READS, 0.0)})
    return {_FIXED: left.get(_FIXED, 0.0) * right.get(_FIXED, 0.0), _DATA: math.inf, **reads}


def _split(size: Size, key: str) -> tuple[Size, float]:
    """``size`` without ``key``, and ``key``'s coefficient."""
    rest = {k: v for k, v in size.items() if k != key}
    return rest, size.get(key, 0.0)


def _subst(size: Size, key: str, value: Size) -> Size:
    rest, coefficient = _split(size, key)
    return _add(rest, _scale(value, coefficient))


def _number_size() -> Size:
    return {_FIXED: float(_ELEMENT_BYTES)}


class _Sizer:
    """Computes each value's bound, refusing as it goes (one walk of the tree)."""

    def __init__(self, limit: int, db_id: str, computed_counts: bool, dialect: str) -> None:
        self.limit, self.db_id = limit, db_id
        self.computed_counts, self.dialect = computed_counts, dialect
        self.env: dict[str, str] = {}  # lambda parameter -> its symbol
        self.open: dict[int, exp.CTE] = {}  # CTEs being sized (a reference back: recursion)
        self.memo: dict[int, Size] = {}

    def refuse(self, node: exp.Expr | str, reason: str) -> QueryRejectedError:
        shown = node if isinstance(node, str) else _shown(node, self.dialect)
        return QueryRejectedError(
            f"{shown} {reason}; database '{self.db_id}' builds the whole value before "
            f"nl2sql can check its size, and a big one takes its server down, so it is not run "
            f"(values at most {self.limit:,} bytes, max_value_bytes).", db_id=self.db_id)

    # -- the walk -------------------------------------------------------------------------
    def value(self, node: exp.Expr | None) -> Size:
        if node is None:
            return {}
        key = id(node)
        if not self.env and not self.open and key in self.memo:
            return self.memo[key]
        try:
            size = self._value(node)
        except _Unbounded as unbounded:
            raise self.refuse(unbounded.shown or node, unbounded.reason) from None
        if isinstance(node, exp.Func | exp.Binary | exp.Comprehension) and not isinstance(
                node, exp.AggFunc | exp.Subquery):
            self._check(node, size)
        if not self.env and not self.open:
            self.memo[key] = size
        return size

    def _check(self, node: exp.Expr, size: Size) -> None:
        if size.get(_FIXED, 0.0) > self.limit:
            raise _too_big(_shown(node, self.dialect), self.limit, self.db_id)
        copies = size.get(_DATA, 0.0)
        if copies > DATA_COPIES:
            if copies > DATA_COPIES * max(size.get(_READS, 0.0), 1.0):
                times = "an unbounded number of" if math.isinf(copies) else f"{copies:,.0f}"
                raise self.refuse(node, f"copies a value read from the data {times} times "
                                        f"(more than {DATA_COPIES} per value read), and its "
                                        f"size is not known before it runs")

    def _value(self, node: exp.Expr) -> Size:  # noqa: PLR0911 - one case per kind of node
        if isinstance(node, exp.Literal):
            return {_FIXED: float(len(str(node.this).encode()) if node.is_string
                                  else _ELEMENT_BYTES)}
        if isinstance(node, exp.Null | exp.Boolean | exp.Star):
            return {}
        if isinstance(node, exp.Identifier):
            symbol = self.env.get(node.name.lower())
            return {symbol: 1.0} if symbol else {}
        if isinstance(node, exp.Column):
            return self._column(node)
        if isinstance(node, exp.Alias | exp.Paren):
            return self.value(node.this)
        if isinstance(node, exp.Subquery):
            return self.value(node.this)
        if isinstance(node, exp.Select):
            for child in node.iter_expressions():
                if child not in node.expressions:
                    self.value(child)
            return _add({}, *(self.value(p) for p in node.expressions))
        if isinstance(node, exp.SetOperation):
            return _most(self.value(node.this), self.value(node.expression))
        if isinstance(node, exp.Lambda):  # outside a call that gives its parameters
            return self._lambda(node, [{} for _ in node.expressions])
        if isinstance(node, exp.Comprehension):
            return self._over_lists([node.args.get("iterator")], [node.this],
                                    [[node.expression]], others=[node.args.get("condition")])
        if isinstance(node, exp.Func) and not (isinstance(node.parent, exp.Table | exp.Lateral)
                                               and node.parent.this is node):  # rows, no value
            sized = self._call(node)
            if sized is not None:
                return sized
        children = [self.value(child) for child in node.iter_expressions()]
        if isinstance(node, exp.Cast | exp.TryCast):
            to = node.args.get("to")
            if to is not None and to.is_type(*exp.DataType.NUMERIC_TYPES, "boolean", "date"):
                return _number_size()
            return children[0] if children else {}
        if isinstance(node, _NUMBERS):
            return _number_size()
        if isinstance(node, _SAME_AS_OPERAND):
            return self.value(node.this)
        if isinstance(node, exp.AggFunc):
            return dict(_READ)
        return _add({}, *children)

    def _column(self, node: exp.Column) -> Size:
        if not node.table:
            symbol = self.env.get(node.name.lower())
            if symbol:
                return {symbol: 1.0}
        found = _projection(node)
        if found is None:
            return dict(_READ)
        cte, index = found
        if id(cte) in self.open:
            return {f"rec:{id(cte)}:{index}": 1.0}
        outer, self.env = self.env, {}
        self.open[id(cte)] = cte
        try:
            return self._cte_column(cte, index)
        finally:
            del self.open[id(cte)]
            self.env = outer

    def _cte_column(self, cte: exp.Expr, index: int) -> Size:
        body = cte.this
        sides = _selects(body)
        sizes = []
        for side in sides:
            self.value(side)  # every call in it checked
            projections = side.expressions
            if index >= len(projections) or isinstance(projections[index], exp.Star):
                return dict(_READ)
            sizes.append(self.value(projections[index]))
        own = f"rec:{id(cte)}:"
        for size in sizes:
            growth = sum(v for k, v in size.items() if k.startswith(own))
            if growth > 1:
                raise _Unbounded(f"builds each step from {growth:,.0f} copies of the previous "
                                 f"step's values (it grows exponentially)",
                                 f"The recursive CTE {cte.alias_or_name}")
        merged: Size = {}
        for key, value in _most(*sizes).items():  # the previous step's values: read rows
            merged = _add(merged, _scale(_READ, value) if key.startswith(own) else {key: value})
        return merged

    # -- calls --------------------------------------------------------------------------------
    def _call(self, node: exp.Func) -> Size | None:  # noqa: PLR0911
        name = node.name.lower() if isinstance(node, exp.Anonymous) else ""
        arguments = list(node.expressions) if isinstance(node, exp.Anonymous) else []
        if isinstance(node, exp.Reduce) or (name in _REDUCERS and len(arguments) >= 2
                                            and isinstance(arguments[1], exp.Lambda)):
            return self._reduce(node, arguments)
        if any(isinstance(child, exp.Lambda) for child in node.iter_expressions()):
            lists = [c for c in node.iter_expressions() if not isinstance(c, exp.Lambda)]
            lambdas = [c for c in node.iter_expressions() if isinstance(c, exp.Lambda)]
            return self._over_lists(lists, [lam.this for lam in lambdas],
                                    [list(lam.expressions) for lam in lambdas],
                                    keeps=isinstance(node, exp.ArrayFilter | exp.ArrayAll
                                                     | exp.ArrayAny) or name in _KEEPERS)
        if isinstance(node, exp.GenerateSeries):
            bounds = [node.args.get(k) for k in ("start", "end", "step")]
            return self._series(node, [b for b in bounds if b is not None])
        if name in _SERIES and 1 <= len(arguments) <= 3:
            return self._series(node, arguments)
        if isinstance(node, exp.Repeat):
            return self._sized(node, node.args["times"], node.this)
        if isinstance(node, exp.Pad):
            return self._sized(node, node.expression, None)
        if isinstance(node, exp.Space | exp.Randstr):
            return self._sized(node, node.this, None)
        if isinstance(node, exp.ArrayInsert):  # a position past the end pads with NULLs
            return _add(self.value(node.this), self.value(node.args.get("expression")),
                        self._sized(node, node.args.get("position"), None, _ELEMENT_BYTES))
        if name == "format_number" and len(arguments) == 2 and isinstance(
                arguments[1], exp.Literal) and arguments[1].is_string:  # a pattern: '#,###.00'
            self.value(arguments[0])
            return {_FIXED: float(len(str(arguments[1].this).encode()) + _NUMBER_TEXT)}
        if isinstance(node, exp.Replace):
            return self._replace(node.this, node.expression, node.args.get("replacement"))
        if isinstance(node, exp.RegexpReplace):
            return self._replace(node.this, node.expression, node.args.get("replacement"),
                                 regexp=True)
        if isinstance(node, exp.Translate):
            return self._translate(node)
        if isinstance(node, exp.ConcatWs):
            return self._joined(node.expressions[1:], node.expressions[:1])
        if isinstance(node, exp.ArrayToString):
            return self._joined([node.this], [node.expression])
        if isinstance(node, exp.Format):
            braces = profile_for(self.dialect).format_braces
            return self._format(node.this, list(node.expressions), braces=braces)
        if name in _PRINTF_FORMATS and arguments:
            return self._format(arguments[0], arguments[1:], braces=False)
        if name in _ANONYMOUS:
            operand, count, unit = _ANONYMOUS[name]
            if len(arguments) > count:
                copied = arguments[operand] if operand is not None and operand < len(
                    arguments) else None
                return self._sized(node, arguments[count], copied, unit)
        return None

    def _count(self, node: exp.Expr, count: exp.Expr | None) -> float | None:
        """A constant count, or None (computed from the data: refused where that is the rule)."""
        value = _constant(count)
        if value is None and not self.computed_counts:
            raise _Unbounded("builds a value from a count computed from the data: use a "
                             "constant count")
        return value

    def _sized(self, node: exp.Expr, count: exp.Expr | None, operand: exp.Expr | None,
               unit: float = 1.0) -> Size:
        for other in node.iter_expressions():  # each checked; the size is the copies
            if other is not operand:
                self.value(other)
        copy = self.value(operand) if operand is not None else {_FIXED: unit}
        times = self._count(node, count)
        if times is None:  # the engine's own check (computed_counts)
            return copy
        return _scale(copy, abs(times))  # a negative position pads too (array_insert)

    def _series(self, node: exp.Expr, bounds: list[exp.Expr]) -> Size:
        for bound in bounds:
            self.value(bound)
        count = self._series_count(node, bounds)
        return _number_size() if count is None else {_FIXED: _ELEMENT_BYTES * count}

    def _series_count(self, node: exp.Expr, bounds: list[exp.Expr]) -> float | None:
        values = [_constant(b) for b in bounds]
        if any(v is None for v in values):
            if not self.computed_counts:
                raise _Unbounded("builds a value from a count computed from the data (its "
                                 "length): use constant bounds")
            return None
        start, end, step = (values + [1.0])[:3] if len(values) > 1 else [1.0, values[0], 1.0]
        return abs(end - start) / (abs(step) or 1.0) + 1

    def _elements(self, node: exp.Expr | None) -> tuple[float | None, Size]:
        """How many elements the list ``node`` has (None: not known) and its size."""
        size = self.value(node)
        if isinstance(node, exp.GenerateSeries):
            bounds = [node.args.get(k) for k in ("start", "end", "step")]
            return self._series_count(node, [b for b in bounds if b is not None]), size
        if isinstance(node, exp.Anonymous) and node.name.lower() in _SERIES:
            return self._series_count(node, list(node.expressions)), size
        if isinstance(node, exp.Array):
            return float(len(node.expressions)), size
        return None, size

    def _lambda(self, lam: exp.Lambda, bound: list[Size]) -> Size:
        """The body's size, each parameter a symbol, then each symbol replaced by ``bound``."""
        symbols = {p.name.lower(): f"lambda:{id(lam)}:{p.name.lower()}" for p in lam.expressions}
        outer, self.env = self.env, {**self.env, **symbols}
        try:
            body = self.value(lam.this)
        finally:
            self.env = outer
        for parameter, size in zip(lam.expressions, bound, strict=False):
            body = _subst(body, symbols[parameter.name.lower()], size)
        return body

    def _body(self, lam: exp.Expr, parameters: list[exp.Expr]) -> tuple[Size, list[float]]:
        """The body of a lambda as ``A + sum(c_i * parameter_i)``: (A, [c_i])."""
        symbols = [f"lambda:{id(lam)}:{p.name.lower()}" for p in parameters]
        outer = self.env
        self.env = {**outer, **{p.name.lower(): s for p, s in zip(parameters, symbols,
                                                                   strict=True)}}
        try:
            body = self.value(lam)
        finally:
            self.env = outer
        coefficients = []
        for symbol in symbols:
            body, coefficient = _split(body, symbol)
            coefficients.append(coefficient)
        return body, coefficients

    def _over_lists(self, lists: list[exp.Expr | None], bodies: list[exp.Expr],
                    parameters: list[list[exp.Expr]], others: Iterable[exp.Expr | None] = (),
                    *, keeps: bool = False) -> Size:
        """A call applying lambda bodies to each element of its lists (``transform``,
        ``filter``, ``zip_with``, a comprehension): the lists, and each body once per
        element (a parameter counts its list's elements, all of them together: the list)."""
        for other in others:
            self.value(other)
        found = [self._elements(lst) for lst in lists]
        total = _add({}, *(size for _, size in found))
        counts = [count for count, _ in found]
        for body, names in zip(bodies, parameters, strict=True):
            fixed, coefficients = self._body(body, names)
            if keeps:  # the body only says which elements stay, or their order
                continue
            if found and all(c is not None for c in counts):
                per_element = _scale(fixed, max(c for c in counts if c is not None))
            else:  # a list holds each element in 8 bytes at least (Spark, DuckDB)
                per_element = _mul(_scale(total, 1 / _ELEMENT_BYTES), fixed)
            total = _add(total, per_element)
            for i, coefficient in enumerate(coefficients):
                source = found[min(i, len(found) - 1)][1] if found else dict(_READ)
                total = _add(total, _scale(source, coefficient))
        return total

    def _reduce(self, node: exp.Func, arguments: list[exp.Expr]) -> Size:
        if isinstance(node, exp.Reduce):
            array, initial = node.this, node.args.get("initial")
            merge, finish = node.args["merge"], node.args.get("finish")
        else:
            array, merge = arguments[0], arguments[1]
            initial = arguments[2] if len(arguments) > 2 else None
            finish = arguments[3] if len(arguments) > 3 else None
        count, items = self._elements(array)
        start = self.value(initial) if initial is not None else items
        names = list(merge.expressions)
        if len(names) < 2:
            return _add(items, start, self.value(merge))
        step, (growth, per_item) = self._body(merge.this, names[:2])
        if growth > 1:
            if count is None:
                raise _Unbounded(f"multiplies its accumulator by {growth:,.0f} per element of "
                                 f"a list whose length is not known")
            try:
                factor = float(growth ** count)
            except OverflowError:
                factor = math.inf
            result = _add(_scale(start, factor), _scale(step, (factor - 1) / (growth - 1)),
                          _scale(items, factor * per_item))
        else:
            steps = _scale(step, count) if count is not None else \
                _mul(_scale(items, 1 / _ELEMENT_BYTES), step)
            result = _add(start, steps, _scale(items, per_item))
        if isinstance(finish, exp.Lambda):
            result = self._lambda(finish, [result])
        return result

    def _replace(self, text: exp.Expr, search: exp.Expr | None,
                 replacement: exp.Expr | None, *, regexp: bool = False) -> Size:
        length = self.value(text)
        self.value(search)
        new = self.value(replacement) if replacement is not None else {}
        literal = isinstance(search, exp.Literal) and search.is_string and not regexp
        width = len(str(search.this).encode()) if literal else 0
        matches = _scale(length, 1 / width) if width else _add(length, {_FIXED: 1.0})
        if regexp and replacement is not None:
            if isinstance(replacement, exp.Literal) and replacement.is_string:
                references = float(len(_BACKREFERENCE.findall(str(replacement.this))))
                copies = _scale(length, references)
            else:  # a replacement computed: it may hold a back-reference per two bytes
                copies = _mul(_scale(new, 0.5), length)
            new = _add(new, copies)
        return _add(length, _mul(matches, new))

    def _translate(self, node: exp.Translate) -> Size:
        text = self.value(node.this)
        self.value(node.args.get("from_"))
        to = node.args.get("to")
        self.value(to)
        if isinstance(to, exp.Literal) and to.is_string:
            widest = max((len(ch.encode()) for ch in str(to.this)), default=1)
        else:
            widest = 4
        return _scale(text, float(max(widest, 1)))

    def _joined(self, items: list[exp.Expr], separators: list[exp.Expr]) -> Size:
        separator = _add({}, *(self.value(s) for s in separators))
        total: Size = {}
        for item in items:
            count, size = self._elements(item)
            if count is None and isinstance(item, exp.Literal | exp.Column | exp.Subquery):
                count = 1.0  # a string: one separator (an array column: one per byte below)
                if isinstance(item, exp.Column):
                    count = None
            joins = _scale(separator, count) if count is not None else \
                _mul(_scale(size, 1 / _ELEMENT_BYTES), separator)
            total = _add(total, size, joins)
        return total

    def _format(self, template: exp.Expr, arguments: list[exp.Expr], *, braces: bool) -> Size:
        sizes = [self.value(a) for a in arguments]
        self.value(template)
        if not (isinstance(template, exp.Literal) and template.is_string):
            raise _Unbounded("reads its format from something other than a literal, so its "
                             "widths are not known")
        text = str(template.this)
        pieces = _fmt_fields(text) if braces else _printf_fields(text)
        total: Size = {_FIXED: float(len(text.encode()))}
        for index, width in pieces:
            argument = sizes[index] if index is not None and index < len(sizes) else {}
            total = _add(total, {_FIXED: width + _NUMBER_TEXT}, argument)
        return total


def _printf_fields(text: str) -> list[tuple[int | None, float]]:
    """(argument index, width + precision) of each conversion of a printf format."""
    fields: list[tuple[int | None, float]] = []
    following, last = 0, None
    for match in _PRINTF.finditer(text):
        position, width, precision, conversion = match.groups()
        if conversion in "%n":
            continue
        if "*" in (width or "") + (precision or ""):
            raise _Unbounded("takes a width from an argument, so its size is not known")
        if position == "<":
            index = last
        elif position:
            index = int(position[:-1]) - 1
        else:
            index, following = following, following + 1
        last = index
        fields.append((index, float(int(width or 0) + int(precision or 0))))
    return fields


def _fmt_fields(text: str) -> list[tuple[int | None, float]]:
    """(argument index, width + precision) of each ``{...}`` field of a fmt-style format."""
    fields: list[tuple[int | None, float]] = []
    following, at = 0, 0
    while (start := text.find("{", at)) >= 0:
        if text.startswith("{{", start):
            at = start + 2
            continue
        end = text.find("}", start)
        if end < 0:
            break
        field = text[start + 1:end]
        if "{" in field:
            raise _Unbounded("takes a width from an argument, so its size is not known")
        name, _, spec = field.partition(":")
        if name.strip().isdigit():
            index = int(name)
        else:
            index, following = following, following + 1
        fields.append((index, float(sum(int(n) for n in re.findall(r"\d+", spec)))))
        at = end + 1
    return fields


def _selects(body: exp.Expr) -> list[exp.Select]:
    if isinstance(body, exp.SetOperation):
        return _selects(body.this) + _selects(body.expression)
    if isinstance(body, exp.Subquery):
        return _selects(body.this)
    return [body] if isinstance(body, exp.Select) else []


def _projection(column: exp.Column) -> tuple[exp.Expr, int] | None:
    """The CTE or derived table ``column`` reads, and the position of its projection, or None
    (a table's column, or not found). The nearest query that reads a relation of that name (or,
    unqualified, any relation) is the one the column belongs to."""
    wanted = column.table.lower() if column.table else None
    select = column.find_ancestor(exp.Select)
    while select is not None:
        relations = _relations(select)
        if relations and (wanted is None or wanted in (alias for alias, _ in relations)):
            for alias, source in relations:
                if source is None or (wanted is not None and alias != wanted):
                    continue
                index = _position(source, column.name.lower())
                if index is not None:
                    return source, index
            return None
        select = select.find_ancestor(exp.Select)
    return None


def _relations(select: exp.Select) -> list[tuple[str, exp.Expr | None]]:
    """(alias, CTE or derived table; None for a table of the database) of each relation
    ``select`` reads."""
    relations = []
    from_ = select.args.get("from_")
    if from_ is not None:
        relations.append(from_.this)
    relations += [join.this for join in select.args.get("joins") or []]
    found: list[tuple[str, exp.Expr | None]] = []
    for relation in relations:
        if isinstance(relation, exp.Subquery):
            found.append((relation.alias.lower(), relation))
        elif isinstance(relation, exp.Table):
            cte = None if relation.args.get("db") else _cte(select, relation.name.lower())
            found.append(((relation.alias or relation.name).lower(), cte))
        else:
            found.append((relation.alias_or_name.lower(), None))
    return found


def _cte(node: exp.Expr, name: str) -> exp.CTE | None:
    scope: exp.Expr | None = node
    while scope is not None:
        with_ = scope.args.get("with_") if isinstance(scope, exp.Query) else None
        if with_ is not None:
            for cte in with_.expressions:
                if cte.alias.lower() == name:
                    return cte
        scope = scope.parent
    return None


def _position(source: exp.Expr, name: str) -> int | None:
    alias = source.args.get("alias")
    columns = [c.name.lower() for c in alias.columns] if isinstance(alias, exp.TableAlias) \
        else []
    if name in columns:
        return columns.index(name)
    selects = _selects(source.this)
    if not selects:
        return None
    for index, projection in enumerate(selects[0].expressions):
        if projection.alias_or_name.lower() == name:
            return index
    return None


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
