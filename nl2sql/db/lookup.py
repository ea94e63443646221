"""Row lookups by key: names checked against the cached schema, values bound as parameters.

A table or column that is not in the ``DbInfo`` is refused with ``UnknownTableError`` before any
SQL is built, so a caller (often a model) can never smuggle SQL through an identifier.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, and_, bindparam, column, select, table

from nl2sql.errors import UnknownTableError, did_you_mean
from nl2sql.schema.models import ColumnInfo, DbInfo, TableInfo

_TEXT_TYPES = re.compile(r"CHAR|TEXT|CLOB|STRING|UUID|CITEXT|NAME|ENUM", re.IGNORECASE)
_INT_TYPES = re.compile(r"INT|SERIAL", re.IGNORECASE)


def resolve_table(db_info: DbInfo, name: str) -> TableInfo:
    info = db_info.table(name) if isinstance(name, str) else None
    if info is None:
        names = [t.name for t in db_info.tables]
        hint = did_you_mean(name, names, capitalize=False)
        raise UnknownTableError(
            f"Table '{name}' is not in the schema of database '{db_info.db_id}'; {hint}"
            f"see db_show_schema for its tables.", db_id=db_info.db_id, table=str(name))
    return info


def resolve_column(info: TableInfo, name: str) -> ColumnInfo:
    col = info.column(name) if isinstance(name, str) else None
    if col is None:
        names = [c.name for c in info.columns]
        hint = did_you_mean(name, names, capitalize=False)
        raise UnknownTableError(
            f"Column '{name}' is not in table '{info.name}'; {hint}its columns are "
            f"{', '.join(names)}.", table=info.name)
    return col


def primary_key_values(info: TableInfo, row_id: object) -> dict[str, Any]:
    """Map ``row_id`` onto the primary key of ``info``.

    Accepted: a scalar (single-column keys), a dict ``{"order_id": 1, "line_no": 2}``, a list in
    key order, or a JSON string of any of these.
    """
    pk = info.primary_key
    if not pk:
        raise UnknownTableError(
            f"Table '{info.name}' has no primary key; look its rows up with db_execute_sql "
            f"and a WHERE clause instead.", table=info.name)
    value = _decode_json(row_id)
    keys = ", ".join(f'"{c}": ...' for c in pk)
    shape = f"{{{keys}}} or a list in that order" if len(pk) > 1 else "a single value"
    if isinstance(value, dict):
        given = {resolve_column(info, str(k)).name: v for k, v in value.items()}
        if set(given) != set(pk):
            raise UnknownTableError(
                f"The primary key of '{info.name}' is ({', '.join(pk)}); pass row_id as "
                f"{shape}.", table=info.name)
        values = [given[c] for c in pk]
    elif isinstance(value, (list, tuple)):
        values = list(value)
    else:
        values = [value]
    if len(values) != len(pk):
        raise UnknownTableError(
            f"The primary key of '{info.name}' is ({', '.join(pk)}) but {len(values)} "
            f"value(s) were given; pass row_id as {shape}.", table=info.name)
    return {c: _coerce(v, info.column(c)) for c, v in zip(pk, values, strict=True)}


def column_values(info: TableInfo, columns: str | Sequence[str], value: object) -> dict[str, Any]:
    names = [columns] if isinstance(columns, str) else list(columns)
    values = [value] if isinstance(columns, str) else list(value)  # type: ignore[call-overload]
    if len(values) != len(names):
        raise UnknownTableError(f"{len(names)} column(s) but {len(values)} value(s) given for "
                                f"table '{info.name}'.", table=info.name)
    cols = [resolve_column(info, n) for n in names]
    return {c.name: _coerce(v, c) for c, v in zip(cols, values, strict=True)}


def select_where(info: TableInfo, where: dict[str, Any], *, schema: str | None) -> Select:
    """``SELECT * FROM info WHERE k1 = :p0 AND ...`` with quoted identifiers, bound values."""
    target = table(info.relation_name, *(column(c.name) for c in info.columns),
                   schema=info.schema_name if info.table_name else schema)
    conditions = [target.c[name] == bindparam(f"p{i}", value)
                  for i, (name, value) in enumerate(where.items())]
    return select(target).where(and_(*conditions)).limit(1)


def _decode_json(row_id: object) -> object:
    if isinstance(row_id, str):
        try:
            return json.loads(row_id)
        except ValueError:
            return row_id
    return row_id


def _coerce(value: object, col: ColumnInfo | None) -> object:
    """Match a JSON-ish value to the column type, so ``'42'`` finds an integer key and ``42`` a
    text key (Postgres does not compare text with integer)."""
    if col is None or value is None:
        return value
    if _TEXT_TYPES.search(col.data_type) and isinstance(value, (int, float)):
        return str(value)
    if _INT_TYPES.search(col.data_type) and isinstance(value, str) and value.strip().lstrip(
            "-").isdigit():
        return int(value)
    return value
