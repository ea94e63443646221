"""Which chart a result gets, from the kinds of its columns (``nl2sql.charts.table``).

The rules, first match wins:

1. no rows, or no numeric column -> no chart (the reason names the columns);
2. one row -> a big-number card of its numbers (at most ``CARD_MAX``);
3. a date or time column and numbers -> a line over time (several numbers: one line each; one
   number and a category: one line per category);
4. two numbers -> a scatter of the second against the first (coloured by a category with few
   values); unless the first column is a category naming each of the few rows (status, orders,
   revenue: an aggregate per status), which is rule 5's bars;
5. a category and numbers -> bars of the first number per category, sorted, the smallest
   summed as "other" when there are many; when the category repeats a little and the next
   category columns tell its rows apart (``Frank`` of Frank Harris and Frank Ralston), each
   bar is one row, labelled by them together (``labels``), not the sum of the rows it shares;
6. anything else (one number with nothing to plot it against, three or more numbers and no
   axis, free text) -> no chart, with the reason.

A caller's ``kind``, ``x``, ``y`` and ``colour`` win over the rules; what they leave open is
filled in the same way. ``colour`` names a column (one series per value) or, when no column
has that name, is a colour for the marks (``"teal"``, ``"#1f77b4"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from nl2sql.charts.table import Column, Table
from nl2sql.errors import ChartError

ChartKind = Literal["line", "bar", "scatter", "card"]
KINDS: tuple[str, ...] = get_args(ChartKind)
#: The most numbers one card shows; lines per chart; values of a colour column in a scatter.
CARD_MAX = 4
LINES_MAX = 4
SCATTER_COLOURS_MAX = 8
#: Category columns a bar's label joins at most (first name, last name; country, city).
LABEL_COLUMNS_MAX = 3
#: Bars drawn before the rest are summed as one "other" bar.
TOP_BARS = 12


@dataclass(frozen=True)
class ChartSpec:
    """What to draw; ``reason``: what it shows ("tracks per genre"), or with ``kind`` None
    why there is no chart."""

    kind: ChartKind | None
    reason: str
    x: str | None = None
    y: tuple[str, ...] = ()
    colour: str | None = None  # a column: one series per value
    mark_colour: str | None = None  # a colour name or hex for every mark
    #: Bars: more category columns whose values complete x's in each bar's label, so that
    #: rows x alone cannot tell apart are bars of their own ("Frank Harris", "Frank Ralston").
    labels: tuple[str, ...] = ()


def choose(table: Table, *, kind: str | None = None, x: str | None = None,
           y: str | list[str] | tuple[str, ...] | None = None,
           colour: str | None = None) -> ChartSpec:
    """The chart for ``table``; the caller's choices first, the rules for the rest."""
    if kind is not None and kind not in KINDS:
        raise ChartError(f"Unknown chart kind '{kind}'; use one of {', '.join(KINDS)} (or omit "
                         f"it to choose from the result's shape).")
    ys = [y] if isinstance(y, str) else list(y or [])
    x_col = table.column(x) if x else None
    y_cols = [table.column(name) for name in ys]
    for column in y_cols:
        if column.kind != "measure" and kind != "card":
            raise ChartError(f"y must be a numeric column: '{column.name}' is {column.kind} "
                             f"in {table.name}.")
    colour_col, mark_colour = _colour(table, colour)
    if table.rows_read == 0:
        return ChartSpec(None, f"{table.name} has no rows.")
    if kind is None and x_col is None and not y_cols:
        spec = _by_shape(table)
    else:
        spec = _with_choices(table, kind, x_col, y_cols)
    if spec.kind is None:
        return spec
    series = colour_col.name if colour_col is not None else spec.colour
    return ChartSpec(spec.kind, phrase(spec.kind, spec.x, spec.y, series, spec.labels), spec.x,
                     spec.y, series, mark_colour, spec.labels)


def phrase(kind: str, x: str | None, ys: tuple[str, ...], colour: str | None,
           labels: tuple[str, ...] = ()) -> str:
    """What a chart shows, in words: "tracks per genre", "revenue over month by country",
    "spent per FirstName and LastName"."""
    shown = ", ".join(ys)
    if kind == "card" or x is None:
        return shown
    joiner = {"line": "over", "scatter": "against"}.get(kind, "per")
    return f"{shown} {joiner} {joined((x, *labels))}" + (f" by {colour}" if colour else "")


def joined(names: tuple[str, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _by_shape(table: Table) -> ChartSpec:
    measures = table.of_kind("measure")
    times = table.of_kind("temporal")
    categories = table.of_kind("category")
    if not measures:
        return ChartSpec(None, f"no numeric column to plot: {_kinds(table)}.")
    if table.rows_read == 1:
        return _card(table, measures)
    if times:
        return _line(table, times[0], measures, categories)
    labels = _label_columns(table, categories[0]) if categories else ()
    if len(measures) == 2 and not _names_each_row(table, categories, labels):
        few = [c for c in categories if len(set(c.present())) <= SCATTER_COLOURS_MAX]
        return ChartSpec("scatter", "", measures[0].name, (measures[1].name,),
                         few[0].name if few else None)
    if categories:
        return ChartSpec("bar", "", categories[0].name, (measures[0].name,), labels=labels)
    if len(measures) == 1:
        return ChartSpec(None, f"one numeric column ({measures[0].name}) and no date or "
                               f"category column to plot it against: {_kinds(table)}.")
    return ChartSpec(None, f"{len(measures)} numeric columns and no date or category column "
                           f"to plot them against; pass x and y to choose two.")


def _with_choices(table: Table, kind: str | None, x: Column | None,
                  ys: list[Column]) -> ChartSpec:
    measures = [c for c in table.of_kind("measure") if x is None or c.name != x.name]
    if kind is None:  # x or y given: the shape decides the kind around them
        axis = x.kind if x is not None else None
        if axis == "temporal" or (axis is None and table.of_kind("temporal")):
            kind = "line"
        elif axis == "measure":
            kind = "scatter"
        elif table.rows_read == 1 and x is None:
            kind = "card"
        else:
            kind = "bar"
    if kind == "card":
        return _card(table, ys or measures)
    if not ys:
        if not measures:
            raise ChartError(f"No numeric column to plot as y in {table.name}: "
                             f"{_kinds(table)}.")
        ys = measures[:1] if kind != "line" else measures[:LINES_MAX]
        if kind == "scatter" and x is None:
            ys = measures[1:2]
    labels: tuple[str, ...] = ()
    if x is None:
        x = _default_x(table, kind, ys)
        if kind == "bar" and x.kind == "category":
            labels = _label_columns(table, x)
    return ChartSpec(kind, "", x.name, tuple(c.name for c in ys),  # type: ignore[arg-type]
                     labels=labels)


def _names_each_row(table: Table, categories: list[Column], labels: tuple[str, ...]) -> bool:
    """The table's first column is a category that, alone or with the next ones (``labels``,
    its ``_label_columns``: first and last name), names each of at most as many rows as the
    bars show whole: an aggregate per category (``status, orders, revenue``), whose numbers
    read as bars, not as a scatter of a few unlabelled points."""
    first = table.columns[0] if table.columns else None
    if first is None or not categories or first is not categories[0]:
        return False
    present = first.present()
    if not len(present) == table.rows_read <= TOP_BARS + 1:
        return False
    return len(set(present)) == len(present) or bool(labels)


def _label_columns(table: Table, first: Column) -> tuple[str, ...]:
    """The category columns after ``first`` that, joined to it, make each row's label its
    own, when ``first`` repeats a little: 'Frank' of Frank Harris and Frank Ralston gets a
    bar each, not one bar of their sum. None (``()``) when ``first`` does not repeat, when no
    such columns tell its rows apart, or when it repeats so much (as many distinct values as
    half the rows or fewer: genre of a genre x country result) that it is a dimension to sum
    over."""
    present = [v for v in first.values if v is not None]
    distinct = len(set(present))
    if distinct == len(present) or distinct * 2 <= len(present):
        return ()
    others = [c for c in table.of_kind("category") if c is not first]
    keys: list[tuple[object, ...]] = [(v,) for v in first.values]
    for count, column in enumerate(others[:LABEL_COLUMNS_MAX - 1], 1):
        keys = [key + (v,) for key, v in zip(keys, column.values)]
        shown = [key for key in keys if key[0] is not None]
        if len(set(shown)) == len(shown):
            return tuple(c.name for c in others[:count])
    return ()


def _default_x(table: Table, kind: str, ys: list[Column]) -> Column:
    taken = {c.name for c in ys}
    order = {"line": ("temporal", "measure", "category"), "bar": ("category", "temporal"),
             "scatter": ("measure",)}[kind]
    for wanted in order:
        for column in table.columns:
            if column.kind == wanted and column.name not in taken:
                return column
    raise ChartError(f"No column for the x axis of a {kind} chart in {table.name}: "
                     f"{_kinds(table)}; pass x.")


def _card(table: Table, measures: list[Column]) -> ChartSpec:
    if len(measures) > CARD_MAX:
        return ChartSpec(None, f"one row of {len(measures)} numbers: more than a card shows "
                               f"({CARD_MAX}); pass y to choose them.")
    if not measures:
        raise ChartError(f"A card shows numbers and {table.name} has none: {_kinds(table)}.")
    label = next(iter(table.of_kind("category")), None)
    return ChartSpec("card", "", label.name if label else None,
                     tuple(c.name for c in measures))


def _line(table: Table, time: Column, measures: list[Column],
          categories: list[Column]) -> ChartSpec:
    if len(measures) == 1 and categories:
        return ChartSpec("line", "", time.name, (measures[0].name,), categories[0].name)
    shown = measures[:LINES_MAX]
    return ChartSpec("line", "", time.name, tuple(c.name for c in shown))


def _colour(table: Table, colour: str | None) -> tuple[Column | None, str | None]:
    if not colour:
        return None, None
    try:
        column = table.column(colour)
    except ChartError:
        return None, colour  # not a column: a colour for the marks (the renderer checks it)
    if column.kind not in ("category", "temporal"):
        raise ChartError(f"colour must name a category column (one series per value): "
                         f"'{column.name}' is {column.kind}.")
    return column, None


def _kinds(table: Table) -> str:
    """``"Name is text, Composer is category"``, every column with its kind."""
    words = {"text": "text", "category": "text (a category)", "empty": "empty",
             "temporal": "a date", "measure": "a number"}
    return ", ".join(f"{c.name} is {words[c.kind]}" for c in table.columns) or "no columns"
