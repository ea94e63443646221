"""Narrow renderings of one table: its key columns, or a chosen subset of its columns with a
note of how many are hidden. Used by the index (offline-rendered texts) and by pruning."""

from __future__ import annotations

from nl2sql.schema.formatting import format_table
from nl2sql.schema.models import ColumnInfo, TableInfo


def key_columns(table: TableInfo) -> list[ColumnInfo]:
    fk_columns = {c for fk in table.foreign_keys for c in fk.columns}
    return [c for c in table.columns if c.is_primary_key or c.name in fk_columns] \
        or table.columns[:1]


def narrow_table(table: TableInfo, columns: list[ColumnInfo]) -> str:
    """``table`` with only ``columns`` (in table order) and a note of how many are hidden."""
    keep = {c.name for c in columns}
    if len(keep) == len(table.columns):
        return format_table(table, table.db.db_type, include_samples=False)
    hidden = len(table.columns) - len(keep)
    text = format_table(table, table.db.db_type, only=keep)
    return text + (f"\n-- {hidden} more columns not shown (db_show_schema with "
                   f"tables=['{table.name}'] lists them all)")
