"""The rows a chart is drawn from: at most ``max_rows`` of a result CSV, streamed, each column
typed by what its values look like.

A column's kind decides which charts it can take part in:

- ``temporal``: every value is an ISO date or timestamp (``2024-01-31``, ``2024-01-31 13:45``),
  a month (``2024-01``), or a whole number 1000-2999 in a column whose name says "year";
- ``measure``: every value is a number, and the name is not an identifier's (``id``,
  ``CustomerId``, ``customer_id``);
- ``category``: short text, or an identifier (drawn as labels, never summed);
- ``text``: long text (over ``TEXT_CHARS`` characters on average), which no chart shows;
- ``empty``: no values at all.

The file is read with the ``csv`` module, row by row; reading stops at ``max_rows`` (the row
cap, ``NL2SQL_CHART_MAX_ROWS``), so a 3-million-row result costs what its first rows cost.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
from itertools import islice
from pathlib import Path
from typing import Literal

from nl2sql.errors import ChartError, ConfigError, WorkspaceFileError, did_you_mean
from nl2sql.workspace import column_types
from nl2sql.workspace.csv_dialect import (  # importing it raises the csv field limit
    ISO_DATETIME, LEADING_ZERO)
from nl2sql.workspace.results import types_beside

ColumnKind = Literal["temporal", "measure", "category", "text", "empty"]
Value = float | datetime | str | None

#: Environment variable: the most rows of a result a chart reads.
ENV_CHART_MAX_ROWS = "NL2SQL_CHART_MAX_ROWS"
DEFAULT_CHART_MAX_ROWS = 50_000
#: Average characters above which a text column is free text rather than a category.
TEXT_CHARS = 60

_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
_KEY_NAME = re.compile(r"(^id$|[a-z0-9]Id$|ID$|_id$)")
_YEAR_NAME = re.compile(r"year", re.IGNORECASE)


def chart_max_rows() -> int:
    """The row cap from ``NL2SQL_CHART_MAX_ROWS`` (default 50,000)."""
    raw = os.environ.get(ENV_CHART_MAX_ROWS)
    if not raw:
        return DEFAULT_CHART_MAX_ROWS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(f"{ENV_CHART_MAX_ROWS} must be a positive number of rows, not '{raw}'.")
    return value


@dataclass
class Column:
    name: str
    kind: ColumnKind
    values: list[Value]  # floats, datetimes or strings by kind; None where the cell is empty

    def present(self) -> list[Value]:
        return [v for v in self.values if v is not None]


@dataclass
class Table:
    """The first rows of a result, typed; ``total_rows`` from the metadata when known."""

    name: str
    columns: list[Column]
    rows_read: int
    capped: bool  # stopped at the row cap with rows left in the file
    total_rows: int | None = None
    notes: list[str] = field(default_factory=list)

    def column(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        for column in self.columns:  # SQL names are case-insensitive: so is the lookup
            if column.name.lower() == name.lower():
                return column
        names = [c.name for c in self.columns]
        raise ChartError(f"{self.name} has no column '{name}'; "
                         f"{did_you_mean(name, names, capitalize=True)}"
                         f"its columns are {', '.join(names)}.")

    def of_kind(self, *kinds: ColumnKind) -> list[Column]:
        return [c for c in self.columns if c.kind in kinds]

    def read_note(self) -> str | None:
        """"first 50,000 of 3,000,000 rows, the row cap NL2SQL_CHART_MAX_ROWS", when the cap
        cut the file."""
        if not self.capped:
            return None
        total = f" of {self.total_rows:,}" if self.total_rows else ""
        return f"first {self.rows_read:,}{total} rows, the row cap {ENV_CHART_MAX_ROWS}"


def read_table(path: Path, *, max_rows: int | None = None, total_rows: int | None = None,
               name: str | None = None) -> Table:
    """The header and at most ``max_rows`` rows of the CSV at ``path``, typed by column (and
    by the column types its metadata records, when it does)."""
    cap = chart_max_rows() if max_rows is None else max_rows
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            header = next(reader, [])
            cells: list[list[str]] = [[] for _ in header]
            rows = 0
            for row in islice(reader, cap):
                rows += 1
                for i, column in enumerate(cells):
                    column.append(row[i] if i < len(row) else "")
            capped = rows == cap and next(reader, None) is not None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise WorkspaceFileError(f"Cannot read {path.name} as CSV ({exc}); charts are drawn "
                                 f"from the result files db_execute_sql writes.") from None
    types, zone = types_beside(path, len(header))
    columns = [typed_column(header[i], cells[i], types[i], zone) for i in range(len(header))]
    return Table(name or path.name, columns, rows, capped, total_rows)


def typed_column(name: str, cells: list[str], column_type: str | None = None,
                 zone: tzinfo | None = None) -> Column:
    """``cells`` (CSV text, '' for NULL) as values of the column's kind; a column the database
    typed as text or bytes is never a measure, however numeric it looks (a zip code).
    ``zone``: the time zone the database wrote timestamps with offsets in."""
    present = [c for c in cells if c != ""]
    if not present:
        return Column(name, "empty", [None] * len(cells))
    numbers = None if column_type in (column_types.TEXT, column_types.BINARY) \
        else _numbers(cells)
    if numbers is not None:
        if _YEAR_NAME.search(name) and all(v is not None and v.is_integer() and 1000 <= v < 3000
                                           for v in numbers if v is not None):
            return Column(name, "temporal", [None if v is None else datetime(int(v), 1, 1)
                                             for v in numbers])
        if _KEY_NAME.search(name):
            return Column(name, "category", [c or None for c in cells])
        return Column(name, "measure", list(numbers))
    dates = _dates(cells, zone)
    if dates is not None:
        return Column(name, "temporal", dates)
    average = sum(len(c) for c in present) / len(present)
    return Column(name, "text" if average > TEXT_CHARS else "category", [c or None for c in cells])


def _numbers(cells: list[str]) -> list[float | None] | None:
    values: list[float | None] = []
    for cell in cells:
        if cell == "":
            values.append(None)
            continue
        if LEADING_ZERO.match(cell):  # text such as a zip code: a category, not a measure
            return None
        try:
            value = float(cell)
        except ValueError:
            return None
        values.append(value if value == value and abs(value) != float("inf") else None)
    return values


def _dates(cells: list[str], zone: tzinfo | None = None) -> list[Value] | None:
    values: list[Value] = []
    for cell in cells:
        if cell == "":
            values.append(None)
        elif _MONTH.match(cell):
            values.append(datetime(int(cell[:4]), int(cell[5:7]), 1))
        elif ISO_DATETIME.fullmatch(cell):
            try:
                value = datetime.fromisoformat(cell)
            except ValueError:
                return None
            if value.tzinfo is not None:  # one axis: every instant in the database's zone
                value = value.astimezone(zone or timezone.utc).replace(tzinfo=None)  # or UTC
            values.append(value)
        else:
            return None
    return values
