"""Compact, deterministic text about a schema for the annotation prompts.

Kept short on purpose (cost): sample rows and enum value lists are truncated, and other tables
are listed by name and description only.
"""

from __future__ import annotations

from nl2sql.schema.models import ColumnInfo, DbInfo, EnumValueCount, TableInfo

SAMPLE_LINES = 6           # header + 5 rows
SAMPLE_CHARS = 2_000
ENUM_VALUES_SHOWN = 30
VALUE_CHARS = 60


def column_line(column: ColumnInfo, table: TableInfo) -> str:
    """``name TYPE [PK] [NOT NULL] [UNIQUE] [-> table(col)] -- description``."""
    parts = [f"- {column.name} {column.data_type}"]
    if column.is_primary_key:
        parts.append("PRIMARY KEY")
    if not column.nullable and not column.is_primary_key:
        parts.append("NOT NULL")
    if column.is_unique and not column.is_primary_key:
        parts.append("UNIQUE")
    for fk in table.foreign_keys:
        if column.name in fk.columns and len(fk.columns) == 1:
            parts.append(f"-> {fk.referenced_table}({fk.referenced_columns[0]})")
    if column.is_enum and column.enum_values:
        shown = ", ".join(_quote(v) for v in column.enum_values[:ENUM_VALUES_SHOWN])
        parts.append(f"values: {shown}")
    line = " ".join(parts)
    if column.description:
        line += f" -- {column.description}"
    return line


def columns_text(table: TableInfo) -> str:
    return "\n".join(column_line(c, table) for c in table.columns) or "(no columns)"


def foreign_keys_text(table: TableInfo) -> str:
    lines = [f"- ({', '.join(fk.columns)}) -> {fk.referenced_table}"
             f"({', '.join(fk.referenced_columns)})" for fk in table.foreign_keys]
    return "\n".join(lines) or "(none)"


def samples_text(table: TableInfo) -> str:
    csv_text = (table.sample_data_csv or "").strip()
    if not csv_text:
        return "(no sample rows)"
    lines = csv_text.splitlines()[:SAMPLE_LINES]
    return "\n".join(lines)[:SAMPLE_CHARS]


def other_tables_text(db_info: DbInfo, table: TableInfo) -> str:
    lines = [table_summary(t) for t in db_info.tables if t.name != table.name]
    return "\n".join(lines) or "(none)"


def table_summary(table: TableInfo) -> str:
    kind = " (view)" if table.is_view else ""
    rows = f", {table.row_count} rows" if table.row_count is not None else ""
    line = f"- {table.name}{kind}: {len(table.columns)} columns{rows}"
    if table.description:
        line += f" -- {table.description}"
    return line


def value_counts_text(values: list[EnumValueCount]) -> str:
    shown = [f"{_quote(v.value)} ({v.count})" for v in values[:ENUM_VALUES_SHOWN]]
    if len(values) > ENUM_VALUES_SHOWN:
        shown.append(f"... {len(values) - ENUM_VALUES_SHOWN} more")
    return ", ".join(shown) or "(no values)"


def schema_text(db_info: DbInfo) -> str:
    """Every table with its columns, keys, enum values and descriptions."""
    blocks = []
    for table in db_info.tables:
        header = f"### {table.name}" + (" (view)" if table.is_view else "")
        if table.row_count is not None:
            header += f" -- {table.row_count} rows"
        if table.description:
            header += f"\n{table.description}"
        blocks.append(f"{header}\n{columns_text(table)}\nSample rows:\n{samples_text(table)}")
    return "\n\n".join(blocks) or "(no tables)"


def _quote(value: str | None) -> str:
    if value is None:
        return "NULL"
    text = value if len(value) <= VALUE_CHARS else value[:VALUE_CHARS] + "..."
    return "'" + text.replace("'", "''") + "'"
