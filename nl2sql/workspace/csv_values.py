"""A result file read back as values, for comparing results (``result_compare``): the inverse
of ``csv_dialect.format_value`` as far as the text tells.

- An empty unquoted field is NULL (``None``), a quoted empty field ``""`` the empty string, and
  an empty line of a one-column result a NULL row.
- A field in a form the dialect writes numbers in (integers and decimals as plain digits, a
  float's shortest digits, ``1e-05``, ``Infinity``, ``-Infinity``, ``NaN``) is that number, as
  the float the comparison rules compare every number as (``normalize``): ``12.50`` (a MySQL
  DECIMAL, a PostgreSQL numeric), ``12.5`` (a float) and ``12.5000`` are the same number,
  whatever column they came from.
- Anything else is its text, exactly: ``007``, ``+7``, `` 7``, ``true`` and ``t`` are text
  (no number is written so), and dates and times are their ISO text, as the comparison rules
  compare them.

The file does not say a column's type, so a text column's value spelled as a number (a
``VARCHAR`` holding ``12.5``, SQLite's ``strftime('%Y', ...)``) reads as that number, and a
boolean (``t``/``f``) as text.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import IO, Any

from nl2sql.workspace import csv_dialect  # noqa: F401  (raises the csv field size limit)

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-][0-9]+)?|-?Infinity|NaN")


def parse_field(text: str) -> Any:
    """The value a non-empty field's text stands for: a number written as the dialect writes
    numbers is that number (a float, as ``normalize`` makes a Decimal or an int), anything else
    is the text itself."""
    return float(text) if _NUMBER.fullmatch(text) else text


def read_values(csv_path: Path, max_rows: int) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The header and the first ``max_rows`` rows of a result file, as values (see above)."""
    with open(csv_path, encoding="utf-8", newline="") as handle:
        lines = _Lines(handle)
        reader = csv.reader(lines)
        header = next(reader, None)
        if header is None:
            return [], []
        width = len(header)
        rows: list[tuple[Any, ...]] = []
        lines.record.clear()
        for fields in islice(reader, max_rows):
            if not fields:  # a one-column NULL is an empty line (a no-column row too)
                rows.append((None,) * width)
            elif "" in fields:
                quoted = _quoted("".join(lines.record))
                rows.append(tuple(("" if quoted[i] else None) if text == "" else parse_field(text)
                                  for i, text in enumerate(fields)))
            else:
                rows.append(tuple(map(parse_field, fields)))
            lines.record.clear()
        return header, rows


class _Lines:
    """The file's lines, keeping those of the record ``csv.reader`` is reading (it reads a
    record's lines only, never ahead), so a record holding an empty field can be looked at
    again for its quotes."""

    def __init__(self, handle: IO[str]) -> None:
        self.handle = handle
        self.record: list[str] = []

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        line = next(self.handle)
        self.record.append(line)
        return line


def _quoted(record: str) -> list[bool]:
    """For each field of one record's text, whether it is written between quotes (what
    ``csv.reader`` does not say before Python 3.12's ``QUOTE_NOTNULL``; 3.11 is supported)."""
    text = record[:-1] if record.endswith("\n") else record
    flags: list[bool] = []
    at = 0
    while True:
        if text.startswith('"', at):
            flags.append(True)
            at += 1
            while True:  # to the closing quote; a doubled quote is a quote inside
                at = text.index('"', at) + 1
                if not text.startswith('"', at):
                    break
                at += 1
        else:
            flags.append(False)
        comma = text.find(",", at)
        if comma < 0:
            return flags
        at = comma + 1
