"""The type of each result column as the database gave it, kept in the result's metadata
(``column_types``), so that a reader of the CSV need not guess it from the text: a zip code
column stays text although every value looks like a number, an integer column with a missing
value stays integers.

One word per column, the same for every backend; ``None`` where the backend did not say or the
type is none of these (a PostgreSQL enum or domain, a MySQL ``BIT``): readers then go by the
text as before.
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from collections.abc import Iterable, Sequence

INTEGER = "integer"
NUMBER = "number"  # decimal or floating point
BOOLEAN = "boolean"
DATE = "date"
TIMESTAMP = "timestamp"  # with or without a time zone
TEXT = "text"  # also what the CSV writes as text: times, intervals, JSON, UUIDs, arrays
BINARY = "binary"

#: Column types by Python type of the values a driver returned (SQLite's storage classes).
_PYTHON = {bool: BOOLEAN, int: INTEGER, float: NUMBER, decimal.Decimal: NUMBER, str: TEXT,
           bytes: BINARY, bytearray: BINARY, memoryview: BINARY, datetime.date: DATE,
           datetime.datetime: TIMESTAMP, datetime.time: TEXT, datetime.timedelta: TEXT,
           uuid.UUID: TEXT}


#: Type names -> column types, as DuckDB (a type's ``id``) and Spark (``typeName()``) name
#: them; a name that starts with "timestamp" is a timestamp, any other name text (strings,
#: lists, structs, maps, times, intervals, UUIDs, as the CSV writes them).
_NAMED = {
    **dict.fromkeys(("tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint",
                     "usmallint", "uinteger", "ubigint", "uhugeint", "byte", "short", "long"),
                    INTEGER),
    **dict.fromkeys(("decimal", "float", "double"), NUMBER),
    "boolean": BOOLEAN, "date": DATE, "blob": BINARY, "binary": BINARY,
}


def from_type_name(name: str) -> str:
    """The column type of a DuckDB or Spark SQL type name (``integer``, ``decimal``,
    ``timestamp with time zone``, ``long``...)."""
    name = name.lower()
    return TIMESTAMP if name.startswith("timestamp") else _NAMED.get(name, TEXT)


def from_python_types(types: Iterable[type]) -> str | None:
    """The column type of a column whose values had these Python types (``NoneType`` for a
    missing value); None when there were none, or they mix kinds (an SQLite column holding
    numbers and text)."""
    kinds = {_PYTHON.get(kind) for kind in types if kind is not type(None)}
    if len(kinds) == 1:
        return kinds.pop()
    if kinds == {INTEGER, NUMBER}:
        return NUMBER
    if kinds == {DATE, TIMESTAMP}:
        return TIMESTAMP
    return None


class ValueTypes:
    """The Python types of the values of the first ``rows`` rows of a result, per column
    (a sample is enough: a backend whose values can change type mid-column is SQLite, and a
    reader falls back to the text for a column whose values do not fit its type)."""

    def __init__(self, width: int, rows: int = 1000) -> None:
        self._types: list[set[type]] = [set() for _ in range(width)]
        self._left = rows

    def add(self, rows: Sequence[Sequence[object]]) -> None:
        if self._left <= 0 or not rows:
            return
        head = rows[: self._left]
        self._left -= len(head)
        for types, values in zip(self._types, zip(*head)):
            types.update(map(type, values))

    def column_types(self) -> list[str | None]:
        return [from_python_types(types) for types in self._types]
