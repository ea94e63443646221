"""``Chart``: a result drawn as the chart its shape calls for; ``chart_csv`` makes one.

A ``Chart`` shows itself in Jupyter (a PNG, made in-process: nothing to fetch, so it shows
offline), saves as PNG or SVG (``save(path)``), and says in one line what it shows
(``describe()``), including what was cut or summed. When a result does not chart, the object
says why (``kind`` is None, ``reason``) and ``save`` raises ``ChartError`` with that reason.
"""

from __future__ import annotations

from pathlib import Path

from nl2sql.charts.data import Plot, plot_data
from nl2sql.charts.labels import AxisTitle, axis_titles
from nl2sql.charts.rules import ChartSpec, choose
from nl2sql.charts.table import read_table
from nl2sql.errors import ChartError
from nl2sql.schema.models import DbInfo

WIDTH, HEIGHT = 800, 450
_FORMATS = {".png": "png", ".svg": "svg"}


class Chart:
    """A chart of a result file (or the reason there is none)."""

    def __init__(self, spec: ChartSpec, plot: Plot | None, titles: dict[str, AxisTitle],
                 title: str, *, width: int = WIDTH, height: int = HEIGHT) -> None:
        self.spec = spec
        self.plot = plot
        self.titles = titles
        self.title = title
        self.width = width
        self.height = height

    @property
    def kind(self) -> str | None:
        """``"line"``, ``"bar"``, ``"scatter"``, ``"card"``, or None: no chart."""
        return self.spec.kind

    @property
    def reason(self) -> str:
        """Why this chart was chosen, or why there is none."""
        return self.spec.reason

    @property
    def notes(self) -> list[str]:
        """What the picture leaves out or sums (row cap, top categories, summed rows)."""
        return self.plot.notes if self.plot else []

    def describe(self) -> str:
        """One line: ``Bar chart of tracks per genre (the 12 largest of 25 genre values; ...).``"""
        if self.kind is None:
            return f"No chart: {self.reason}"
        notes = f" ({'; '.join(self.notes)})" if self.notes else ""
        return f"{self.kind.capitalize()} chart: {self.reason}{notes}."

    def png(self) -> bytes:
        return self._render("png")

    def svg(self) -> str:
        return self._render("svg").decode("utf-8")

    def save(self, path: str | Path) -> Path:
        """Write the chart to ``path``; ``.png`` or ``.svg`` decides the format."""
        target = Path(path)
        fmt = _FORMATS.get(target.suffix.lower())
        if fmt is None:
            raise ChartError(f"Cannot save a chart as '{target.name}': use a file name ending "
                             f"in .png or .svg.")
        data = self._render(fmt)
        target.write_bytes(data)
        return target

    def _render(self, fmt: str) -> bytes:
        if self.plot is None:
            raise ChartError(f"No chart: {self.reason}")
        from nl2sql.charts.render import render  # matplotlib: only when a chart is drawn

        return render(self.plot, self.titles, self.title, fmt=fmt,  # type: ignore[arg-type]
                      width=self.width, height=self.height)

    def _repr_png_(self) -> bytes | None:
        return None if self.plot is None else self.png()

    def __repr__(self) -> str:
        return self.describe()


def chart_csv(path: str | Path, *, kind: str | None = None, x: str | None = None,
              y: str | list[str] | None = None, colour: str | None = None,
              title: str | None = None, sql: str | None = None, db_info: DbInfo | None = None,
              dialect: str | None = None, total_rows: int | None = None,
              max_rows: int | None = None, width: int = WIDTH, height: int = HEIGHT) -> Chart:
    """The chart for the result CSV at ``path``: the kind its shape calls for unless ``kind``,
    ``x``, ``y`` or ``colour`` say otherwise; axis titles from ``sql``'s source columns in
    ``db_info``. Reads at most ``max_rows`` rows (default ``NL2SQL_CHART_MAX_ROWS``)."""
    if width < 100 or height < 100:
        raise ChartError(f"A chart needs at least 100 x 100 pixels, not {width} x {height}.")
    table = read_table(Path(path), max_rows=max_rows, total_rows=total_rows)
    spec = choose(table, kind=kind, x=x, y=y, colour=colour)
    titles = axis_titles([c.name for c in table.columns], sql, db_info, dialect)
    if spec.kind is None:
        return Chart(spec, None, titles, title or table.name, width=width, height=height)
    plot = plot_data(spec, table)
    return Chart(spec, plot, titles, title or spec.reason, width=width, height=height)

