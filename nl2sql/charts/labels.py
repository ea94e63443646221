"""Axis titles: a result column's name, with the annotated description and unit of the table
column it comes from when the schema cache knows them.

The result's SQL (from its metadata) is read with sqlglot in the database's dialect; an output
column that is a table column (``t.Milliseconds``, ``Milliseconds AS length``) or one aggregate
of one (``sum(il.UnitPrice * ...)`` is not one; ``avg(t.Milliseconds)`` is) is looked up in the
cache. The unit is the column's ``unit`` field when the cache has one (an extra field users may
add), else a unit the description names ("... in milliseconds" -> ms).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

import sqlglot
from sqlglot import exp

from nl2sql.backends import get_backend
from nl2sql.errors import Nl2SqlError
from nl2sql.config.registry import DbConnectionConfig
from nl2sql.schema.models import ColumnInfo, DbInfo


class SchemaSource(Protocol):
    """Where ``schema_of`` reads a database's cache and type (an ``OpsContext``)."""

    def db_info(self, db_id: str) -> DbInfo: ...
    def config(self, db_id: str) -> DbConnectionConfig: ...

#: Descriptions longer than this are not put on an axis (the column name is).
TITLE_CHARS = 48

_UNITS = {
    "milliseconds": "ms", "seconds": "s", "minutes": "min", "hours": "h", "days": "days",
    "bytes": "bytes", "kilobytes": "kB", "megabytes": "MB", "percent": "%",
    "dollars": "USD", "us dollars": "USD", "usd": "USD", "euros": "EUR", "eur": "EUR",
    "kilograms": "kg", "grams": "g", "kilometres": "km", "kilometers": "km", "metres": "m",
    "meters": "m",
}
_UNIT_PHRASE = re.compile(r"\b(?:in|as) (" + "|".join(sorted(_UNITS, key=len, reverse=True))
                          + r")\b", re.IGNORECASE)
_AGGREGATES = {exp.Sum: "sum of", exp.Avg: "average", exp.Min: "lowest", exp.Max: "highest"}


@dataclass(frozen=True)
class AxisTitle:
    name: str
    description: str | None = None
    unit: str | None = None

    def text(self) -> str:
        """``"length — Length of the track (ms)"``; the name alone when nothing is known."""
        title = self.name
        if self.description and len(self.description) <= TITLE_CHARS:
            title += f" — {self.description}"
        return f"{title} ({self.unit})" if self.unit else title


def axis_titles(columns: list[str], sql: str | None, db_info: DbInfo | None,
                dialect: str | None = None) -> dict[str, AxisTitle]:
    """An ``AxisTitle`` for each result column; plain names when the source is unknown."""
    titles = {name: AxisTitle(name) for name in columns}
    if not sql or db_info is None or not db_info.tables:
        return titles
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.ParseError:
        return titles
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    if select is None:
        return titles
    aliases = {t.alias_or_name.lower(): t.name.lower() for t in tree.find_all(exp.Table)}
    tables = {t.name.lower(): t for t in db_info.tables}
    for projection in select.expressions:
        name = projection.alias_or_name
        if name not in titles:
            continue
        source, prefix = _source_column(projection.unalias())
        if source is None:
            continue
        qualifier = source.table.lower()
        candidates = [aliases.get(qualifier, qualifier)] if qualifier else list(aliases.values())
        found = _find(tables, candidates, source.name)
        if found is not None:
            description = _first_sentence(found.description)
            if description and prefix:
                description = f"{prefix} {description[0].lower()}{description[1:]}"
            titles[name] = AxisTitle(name, description, unit_of(found))
    return titles


def schema_of(ops: SchemaSource, db_id: str | None) -> tuple[DbInfo | None, str | None]:
    """The cached schema and sqlglot dialect of ``db_id``, or Nones when the database is no
    longer configured or was never annotated (axis titles are then the column names)."""
    if db_id is None:
        return None, None
    try:
        return ops.db_info(db_id), get_backend(ops.config(db_id).type).sqlglot_dialect
    except Nl2SqlError:
        return None, None


def unit_of(column: ColumnInfo) -> str | None:
    """The cache's ``unit`` for a column, else one its description names."""
    unit = (column.model_extra or {}).get("unit")
    if isinstance(unit, str) and unit.strip():
        return unit.strip()
    match = _UNIT_PHRASE.search(column.description or "")
    return _UNITS[match.group(1).lower()] if match else None


def _source_column(node: exp.Expression) -> tuple[exp.Column | None, str | None]:
    if isinstance(node, exp.Column):
        return node, None
    for kind, prefix in _AGGREGATES.items():
        if isinstance(node, kind) and isinstance(node.this, exp.Column):
            return node.this, prefix
    return None, None


def _find(tables: dict, candidates: list[str], column: str) -> ColumnInfo | None:
    for table_name in candidates:
        table = tables.get(table_name)
        for info in table.columns if table is not None else []:
            if info.name.lower() == column.lower():
                return info
    return None


def _first_sentence(text: str | None) -> str | None:
    if not text:
        return None
    sentence = re.split(r"(?<=[.;])\s", text.strip(), maxsplit=1)[0]
    return sentence.rstrip(".;") or None
