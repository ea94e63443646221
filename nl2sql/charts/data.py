"""The points a chart draws, from a ``ChartSpec`` and the rows read (``Table``), with notes
saying what was summed, cut or left out, so a picture never hides how it was made.

- line: one series per y column, or per value of the colour column (the ``SERIES_MAX`` largest
  by total); points sorted by x; several rows at one x are summed;
- bar: the y value per category, summed over repeated categories, largest first; past
  ``TOP_BARS`` categories the rest are summed into one "other" bar (an x of dates keeps its
  order and is not cut); with ``labels``, a category is each row's x and label columns
  together ("Frank Harris");
- scatter: one point per row (per colour value when a colour column is given);
- card: the first row's numbers, labelled by its category when it has one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from nl2sql._helpers import plural
from nl2sql.charts.rules import TOP_BARS, ChartSpec, joined
from nl2sql.charts.table import Table, Value

SERIES_MAX = 8
OTHER = "other"


@dataclass
class Series:
    label: str | None
    x: list[Value]
    y: list[float]


@dataclass
class Plot:
    spec: ChartSpec
    series: list[Series]
    notes: list[str] = field(default_factory=list)
    card_label: str | None = None


def plot_data(spec: ChartSpec, table: Table) -> Plot:
    """The series to draw for ``spec`` (which must name a kind)."""
    build = {"line": _line, "bar": _bar, "scatter": _scatter, "card": _card}[spec.kind or ""]
    plot = build(spec, table)
    read = table.read_note()
    if read:
        plot.notes.insert(0, read)
    return plot


def _rows(table: Table, *names: str) -> list[tuple[Value, ...]]:
    """The rows' values of ``names``, skipping rows where any of them is empty."""
    columns = [table.column(n).values for n in names]
    return [row for row in zip(*columns) if all(v is not None for v in row)]


def _label(value: Value) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d" if value.time() == datetime.min.time()
                              else "%Y-%m-%d %H:%M")
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _summed(pairs: list[tuple[Value, ...]]) -> tuple[dict[Value, float], bool]:
    """``x -> sum of y`` in first-seen order, and whether any x repeated."""
    sums: dict[Value, float] = {}
    repeated = False
    for x, y in pairs:
        repeated = repeated or x in sums
        sums[x] = sums.get(x, 0.0) + float(y)  # type: ignore[arg-type]
    return sums, repeated


def _line(spec: ChartSpec, table: Table) -> Plot:
    plot = Plot(spec, [])
    x = spec.x or ""
    if spec.colour:
        y = spec.y[0]
        groups: dict[Value, list[tuple[Value, ...]]] = defaultdict(list)
        for xv, yv, cv in _rows(table, x, y, spec.colour):
            groups[cv].append((xv, yv))
        ranked = sorted(groups, key=lambda g: -sum(abs(float(v)) for _, v in groups[g]))
        if len(ranked) > SERIES_MAX:
            plot.notes.append(f"the {SERIES_MAX} largest of {len(ranked)} {spec.colour} values "
                              f"by total {y}")
        named = [(_label(g), groups[g]) for g in ranked[:SERIES_MAX]]
    else:
        named = [(name, _rows(table, x, name)) for name in spec.y]
    summed_any = False
    for label, pairs in named:
        sums, repeated = _summed(pairs)
        summed_any = summed_any or repeated
        points = sorted(sums.items(), key=lambda item: item[0])
        plot.series.append(Series(label if len(named) > 1 or spec.colour else None,
                                  [p[0] for p in points], [p[1] for p in points]))
    if summed_any:
        plot.notes.append(f"rows with the same {x} summed")
    return plot


def _bar_rows(spec: ChartSpec, table: Table, y: str) -> list[tuple[Value, ...]]:
    """``(category, y)`` of each row with both; with ``spec.labels`` the category is the
    row's x and label columns' values in one label ("Frank Harris")."""
    if not spec.labels:
        return _rows(table, spec.x or "", y)
    parts = [table.column(name).values for name in spec.labels]
    return [(" ".join(_label(v) for v in (xv, *more) if v is not None), yv)
            for xv, yv, *more in zip(table.column(spec.x or "").values,
                                     table.column(y).values, *parts)
            if xv is not None and yv is not None]


def _bar(spec: ChartSpec, table: Table) -> Plot:
    plot = Plot(spec, [])
    x = joined((spec.x or "", *spec.labels))
    per_y = [_summed(_bar_rows(spec, table, name)) for name in spec.y]
    first, _ = per_y[0]
    if any(repeated for _, repeated in per_y):
        plot.notes.append(f"{' and '.join(spec.y)} summed per {x}")
    keys = list(first)
    if table.column(spec.x or "").kind == "temporal":
        keys.sort()  # type: ignore[arg-type]
        cut: list[Value] = []
    else:
        keys.sort(key=lambda k: -first[k])
        if len(keys) > TOP_BARS + 1:
            keys, cut = keys[:TOP_BARS], keys[TOP_BARS:]
            plot.notes.append(f"the {TOP_BARS} largest of {len(keys) + len(cut)} {x} values; "
                              f"{plural(len(cut), 'other')} summed as '{OTHER}'")
        else:
            cut = []
    for name, (sums, _) in zip(spec.y, per_y):
        labels = [_label(k) for k in keys]
        values = [sums.get(k, 0.0) for k in keys]
        if cut:
            labels.append(OTHER)
            values.append(sum(sums.get(k, 0.0) for k in cut))
        plot.series.append(Series(name if len(spec.y) > 1 else None, labels, values))
    return plot


def _scatter(spec: ChartSpec, table: Table) -> Plot:
    plot = Plot(spec, [])
    x, y = spec.x or "", spec.y[0]
    if spec.colour:
        groups: dict[Value, list[tuple[Value, ...]]] = defaultdict(list)
        for xv, yv, cv in _rows(table, x, y, spec.colour):
            groups[cv].append((xv, yv))
        for value, pairs in list(groups.items())[:SERIES_MAX]:
            plot.series.append(Series(_label(value), [p[0] for p in pairs],
                                      [float(p[1]) for p in pairs]))  # type: ignore[arg-type]
        if len(groups) > SERIES_MAX:
            plot.notes.append(f"the first {SERIES_MAX} of {len(groups)} {spec.colour} values")
    else:
        pairs = _rows(table, x, y)
        plot.series.append(Series(None, [p[0] for p in pairs], [float(p[1]) for p in pairs]))
    return plot


def _card(spec: ChartSpec, table: Table) -> Plot:
    values = [table.column(name).values[0] for name in spec.y]
    label = table.column(spec.x).values[0] if spec.x else None
    if table.rows_read > 1:
        note = [f"the first of {plural(table.total_rows or table.rows_read, 'row')}"]
    else:
        note = []
    return Plot(spec, [Series(name, [], [v]) for name, v in zip(spec.y, values)],
                note, None if label is None else _label(label))
