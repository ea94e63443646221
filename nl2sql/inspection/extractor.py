"""Turn one schema reflection into the cached ``DbInfo`` model (structure only, no LLM).

Decisions, the same on every backend:
- Tables and views are listed sorted by name; views carry ``is_view=True`` and no row count.
- ``ForeignKeyInfo.on_delete``/``on_update`` are upper case (``CASCADE``, ``SET NULL``...);
  None means NO ACTION, the SQL default, which is what both backends report when nothing
  was declared (SQLAlchemy drops NO ACTION too).
- ``indexes`` lists every physical index the catalog has, including the one backing the
  primary key (``is_primary=True``: Postgres' ``<table>_pkey``, SQLite's
  ``sqlite_autoindex_*``) and those backing UNIQUE constraints. An expression index keeps the
  expression's SQL text in place of a column name.
- ``is_unique`` on a column: a single-column UNIQUE constraint or a non-partial unique index
  on that column alone (the primary key is ``is_primary_key`` instead).
- Database comments (Postgres ``COMMENT ON``) become descriptions with
  ``description_source="comment"``.
- CHECK constraints are kept as the database reports their condition, where the dialect
  reflects them; one that allows a column only a list of strings (``status IN ('new',
  'paid')``, PostgreSQL's ``status = ANY (ARRAY['new'::text, ...])``) makes those the column's
  enum values, decided by the schema like a native enum's (all of them, used or not yet).
- A generated column keeps its expression (``generated``) as the database reports it.
"""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlalchemy import Connection
from sqlglot import exp

from nl2sql.db.base import DbConnection
from nl2sql._helpers import gc_paused
from nl2sql.inspection.base import DbSchemaInspector, ReflectedSchema, RowCount
from nl2sql.inspection.base import create_inspector
from nl2sql.inspection.check_lists import allowed_values
from nl2sql.schema.models import CheckInfo, DbInfo, ForeignKeyInfo, IndexInfo, TableInfo


class DbSchemaExtractor:
    """Extracts the structure of one database into a ``DbInfo``."""

    def __init__(self, connection: DbConnection,
                 inspector: DbSchemaInspector | None = None) -> None:
        self.connection = connection
        self.inspector = inspector or create_inspector(connection)

    def extract(self, db_id: str | None = None) -> DbInfo:
        """Reflect the configured schema; ``db_id`` defaults to the connection's."""
        with gc_paused(), self.connection.connect() as conn:
            reflected = self.inspector.reflect_with(conn)
            tables = [self._table(conn, reflected, name) for name in reflected.names]
            comment = _text(reflected.database_comment)
            info = DbInfo(db_id=db_id or self.connection.db_id,
                          db_type=self.connection.config.type.value,
                          schema_name=reflected.schema, description=comment,
                          description_source="comment" if comment else None, tables=tables)
            if reflected.schemas is not None:
                info.schemas = reflected.schemas  # type: ignore[attr-defined]  # extra field
            self.inspector.finish(conn, info)
        return info

    def _table(self, conn: Connection, reflected: ReflectedSchema, name: str) -> TableInfo:
        is_view = name in reflected.views
        pk_columns = reflected.primary_keys.get(name, {}).get("constrained_columns") or []
        indexes = [_index(index) for index in reflected.indexes.get(name, [])]
        unique_columns = _single_unique_columns(
            reflected.unique_constraints.get(name, []), reflected.indexes.get(name, []))
        columns = [self._column(conn, column, pk_columns, unique_columns)
                   for column in reflected.columns.get(name, [])]
        checks = [CheckInfo(name=check.get("name"), sql=" ".join(str(check["sqltext"]).split()))
                  for check in reflected.check_constraints.get(name, [])
                  if check.get("sqltext")]
        for check in checks:
            allowed = allowed_values(check.sql, self.connection.sqlglot_dialect)
            if allowed is None:
                continue
            column = next((c for c in columns if c["name"] == allowed[0]), None)
            if column is not None and not column["is_enum"]:
                column.update(is_enum=True, enum_values=allowed[1], enum_decision="schema")
                check.lists_values_of = column["name"]
        comment = _text(reflected.comments.get(name))
        row_count = RowCount(None) if is_view else reflected.row_counts.get(name, RowCount(None))
        # Several schemas: ``name`` is schema-qualified and ``table_name`` the table's own.
        schema, table_name = reflected.origins.get(name, (reflected.schema, None))
        return TableInfo(
            name=name, schema_name=schema, table_name=table_name, is_view=is_view,
            description=comment, description_source="comment" if comment else None,
            columns=columns,
            foreign_keys=[self._foreign_key(fk) for fk in reflected.foreign_keys.get(name, [])],
            indexes=indexes, check_constraints=checks, row_count=row_count.value,
            row_count_is_estimate=row_count.is_estimate)

    def _column(self, conn: Connection, column: dict[str, Any], pk_columns: list[str],
                unique_columns: set[str]) -> dict[str, Any]:
        """A ``ColumnInfo``'s fields; ``TableInfo`` validates them in one pass per table
        (cheaper than a model built here per column, on a wide schema)."""
        name = column["name"]
        comment = _text(column.get("comment"))
        default = column.get("default")
        computed = column.get("computed") or {}
        enum_values = self.inspector.native_enum_values(column)
        return dict(
            name=name, data_type=self.inspector.column_type(conn, column),
            nullable=bool(column.get("nullable", True)),
            default=None if default is None else str(default),
            generated=_expression(computed.get("sqltext"), self.connection.sqlglot_dialect),
            is_primary_key=name in pk_columns,
            is_unique=name in unique_columns and pk_columns != [name],
            description=comment, description_source="comment" if comment else None,
            is_enum=bool(enum_values), enum_values=enum_values or [],
            enum_decision="schema" if enum_values else None)

    def _foreign_key(self, fk: dict[str, Any]) -> ForeignKeyInfo:
        options = fk.get("options") or {}
        referred_schema = fk.get("referred_schema")
        return ForeignKeyInfo(
            name=fk.get("name"), columns=list(fk["constrained_columns"]),
            referenced_table=fk["referred_table"],
            referenced_columns=list(fk["referred_columns"]),
            referenced_schema=(referred_schema
                               if referred_schema not in (None, self.connection.schema)
                               else None),
            on_delete=_referential_action(options.get("ondelete")),
            on_update=_referential_action(options.get("onupdate")))


def _index(index: dict[str, Any]) -> IndexInfo:
    return IndexInfo(name=index.get("name"), columns=_index_columns(index),
                     is_unique=bool(index.get("unique")),
                     is_primary=bool(index.get("is_primary")),
                     index_type=index.get("index_type"))


def _index_columns(index: dict[str, Any]) -> list[str]:
    # Postgres reports an expression as None in column_names and lists every element's text,
    # columns and expressions alike, in ``expressions``.
    names = list(index.get("column_names") or [])
    expressions = index.get("expressions") or []
    return [name if name is not None else
            (expressions[i] if i < len(expressions) else "<expression>")
            for i, name in enumerate(names)]


def _single_unique_columns(uniques: list[dict[str, Any]],
                           indexes: list[dict[str, Any]]) -> set[str]:
    columns = {u["column_names"][0] for u in uniques if len(u.get("column_names") or []) == 1}
    for index in indexes:
        names = index.get("column_names") or []
        partial = any(key.endswith("_where") for key in (index.get("dialect_options") or {}))
        if (index.get("unique") and not index.get("is_primary") and not partial
                and len(names) == 1 and names[0] is not None and not index.get("expressions")):
            columns.add(names[0])
    return columns


def _referential_action(value: str | None) -> str | None:
    if not value:
        return None
    action = " ".join(value.upper().split())
    return None if action == "NO ACTION" else action


def _text(value: str | None) -> str | None:
    return value.strip() or None if value else None


def _expression(value: str | None, dialect: str) -> str | None:
    """A generated column's expression as the database wrote it, on one line and without the
    parentheses around it all; None when it does not parse (SQLAlchemy misreads a SQLite
    table with two generated columns: ``a * b) VIRTUAL, d TEXT GENERATED ALWAYS AS (...``)."""
    text = " ".join(str(value or "").split())
    try:
        tree = sqlglot.parse_one(text, read=dialect) if text else None
    except sqlglot.errors.SqlglotError:
        return None
    while isinstance(tree, exp.Paren):
        text, tree = text[1:-1].strip(), tree.this
    return text or None
