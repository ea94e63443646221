"""Execution-accuracy comparison of two query results: the rules, in one place.

A prediction is right when its result equals the gold result under these rules (also in the
docs/evaluation.md, "Comparison rules"):

1. **Rows are a multiset**: duplicates count, row order is ignored, unless the gold query's
   outermost query has an ``ORDER BY`` (``gold_orders``). Then the prediction's rows must come
   in the gold's order of the sort keys: when every ``ORDER BY`` key is an output column, rows
   that tie on the keys may come in any order; otherwise the whole row sequence must match.
2. **Columns are matched by their values, not their names or positions**: an alias or a swapped
   column order is right. Each gold column is paired with a different predicted column whose
   values agree row by row.
3. **Extra columns** (``extra_columns``): ``"strict"`` (default) needs exactly the gold's column
   count; ``"allow"`` accepts a prediction that returns the gold's columns plus others, which are
   then ignored.
4. **Values**: numbers (int, float, Decimal, bool) are equal when equal in value within a
   relative tolerance of 1e-6 (``math.isclose(rel_tol=1e-6, abs_tol=1e-12)``); NULLs equal each
   other; dates and times compare as their ISO text (``2024-01-31``, ``2024-01-31 10:00:00``), so
   a date equals the same date written as text; bytes by content; every other value by its text
   exactly (case and spaces count). A number never equals a string.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

ExtraColumns = Literal["strict", "allow"]
EXTRA_COLUMN_RULES: tuple[str, ...] = ("strict", "allow")

REL_TOL = 1e-6
ABS_TOL = 1e-12
#: Column assignments tried before giving up (columns with identical values multiply them).
_MAX_ASSIGNMENTS = 5000
#: Unmatched rows beyond which the tolerant row matching falls back to sorted pairing.
_MAX_TOLERANT_PAIRS = 4_000_000


@dataclass(frozen=True)
class OrderSpec:
    """How the gold orders its rows: ``ordered`` and, when known, the output columns it sorts
    by (``None``: the keys are not all output columns, so whole rows must follow the gold)."""

    ordered: bool = False
    key_columns: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Comparison:
    equal: bool
    reason: str | None = None  # why not, for people
    #: How far the results agree when they differ (a wrong answer is explained against the
    #: closest of several golds): 0 column count, 1 row count, 2 a column's values, 3 rows,
    #: 4 only the order.
    closeness: int = 0


def normalize(value: Any) -> Any:
    """A value as the rules compare it: numbers as float (NaN kept), temporal values as ISO
    text, bytes as bytes, containers as their canonical text."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float, Decimal)):
        return float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dt.timedelta):
        return f"interval {value.total_seconds()!r}"
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(repr(normalize(v)) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {normalize(v)!r}" for k, v in sorted(value.items())) + "}"
    return str(value)


def values_equal(a: Any, b: Any) -> bool:
    """Equality of two normalized values under the rules."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    if isinstance(a, float) or isinstance(b, float):
        return False
    return a == b


def _bucket(value: Any) -> Any:
    """A hashable key that tolerance-equal values share in all but rare boundary cases."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return ("f", str(value))
        return ("f", float(f"{value:.5g}")) if value else ("f", 0.0)
    return ("v", type(value).__name__, value)


def _sort_key(value: Any) -> tuple[int, Any]:
    if value is None:
        return (0, 0)
    if isinstance(value, float):
        return (1, value if not math.isnan(value) else math.inf)
    if isinstance(value, bytes):
        return (3, value)
    return (2, str(value))


def _rows_equal(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return all(values_equal(x, y) for x, y in zip(a, b, strict=True))


def multiset_difference(gold: list[tuple[Any, ...]], pred: list[tuple[Any, ...]],
                        ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Rows of ``gold`` without a tolerance-equal partner in ``pred``, and the reverse."""
    buckets: dict[Any, list[int]] = {}
    for index, row in enumerate(pred):
        buckets.setdefault(tuple(_bucket(v) for v in row), []).append(index)
    used = [False] * len(pred)
    missing = []
    for row in gold:
        candidates = buckets.get(tuple(_bucket(v) for v in row), [])
        position = next((k for k, i in enumerate(candidates) if _rows_equal(row, pred[i])), None)
        if position is None:
            missing.append(row)
            continue
        used[candidates[position]] = True
        candidates[position] = candidates[-1]  # O(1) removal: identical rows match at once
        candidates.pop()
    extra = [row for i, row in enumerate(pred) if not used[i]]
    if missing and extra:  # values near a bucket boundary: match the leftovers pairwise
        missing, extra = _tolerant_leftovers(missing, extra)
    return missing, extra


def _tolerant_leftovers(missing: list[tuple[Any, ...]], extra: list[tuple[Any, ...]],
                        ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    if len(missing) * len(extra) > _MAX_TOLERANT_PAIRS:
        key = lambda row: tuple(_sort_key(v) for v in row)  # noqa: E731
        a, b = sorted(missing, key=key), sorted(extra, key=key)
        left = [(x, y) for x, y in zip(a, b) if not _rows_equal(x, y)]
        return [x for x, _ in left], [y for _, y in left]
    still_extra = list(extra)
    still_missing = []
    for row in missing:
        index = next((i for i, other in enumerate(still_extra) if _rows_equal(row, other)), None)
        if index is None:
            still_missing.append(row)
        else:
            still_extra.pop(index)
    return still_missing, still_extra


def _column_signature(rows: list[tuple[Any, ...]], column: int) -> list[Any]:
    return sorted((row[column] for row in rows), key=_sort_key)


def _columns_compatible(gold_sig: list[Any], pred_sig: list[Any]) -> bool:
    return all(values_equal(a, b) for a, b in zip(gold_sig, pred_sig, strict=True))


def _candidate_columns(gold: list[tuple[Any, ...]], pred: list[tuple[Any, ...]], n_gold: int,
                       n_pred: int) -> list[list[int]]:
    """For each gold column, the predicted columns holding the same multiset of values."""
    pred_sigs = [_column_signature(pred, j) for j in range(n_pred)]
    return [[j for j in range(n_pred)
             if _columns_compatible(_column_signature(gold, i), pred_sigs[j])]
            for i in range(n_gold)]


def _assignments(candidates: list[list[int]], same_as: list[int]) -> list[tuple[int, ...]]:
    """Injective choices of one predicted column per gold column, most constrained first.

    ``same_as[j]`` is the first predicted column identical to column ``j`` row by row: such
    columns are interchangeable, so only the first unused one of each group is tried."""
    order = sorted(range(len(candidates)), key=lambda i: len(candidates[i]))
    found: list[tuple[int, ...]] = []
    chosen: dict[int, int] = {}

    def walk(depth: int) -> None:
        if len(found) >= _MAX_ASSIGNMENTS:
            return
        if depth == len(order):
            found.append(tuple(chosen[i] for i in range(len(candidates))))
            return
        gold_column = order[depth]
        used = set(chosen.values())
        for pred_column in candidates[gold_column]:
            twin_unused = any(same_as[j] == same_as[pred_column] and j not in used
                              for j in range(same_as[pred_column], pred_column))
            if pred_column not in used and not twin_unused:
                chosen[gold_column] = pred_column
                walk(depth + 1)
                del chosen[gold_column]

    walk(0)
    return found


def _shown(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _values(values: list[Any], limit: int = 3) -> str:
    more = f" and {len(values) - limit} more" if len(values) > limit else ""
    return ", ".join(_shown(v) for v in values[:limit]) + more


def _preview(rows: list[tuple[Any, ...]], limit: int = 2) -> str:
    shown = "; ".join("(" + ", ".join(_shown(v) for v in row) + ")" for row in rows[:limit])
    more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
    return shown + more


def compare_results(gold_rows: Sequence[Sequence[Any]], pred_rows: Sequence[Sequence[Any]],
                    *, gold_columns: int | None = None, pred_columns: int | None = None,
                    order: OrderSpec = OrderSpec(),
                    extra_columns: ExtraColumns = "strict") -> Comparison:
    """Whether the predicted result equals the gold result, and why not (module docstring)."""
    gold = [tuple(normalize(v) for v in row) for row in gold_rows]
    pred = [tuple(normalize(v) for v in row) for row in pred_rows]
    n_gold = gold_columns if gold_columns is not None else (len(gold[0]) if gold else 0)
    n_pred = pred_columns if pred_columns is not None else (len(pred[0]) if pred else 0)
    if n_pred < n_gold or (n_pred > n_gold and extra_columns == "strict"):
        extra = " (extra columns are not accepted: --extra-columns allow)" \
            if n_pred > n_gold else ""
        return Comparison(False, f"column count differs: gold {n_gold}, predicted {n_pred}{extra}")
    if len(gold) != len(pred):
        return Comparison(False, f"row count differs: gold {len(gold)}, predicted {len(pred)}",
                          closeness=1)
    if not gold:
        return Comparison(True)
    candidates = _candidate_columns(gold, pred, n_gold, n_pred)
    for index, options in enumerate(candidates):
        if not options:
            values = _values(_column_signature(gold, index))
            if n_gold == n_pred == 1:
                return Comparison(False, f"values differ: gold {values}, predicted "
                                         f"{_values(_column_signature(pred, 0))}", closeness=2)
            return Comparison(False, f"no predicted column holds the values of gold column "
                                     f"{index + 1} ({values})", closeness=2)
    first_of: dict[tuple[Any, ...], int] = {}
    same_as = [first_of.setdefault(tuple(row[j] for row in pred), j) for j in range(n_pred)]
    best: Comparison | None = None
    for mapping in _assignments(candidates, same_as):
        projected = [tuple(row[j] for j in mapping) for row in pred]
        result = _compare_mapped(gold, projected, order)
        if result.equal:
            return result
        best = best or result
    return best or Comparison(False, "the columns cannot be paired: too many columns hold the "
                                     "same values", closeness=2)


def _compare_mapped(gold: list[tuple[Any, ...]], pred: list[tuple[Any, ...]],
                    order: OrderSpec) -> Comparison:
    missing, extra = multiset_difference(gold, pred)
    if missing or extra:
        return Comparison(False, f"rows differ: {len(missing)} gold row(s) missing from the "
                                 f"prediction (e.g. {_preview(missing)}); {len(extra)} "
                                 f"predicted row(s) not in the gold (e.g. {_preview(extra)})",
                          closeness=3)
    if not order.ordered:
        return Comparison(True)
    keys = order.key_columns
    if keys is not None and keys:
        same = all(_rows_equal([g[k] for k in keys], [p[k] for k in keys])
                   for g, p in zip(gold, pred))
    else:
        same = all(_rows_equal(g, p) for g, p in zip(gold, pred))
    if same:
        return Comparison(True)
    first = next(i for i, (g, p) in enumerate(zip(gold, pred)) if not _rows_equal(g, p))
    return Comparison(False, f"same rows in a different order: the gold orders its rows and "
                             f"row {first + 1} differs (gold {_preview([gold[first]], 1)}, "
                             f"predicted {_preview([pred[first]], 1)})", closeness=4)
