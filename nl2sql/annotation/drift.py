"""Schema drift: the live schema compared with the cached one (``annotate-schema --check``).

Structure only (tables, columns with type/nullability/keys, foreign keys), the same facts as
``TableInfo.fingerprint()``; descriptions, samples and row counts are not drift.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from nl2sql.db.base import DbConnection
from nl2sql.schema.models import ColumnInfo, DbInfo, TableInfo
from nl2sql.schema.cache import load_db_info
from nl2sql.inspection import DbSchemaExtractor

T = TypeVar("T", TableInfo, ColumnInfo)


@dataclass
class TableDrift:
    name: str
    added_columns: list[str] = field(default_factory=list)
    removed_columns: list[str] = field(default_factory=list)
    #: "column: what changed", e.g. "Total: type NUMERIC(10,2) -> REAL".
    changed_columns: list[str] = field(default_factory=list)
    other_changes: list[str] = field(default_factory=list)


@dataclass
class SchemaDrift:
    db_id: str
    added_tables: list[str] = field(default_factory=list)
    removed_tables: list[str] = field(default_factory=list)
    changed_tables: list[TableDrift] = field(default_factory=list)

    @property
    def has_drift(self) -> bool:
        return bool(self.added_tables or self.removed_tables or self.changed_tables)

    def touched(self) -> dict[str, str]:
        """Each removed or changed table (name casefolded) -> what happened to it, for
        people: ``Invoice changed (column Total: type NUMERIC -> REAL)``."""
        touched = {name.casefold(): f"{name} removed" for name in self.removed_tables}
        for table in self.changed_tables:
            changes = ([f"column {c} removed" for c in table.removed_columns]
                       + [f"column {c}" for c in table.changed_columns]
                       + [f"column {c} added" for c in table.added_columns]
                       + table.other_changes)
            touched[table.name.casefold()] = f"{table.name} changed ({'; '.join(changes)})"
        return touched

    def lines(self) -> list[str]:
        """Human-readable report, one fact per line."""
        if not self.has_drift:
            return [f"{self.db_id}: no drift: the cache matches the live schema."]
        lines = [f"{self.db_id}: the live schema differs from the cache:"]
        lines += [f"  + table {name}" for name in self.added_tables]
        lines += [f"  - table {name}" for name in self.removed_tables]
        for table in self.changed_tables:
            lines.append(f"  ~ table {table.name}")
            lines += [f"      + column {name}" for name in table.added_columns]
            lines += [f"      - column {name}" for name in table.removed_columns]
            lines += [f"      ~ column {change}" for change in table.changed_columns]
            lines += [f"      ~ {change}" for change in table.other_changes]
        lines.append(f"  Run `annotate-schema {self.db_id}` to update the cache "
                     f"(only changed tables are sent to the model).")
        return lines


def compare_schemas(live: DbInfo, cached: DbInfo) -> SchemaDrift:
    drift = SchemaDrift(live.db_id)
    drift.added_tables, drift.removed_tables, kept = _by_name(cached.tables, live.tables)
    drift.changed_tables = [_table_drift(before, after) for before, after in kept
                            if before.fingerprint() != after.fingerprint()]
    return drift


def _by_name(before: Iterable[T], after: Iterable[T],
             ) -> tuple[list[str], list[str], list[tuple[T, T]]]:
    """Names only in ``after`` (added), names only in ``before`` (removed), and the pairs kept
    (in ``after``'s order): the same split for tables and for a table's columns."""
    old = {item.name: item for item in before}
    new = {item.name: item for item in after}
    return ([name for name in new if name not in old], [name for name in old if name not in new],
            [(old[name], item) for name, item in new.items() if name in old])


def _table_drift(before: TableInfo, after: TableInfo) -> TableDrift:
    drift = TableDrift(after.name)
    drift.added_columns, drift.removed_columns, kept = _by_name(before.columns, after.columns)
    drift.changed_columns = [f"{new.name}: {change}" for old, new in kept
                             for change in _column_changes(old, new)]
    if before.is_view != after.is_view:
        drift.other_changes.append("view" if after.is_view else "no longer a view")
    old_fks = _foreign_keys(before)
    new_fks = _foreign_keys(after)
    drift.other_changes += [f"foreign key added: {fk}" for fk in sorted(new_fks - old_fks)]
    drift.other_changes += [f"foreign key removed: {fk}" for fk in sorted(old_fks - new_fks)]
    if not (drift.added_columns or drift.removed_columns or drift.changed_columns
            or drift.other_changes):
        drift.other_changes.append("column order changed")
    return drift


def _column_changes(old: ColumnInfo, new: ColumnInfo) -> list[str]:
    changes = []
    if old.data_type != new.data_type:
        changes.append(f"type {old.data_type} -> {new.data_type}")
    if old.nullable != new.nullable:
        changes.append("now nullable" if new.nullable else "now NOT NULL")
    if old.is_primary_key != new.is_primary_key:
        changes.append("now part of the primary key" if new.is_primary_key
                       else "no longer in the primary key")
    if old.is_unique != new.is_unique:
        changes.append("now unique" if new.is_unique else "no longer unique")
    return changes


def _foreign_keys(table: TableInfo) -> set[str]:
    return {f"({', '.join(fk.columns)}) -> {fk.referenced_table}"
            f"({', '.join(fk.referenced_columns)})" for fk in table.foreign_keys}


def check_drift(connection: DbConnection, data_dir: Path) -> SchemaDrift:
    """Extract the live schema of ``connection`` and compare it with its cache.

    Raises ``SchemaCacheMissingError`` when there is no cache to compare with.
    """
    cached = load_db_info(data_dir, connection.db_id)
    live = DbSchemaExtractor(connection).extract(connection.db_id)
    return compare_schemas(live, cached)
