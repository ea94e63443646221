"""Drawing a ``Plot`` as PNG or SVG with matplotlib's Agg and SVG backends: in-process, no
display, no browser, no network.

Imported only when a chart is drawn (``nl2sql.charts.chart``): matplotlib costs ~0.4 s to
import, which neither ``import nl2sql`` nor the MCP server's start-up pays. The figure is a
plain ``matplotlib.figure.Figure`` (never pyplot: no global state, safe in threads), its size
exactly ``width`` x ``height`` pixels; one drawing at a time (matplotlib's style settings
are global). SVG keeps text as ``<text>`` elements (searchable,
smaller) and carries no date, so the same chart gives the same bytes.
"""

from __future__ import annotations

import io
import threading
from datetime import datetime, time
from typing import Literal

import matplotlib
from matplotlib.colors import is_color_like
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, DateFormatter, YearLocator
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from nl2sql._helpers import shorten
from nl2sql.charts.data import Plot
from nl2sql.charts.labels import AxisTitle
from nl2sql.errors import ChartError

Format = Literal["png", "svg"]
DPI = 100
_STYLE = {"svg.fonttype": "none", "svg.hashsalt": "nl2sql", "font.size": 10,
          "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True,
          "grid.alpha": 0.3, "axes.titlesize": 12, "axes.titleweight": "bold"}
_NOTE_COLOUR = "#666666"
_DRAWING = threading.Lock()
BAR_LABELS_MAX = 30  # bars with their category and value written; past that, every n-th name


def render(plot: Plot, titles: dict[str, AxisTitle], title: str, *, fmt: Format,
           width: int, height: int) -> bytes:
    """The chart as PNG or SVG bytes, ``width`` x ``height`` pixels."""
    colour = plot.spec.mark_colour
    if colour is not None and not is_color_like(colour):
        raise ChartError(f"colour '{colour}' is neither a column of the result nor a colour "
                         f"name or #rrggbb value.")
    # rc_context sets matplotlib's global rcParams and restores them after: one drawing at a
    # time, or concurrent charts (MCP calls run in worker threads) would restore each other's.
    with _DRAWING, matplotlib.rc_context(_STYLE):
        figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, layout="constrained")
        draw = {"line": _line, "bar": _bar, "scatter": _scatter, "card": _card}
        draw[plot.spec.kind or ""](figure, plot, titles, title, colour)
        if plot.notes:
            figure.get_layout_engine().set(h_pad=0.1)  # type: ignore[union-attr]
            figure.supxlabel("; ".join(plot.notes), fontsize=8, color=_NOTE_COLOUR)
        out = io.BytesIO()
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        figure.savefig(out, format=fmt, dpi=DPI, metadata=metadata)
    return out.getvalue()


def _number(value: float, _position: object = None) -> str:
    """A tick or bar label: whole from 1,000 up, else to two decimals."""
    return f"{value:,.0f}" if abs(value) >= 1000 else _exact(value)


def _exact(value: float) -> str:
    """A card's number as it is, to two decimals: 1,200.5 (not the axis' 1,200)."""
    return f"{value:,.2f}".rstrip("0").rstrip(".") if value % 1 else f"{value:,.0f}"


def _numbers_axis(axis, values: list[object]) -> None:  # type: ignore[no-untyped-def]
    """A value axis: its numbers written as ``_number`` does, and only whole ticks when every
    value is whole (counts: no tick at 2.5)."""
    axis.set_major_formatter(FuncFormatter(_number))
    if values and all(isinstance(v, (int, float)) and float(v).is_integer() for v in values):
        axis.set_major_locator(MaxNLocator(integer=True))


def _axes(figure: Figure, plot: Plot, titles: dict[str, AxisTitle], title: str):
    ax = figure.add_subplot()
    ax.set_title(title, loc="left")
    x = plot.spec.x or ""
    ax.set_xlabel(titles.get(x, AxisTitle(x)).text())
    if len(plot.spec.y) == 1:
        y = plot.spec.y[0]
        ax.set_ylabel(titles.get(y, AxisTitle(y)).text())
    return ax


def _legend(ax, plot: Plot) -> None:  # type: ignore[no-untyped-def]
    if any(s.label for s in plot.series):  # beside the plot, never over the lines
        ax.legend(fontsize=8, title=plot.spec.colour, title_fontsize=8, frameon=False,
                  loc="upper left", bbox_to_anchor=(1.01, 1))


def _line(figure: Figure, plot: Plot, titles: dict[str, AxisTitle], title: str,
          colour: str | None) -> None:
    ax = _axes(figure, plot, titles, title)
    for series in plot.series:
        marker = "o" if len(series.x) <= 40 else None
        ax.plot(series.x, series.y, marker=marker, markersize=3, linewidth=1.6,
                label=series.label, color=colour)
    xs = [v for series in plot.series for v in series.x]
    if xs and isinstance(xs[0], datetime):
        if all((v.month, v.day, v.time()) == (1, 1, time()) for v in xs):  # years
            locator = YearLocator(base=max(1, (xs[-1].year - xs[0].year) // 10 + 1))
            formatter = DateFormatter("%Y")
        else:
            locator = AutoDateLocator()
            formatter = ConciseDateFormatter(locator)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(formatter)
    if all(v >= 0 for series in plot.series for v in series.y):
        ax.set_ylim(bottom=0)  # amounts start at zero: a dip of 7 to 6 is not a crash
    _numbers_axis(ax.yaxis, [v for series in plot.series for v in series.y])
    _legend(ax, plot)


def _bar(figure: Figure, plot: Plot, titles: dict[str, AxisTitle], title: str,
         colour: str | None) -> None:
    ax = figure.add_subplot()
    ax.set_title(title, loc="left")
    x, ys = plot.spec.x or "", plot.spec.y
    labels = [str(v) for v in plot.series[0].x] if plot.series else []
    positions = list(range(len(labels)))[::-1]  # largest at the top
    height = 0.8 / max(len(plot.series), 1)
    for i, series in enumerate(plot.series):
        shifted = [p + 0.4 - height * (i + 0.5) for p in positions]
        bars = ax.barh(shifted, series.y, height=height * 0.9, label=series.label,
                       color=colour)
        if len(labels) <= BAR_LABELS_MAX:
            ax.bar_label(bars, labels=[_number(v) for v in series.y], padding=2, fontsize=7)
    step = -(-len(labels) // BAR_LABELS_MAX)  # every label up to 30 bars, then every step-th
    ax.set_yticks(positions, [shorten(label, 28) if i % step == 0 else ""
                              for i, label in enumerate(labels)], fontsize=8)
    ax.set_ylabel(", ".join(titles.get(name, AxisTitle(name)).text()
                            for name in (x, *plot.spec.labels)))
    if len(ys) == 1:
        ax.set_xlabel(titles.get(ys[0], AxisTitle(ys[0])).text())
    _numbers_axis(ax.xaxis, [v for series in plot.series for v in series.y])
    ax.grid(axis="y", visible=False)
    _legend(ax, plot)


def _scatter(figure: Figure, plot: Plot, titles: dict[str, AxisTitle], title: str,
             colour: str | None) -> None:
    ax = _axes(figure, plot, titles, title)
    points = sum(len(s.x) for s in plot.series)
    size, alpha = (14, 0.8) if points <= 1000 else (4, 0.35)
    for series in plot.series:
        ax.scatter(series.x, series.y, s=size, alpha=alpha, label=series.label, color=colour,
                   linewidths=0)
    xs = [v for series in plot.series for v in series.x]
    if all(isinstance(v, float) for v in xs):
        _numbers_axis(ax.xaxis, xs)  # not for dates or labels
    _numbers_axis(ax.yaxis, [v for series in plot.series for v in series.y])
    _legend(ax, plot)


def _card(figure: Figure, plot: Plot, titles: dict[str, AxisTitle], title: str,
          colour: str | None) -> None:
    figure.suptitle(title, x=0.02, ha="left", fontsize=12, fontweight="bold")
    count = len(plot.series)
    for i, series in enumerate(plot.series):
        centre = (i + 0.5) / count
        value = series.y[0] if series.y else None
        text = "–" if value is None else _exact(value) if isinstance(value, float) else \
            str(value)
        figure.text(centre, 0.55, text, ha="center", va="center", fontweight="bold",
                    fontsize=min(48, 160 / count), color=colour or "#1f4e79")
        label = titles.get(series.label or "", AxisTitle(series.label or "")).text()
        figure.text(centre, 0.3, shorten(label, 40), ha="center", va="center", fontsize=11,
                    color="#333333")
    if plot.card_label:
        figure.text(0.5, 0.15, shorten(plot.card_label, 60), ha="center", fontsize=10,
                    color=_NOTE_COLOUR)
