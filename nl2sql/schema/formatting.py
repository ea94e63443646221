"""The annotated schema as SQL text: what a model (or a person) reads to write queries.

``format_schema(db_info)`` renders one ``CREATE TABLE`` per table with descriptions as comments,
enum values as ``[a, b, c]``, keys and foreign keys (with their actions), indexes, row counts and
sample rows. Output is deterministic: the same ``DbInfo`` always gives the same text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from nl2sql.backends import get_backend
from nl2sql.schema.models import (MAX_JSON_KEYS, ColumnInfo, DbInfo, ExampleQuery,
                                  ForeignKeyInfo, IndexInfo, TableInfo, holds_elements)

INDENT = "    "
Quote = Callable[[str], str]
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@lru_cache(maxsize=65536)  # names repeat across tables; a wide schema asks for ~60 per table
def quote_identifier(name: str, db_type: str) -> str:
    """``name`` as the backend needs it written (its own quote character), quoted only when
    it must be.

    A backend that folds unquoted names to lower case (Postgres) needs quotes on mixed case;
    the others (SQLite, MySQL, DuckDB) keep or ignore case, so only odd characters and
    reserved words need them.
    """
    backend = get_backend(db_type)
    preparer = backend.sqlalchemy().identifier_preparer
    if backend.folds_unquoted_case:
        return preparer.quote(name)
    if _PLAIN.match(name) and name.lower() not in preparer.reserved_words:
        return name
    return preparer.quote_identifier(name)


def format_schema(db_info: DbInfo, *, include_samples: bool = True,
                  include_examples: bool = True,
                  rendered: dict[str, str] | None = None) -> str:
    """The whole annotated schema of ``db_info`` as SQL with comments. ``rendered``: tables
    (by name) already rendered by ``format_table`` with the same ``include_samples``."""
    rendered = rendered or {}
    parts = [_header(db_info)]
    parts += [rendered.get(t.name)
              or format_table(t, db_info.db_type, include_samples=include_samples)
              for t in db_info.tables]
    if include_examples and db_info.example_queries:
        parts.append(_examples(db_info.example_queries))
    return "\n\n".join(parts) + "\n"


def _relation(table: TableInfo, q: Quote) -> str:
    """The table's name as SQL: ``schema.table`` (each part quoted) when it is qualified."""
    if table.table_name and table.schema_name:
        return f"{q(table.schema_name)}.{q(table.table_name)}"
    return q(table.name)


def column_reference(table: TableInfo, column: str, db_type: str) -> str:
    """``table.column`` as a query of ``db_type`` must write it, quoted as the schema shows
    it (``"Genre"."Name"`` on PostgreSQL, ``Sales."Unit Price ($)"``, ``sales.orders.id``)."""
    def q(name: str) -> str:
        return quote_identifier(name, db_type)

    return f"{_relation(table, q)}.{q(column)}"


def format_tables(db_info: DbInfo, tables: list[TableInfo]) -> str:
    """The database header and only ``tables`` (in the order given)."""
    parts = [_header(db_info), *[format_table(t, db_info.db_type) for t in tables]]
    return "\n\n".join(parts) + "\n"


def _header(db_info: DbInfo) -> str:
    lines = [f"-- Database: {db_info.db_id} ({db_info.db_type})"]
    if db_info.schema_name:
        lines.append(f"-- Schema: {db_info.schema_name}")
    schemas = getattr(db_info, "schemas", None)  # extra field: several schemas configured
    if schemas:
        lines.append(f"-- Schemas: {', '.join(schemas)} (table names are schema-qualified)")
    lines += _comment_lines(db_info.description)
    return "\n".join(lines)


def format_table(table: TableInfo, db_type: str, *, include_samples: bool = True,
                 only: set[str] | None = None) -> str:
    """One table (or view) as ``CREATE TABLE``/``CREATE VIEW`` with its comments; ``only``:
    just those columns, with the keys and indexes that lie within them (no sample rows)."""
    lines, samples = _table_lines(table, db_type, only)
    return "\n".join([*lines, *samples] if include_samples else lines)


def format_table_both(table: TableInfo, db_type: str) -> tuple[str, str]:
    """``format_table`` with and without sample rows, rendered once."""
    lines, samples = _table_lines(table, db_type)
    without = "\n".join(lines)
    return ("\n".join([without, *samples]) if samples else without), without


def _table_lines(table: TableInfo, db_type: str,
                 only: set[str] | None = None) -> tuple[list[str], list[str]]:
    """The table's lines and its sample-row lines (``only``: see ``format_table``)."""
    def q(name: str) -> str:
        return quote_identifier(name, db_type)

    columns, foreign_keys, indexes = table.columns, table.foreign_keys, table.indexes
    if only is not None:
        columns = [c for c in columns if c.name in only]
        foreign_keys = [fk for fk in foreign_keys if only.issuperset(fk.columns)]
        indexes = [i for i in indexes if only.issuperset(i.columns)]
    database = table.attached_db

    lines = _comment_lines(table.description)
    if table.row_count is not None:
        approx = "about " if table.row_count_is_estimate else ""
        lines.append(f"-- {approx}{table.row_count:,} row{'' if table.row_count == 1 else 's'}")
    if table.unreadable:
        lines.append(f"-- Queries cannot read it here: {' '.join(table.unreadable.split())}")
    keyword = "VIEW" if table.is_view else "TABLE"
    if table.is_view:
        lines.append("-- (view: columns listed for reference)")
    lines.append(f"CREATE {keyword} {_relation(table, q)} (")

    pk = [c.name for c in columns if c.is_primary_key]
    body: list[tuple[str, str]] = []  # (definition, comment)
    for column in columns:
        body.append((_column_definition(column, q, single_pk=len(pk) == 1),
                     _column_comment(column)))
    if len(pk) > 1:
        body.append((f"PRIMARY KEY ({_names(pk, q)})", ""))
    declared = [fk for fk in foreign_keys if not (fk.model_extra or {}).get("inferred")]
    implied = [fk for fk in foreign_keys if (fk.model_extra or {}).get("inferred")]
    def target(fk: ForeignKeyInfo) -> str:
        """The referenced table as SQL (``sales.customers``, each part quoted alone)."""
        referenced = database.table(fk.referenced_table) if database else None
        name = _relation(referenced, q) if referenced else q(fk.referenced_table)
        return f"{q(fk.referenced_schema)}.{name}" if fk.referenced_schema else name

    for fk in sorted(declared, key=lambda f: (f.referenced_table, f.columns)):
        definition = (f"FOREIGN KEY ({_names(fk.columns, q)}) REFERENCES {target(fk)} "
                      f"({_names(fk.referenced_columns, q)})")
        if fk.on_delete:
            definition += f" ON DELETE {fk.on_delete}"
        if fk.on_update:
            definition += f" ON UPDATE {fk.on_update}"
        body.append((definition, ""))
    for check in table.check_constraints if only is None else ():
        if check.lists_values_of is None:  # else the column's enum values say it
            name = f"CONSTRAINT {q(check.name)} " if check.name else ""
            body.append((f"{name}CHECK ({check.sql})", ""))
    for i, (definition, comment) in enumerate(body):
        comma = "," if i < len(body) - 1 else ""
        lines.append(f"{INDENT}{definition}{comma}" + (f"  -- {comment}" if comment else ""))
    lines.append(");")
    for fk in sorted(implied, key=lambda f: (f.referenced_table, f.columns)):
        # Not declared: shown as a comment, so the DDL stays what the database has.
        evidence = (fk.model_extra or {}).get("evidence")
        lines.append(f"-- implied FOREIGN KEY ({_names(fk.columns, q)}) REFERENCES "
                     f"{target(fk)} ({_names(fk.referenced_columns, q)})"
                     + (f"; inferred: {evidence}" if evidence else ""))

    for index in sorted(indexes, key=lambda i: (i.name or "", i.columns)):
        if index.is_primary or _said_by_unique_column(table, index):
            continue  # the PRIMARY KEY / UNIQUE on the column line says it already
        unique = "UNIQUE " if index.is_unique else ""
        using = f" USING {index.index_type}" if index.index_type else ""
        name = f"{q(index.name)} " if index.name else ""
        # Expression indexes keep their SQL text in place of a column name: leave it as is.
        columns = ", ".join(q(c) if table.column(c) else c for c in index.columns)
        lines.append(f"-- {unique}INDEX {name}ON {_relation(table, q)} ({columns}){using}")
    samples: list[str] = []
    # An empty table's header alone says nothing its CREATE TABLE and "-- 0 rows" do not.
    known_empty = table.row_count == 0 and not table.row_count_is_estimate
    if table.sample_data_csv and only is None:
        sample = table.sample_data_csv.strip("\n").splitlines()
        if len(sample) > 1 or not known_empty:
            samples.append(f"-- Sample rows ({len(sample) - 1}):")
            samples += [f"--   {row}" for row in sample]
    return lines, samples


def _column_definition(column: ColumnInfo, q: Quote, *, single_pk: bool) -> str:
    parts = [q(column.name)]
    if column.data_type:
        parts.append(column.data_type)
    if column.generated:
        parts.append(f"GENERATED ALWAYS AS ({column.generated})")
    if not column.nullable and not (single_pk and column.is_primary_key):
        parts.append("NOT NULL")
    if single_pk and column.is_primary_key:
        parts.append("PRIMARY KEY")
    elif column.is_unique:
        parts.append("UNIQUE")
    return " ".join(parts)


def _said_by_unique_column(table: TableInfo, index: IndexInfo) -> bool:
    column = table.column(index.columns[0]) if len(index.columns) == 1 else None
    return index.is_unique and column is not None and column.is_unique


def _column_comment(column: ColumnInfo) -> str:
    parts = []
    if column.description:
        parts.append(" ".join(column.description.split()))
    if column.secret:
        parts.append("(a secret: its values are withheld)")
    else:
        values = (column.enum_values if column.is_enum and column.enum_values
                  else column.domain_values)
        if values:  # an array's or a SET's are its elements' (``holds_elements``)
            parts.append(("elements " if holds_elements(column.data_type) else "")
                         + "[" + ", ".join(_enum_value(v) for v in values) + "]")
        if column.json_keys:
            keys = [_enum_value(k) for k in column.json_keys[:MAX_JSON_KEYS]]
            more = ", ..." if len(column.json_keys) > MAX_JSON_KEYS else ""
            parts.append(f"keys [{', '.join(keys)}{more}]")
    return " ".join(parts)


def _enum_value(value: str) -> str:
    # Quote only values that would be ambiguous in the bracket list.
    if value == "" or value != value.strip() or any(c in value for c in ",[]'\n"):
        return "'" + value.replace("'", "''").replace("\n", " ") + "'"
    return value


def _names(names: list[str], q: Quote) -> str:
    return ", ".join(q(n) for n in names)


def _comment_lines(text: str | None) -> list[str]:
    if not text:
        return []
    return [f"-- {line}".rstrip() for line in text.strip().splitlines()]


def _examples(examples: list[ExampleQuery]) -> str:
    lines = ["-- Example queries:"]
    for example in examples:
        lines.append(f"-- Q: {' '.join(example.question.split())}")
        lines += [f"--   {line}" for line in example.sql.strip().splitlines()]
    return "\n".join(lines)
