"""The one CSV dialect every result file is written in, whatever the backend or export path.

The reference is PostgreSQL's ``COPY ... TO STDOUT WITH (FORMAT csv, HEADER true)``, which the
Postgres backend streams as it is; every other path (Python rows from any driver, and a later
Arrow-based export) must write the same bytes for the same values:

- UTF-8, no BOM; records end with ``\\n``; fields are separated by ``,``; the first record is
  the header (column names, quoted by the same rule as values).
- Quoting is minimal: a field is written between ``"`` only when it contains ``,``, ``"``,
  ``\\n`` or ``\\r``, or is the empty string; ``"`` inside is doubled. A one-column value
  ``\\.`` is quoted too (as COPY does, so it is never read as an end-of-data marker).
- **NULL is an empty, unquoted field; the empty string is ``""``.** A one-column NULL is an
  empty line. (Arrow's C++ CSV writer follows the same rule, which lets an Arrow path match.)
- Booleans: ``t`` / ``f`` (what PostgreSQL writes).
- Integers and decimals: plain digits (decimals in fixed-point notation), never with a leading
  zero, so a field such as ``007`` is text (``LEADING_ZERO``; every number's form: ``NUMBER``).
  Floats: the shortest digits that read back to the same value, laid out as PostgreSQL 12+
  writes ``float8``: fixed-point when the decimal exponent is from -4 to 14 and without a
  trailing ``.0`` (``1``, ``0.25``, ``-0``, ``123456789012345.6``), else ``1e+15``,
  ``1.5e-07``; and ``Infinity``, ``-Infinity``, ``NaN``.
- Binary values: ``\\x`` followed by lowercase hex (PostgreSQL's ``bytea`` hex output).
- JSON values (dicts and lists from a driver): JSON text, ``{"a": 1, "b": [true, null]}``
  (PostgreSQL's ``jsonb`` spacing); JSON/JSONB columns streamed by COPY are the server's text.
- Dates, times and timestamps: ISO 8601 with a space between date and time, fractional seconds
  without trailing zeros and a UTC offset as ``+HH`` (``+HH:MM`` when the minutes are not zero):
  ``2024-01-31``, ``2024-01-31 13:45:00.5+00`` (PostgreSQL's ``DateStyle=ISO``). SQLite has
  no date type: its dates are text and written as stored.
- Durations a driver hands out as ``timedelta`` (MySQL's ``TIME``, ``TIMEDIFF``; Spark's day-time
  intervals): ``[-]HH:MM:SS[.f]``, hours past 24 as they are, as MySQL writes a ``TIME``
  (``-26:30:00``, ``838:59:59.5``), never Python's ``-2 days, 21:30:00``. PostgreSQL's and
  DuckDB's intervals are the engine's own text (``1 year 2 mons``): a month has no fixed length.
- Anything else (UUIDs, ...): its text form.

Readers (``csv_head``, ``csv_tail``, previews) accept fields of any length: importing this module
raises the ``csv`` module's field size limit (131,072 characters by default), a process-wide
setting, to ``FIELD_SIZE_LIMIT``.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from itertools import chain
from typing import Any

#: Largest field the readers accept (the csv module's default is 131,072 characters).
FIELD_SIZE_LIMIT = 2**31 - 1
csv.field_size_limit(FIELD_SIZE_LIMIT)

#: The start of a field with a leading zero (``007``, ``-042``): no number is written so, so such a
#: field is text however numeric it looks (a zip code, an account number).
LEADING_ZERO = re.compile(r"-?0\d")
#: Every field this dialect writes for a number (``fullmatch``): integers and decimals with no
#: leading zero, floats as PostgreSQL writes ``float8``. A field a reader would take for a number
#: that is none of these (``007``, ``1e5``, ``+5``, ``1_000``) was written from text.
NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:e[+-]\d+)?|-?Infinity|NaN")
#: An ISO date, then maybe a time and a UTC offset (``2024-01-31``, ``2024-01-31 13:45:00+01``,
#: PostgreSQL's ``+05:30``, ``Z``), as the dialect writes dates and timestamps (``fullmatch``).
ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}"
                          r"([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}(:?\d{2})?|Z)?)?")

LINE_END = "\n"
#: Value types ``csv.writer`` already writes in this dialect, apart from the cases
#: ``CsvRowFormatter`` checks (the empty string, ``\\r``).
_PLAIN_TYPES = frozenset({str, int, type(None)})
_FLOATS = frozenset({float})
_NEEDS_QUOTES = (",", '"', "\n", "\r")


def format_value(value: Any) -> str | None:
    """The text of one value in this dialect, unquoted; ``None`` for NULL."""
    if value is None:
        return None
    kind = type(value)
    if kind is str:
        return value
    if kind is bool:
        return "t" if value else "f"
    if kind is int:
        return str(value)
    if kind is float:
        return float_text(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(value).hex()
    if isinstance(value, Decimal):
        return format(value, "f") if value.is_finite() else \
            ("NaN" if value.is_nan() else ("Infinity" if value > 0 else "-Infinity"))
    if isinstance(value, datetime):
        return _iso_time(value.isoformat(sep=" "))
    if isinstance(value, time):
        return _iso_time(value.isoformat())
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, timedelta):
        return duration_text(value)
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def float_text(value: float) -> str:
    """A float as PostgreSQL writes a ``float8`` (see the module docstring)."""
    text = repr(value)
    if text[-2:] != ".0" and "e" not in text and len(text) < 16 and "n" not in text:
        return text  # most floats: fixed notation as repr wrote it (not inf, nan, 1e15+)
    if text[-2:] == ".0":
        text = text[:-2]
        if len(text) - (text[0] == "-") <= 15:  # an integer below 1e15 (also "0", "-0")
            return text
    elif "e" not in text:
        if not math.isfinite(value):
            return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        if text.find(".") - (text[0] == "-") <= 15:
            return text
    # Exponent form, from the shortest digits Python found.
    sign, digits, exponent = Decimal(text).as_tuple()
    while len(digits) > 1 and digits[-1] == 0:
        digits, exponent = digits[:-1], exponent + 1
    magnitude = len(digits) - 1 + int(exponent)
    shown = "".join(map(str, digits))
    if -4 <= magnitude < 15:  # a short repr in exponent form, e.g. '1e-04' is not one: fixed
        point = len(shown) + int(exponent)
        if point <= 0:
            shown = "0." + "0" * -point + shown
        elif point < len(shown):
            shown = shown[:point] + "." + shown[point:]
        else:
            shown += "0" * (point - len(shown))
        return ("-" if sign else "") + shown
    mantissa = shown[0] + ("." + shown[1:] if len(shown) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}e{'+' if magnitude >= 0 else '-'}{abs(magnitude):02d}"


def duration_text(value: timedelta) -> str:
    """A duration as MySQL writes a ``TIME``: ``[-]HH:MM:SS[.f]`` (see the module docstring)."""
    micros = value // timedelta(microseconds=1)
    sign = "-" if micros < 0 else ""
    seconds, micros = divmod(abs(micros), 1_000_000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    fraction = f".{micros:06d}".rstrip("0") if micros else ""
    return f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}{fraction}"


def _iso_time(text: str) -> str:
    """Python's ISO text in PostgreSQL's form: ``.500000`` -> ``.5``, ``+00:00`` -> ``+00``."""
    offset = ""
    for sign in ("+", "-"):
        at = text.rfind(sign, max(text.find(":") - 2, 0))
        if at > 0 and text.find(":") < at:
            text, offset = text[:at], text[at:]
            break
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if offset.endswith(":00"):
        offset = offset[:-3]
    return text + offset


def quote_field(text: str | None, *, single_column: bool = False) -> str:
    """One field: NULL empty, the empty string ``""``, quotes only where needed."""
    if text is None:
        return ""
    if text == "" or any(c in text for c in _NEEDS_QUOTES) or (single_column and text == "\\."):
        return '"' + text.replace('"', '""') + '"'
    return text


def format_record(values: Iterable[Any]) -> str:
    """One record (a row or the header) with its line end, value by value (the slow path)."""
    fields = [format_value(v) for v in values]
    single = len(fields) == 1
    return ",".join(quote_field(f, single_column=single) for f in fields) + LINE_END


class _Appender:
    """The file-like target ``csv.writer`` needs: ``write`` is a bound ``list.append``."""

    def __init__(self, write: Callable[[str], Any]) -> None:
        self.write = write


class CsvRowFormatter:
    """Formats batches of Python rows into records of this dialect, fast where it can be.

    ``csv.writer`` (C) writes ``str``, ``int`` and ``None`` as this dialect does, except the
    empty string (it writes NULL and ``""`` alike), a ``\\r`` (left unquoted with ``\\n`` line
    ends) and one-column rows. So a batch is looked at column by column (``zip(*rows)`` and
    C-level tests): a column holding other types (floats, bytes, booleans, dates, JSON...) is
    converted to text first, value by value; rows with an empty string or a ``\\r`` are then
    re-formatted one value at a time. Everything else goes through ``csv.writer`` untouched.
    """

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._writer = csv.writer(_Appender(self._lines.append), lineterminator=LINE_END)

    def header(self, columns: Sequence[str]) -> str:
        return format_record(columns)

    def records(self, rows: Sequence[Sequence[Any]]) -> list[str]:
        """One record string per row, line end included."""
        if not rows:
            return []
        if len(rows[0]) == 1:  # csv.writer quotes a lone None; COPY writes an empty line
            return [format_record(row) for row in rows]
        # A batch of only str/int/None (told by its first row, then checked whole) skips the
        # column-wise pass; the first row holding a float, bytes... goes to it directly.
        if set(map(type, rows[0])) <= _PLAIN_TYPES and \
                set(map(type, chain.from_iterable(rows))) <= _PLAIN_TYPES:
            return self._plain_records(rows)
        columns: list[Sequence[Any]] = list(zip(*rows))
        converted = False
        empty_strings = False
        for index, column in enumerate(columns):
            kinds = set(map(type, column))
            if not kinds <= _PLAIN_TYPES:
                if kinds == _FLOATS:  # the common case: one Python call per value, no more
                    columns[index] = column = list(map(float_text, column))
                else:
                    columns[index] = column = [_text_or_none(v) for v in column]
                converted = True
            if str in kinds and "" in column:
                empty_strings = True
        lines = self._lines
        lines.clear()
        self._writer.writerows(zip(*columns) if converted else rows)
        out = list(lines)
        if converted and (empty_strings or "\r" in "".join(out)):
            rows = list(zip(*columns))
        return self._fixed(rows, out, empty_strings)

    def _plain_records(self, rows: Sequence[Sequence[Any]]) -> list[str]:
        lines = self._lines
        lines.clear()
        self._writer.writerows(rows)
        return self._fixed(rows, list(lines), True)

    @staticmethod
    def _fixed(rows: Sequence[Sequence[Any]], out: list[str], empty_strings: bool) -> list[str]:
        """``out`` with the rows csv.writer gets wrong re-formatted: empty strings, ``\\r``."""
        if empty_strings:
            for i, row in enumerate(rows):
                if "" in row:
                    out[i] = format_record(row)
        if "\r" in "".join(out):
            for i, line in enumerate(out):
                if "\r" in line:
                    out[i] = format_record(rows[i])
        return out


def _text_or_none(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or value is None:
        return value
    if kind is float:
        return float_text(value)
    return format_value(value)
