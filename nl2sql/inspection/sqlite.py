"""SQLite specifics: auto-indexes, expression indexes, row counts. SQLite has no comments."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import sqlglot
from sqlglot import exp
from sqlalchemy import (Connection, FromClause, Select, TableClause, func, literal_column, select,
                        union_all)
from sqlalchemy.engine.reflection import Inspector
from sqlalchemy.exc import DBAPIError

from nl2sql.inspection.base import DbSchemaInspector, ReflectedSchema, RowCount
from nl2sql.inspection.statistics import EnumScreeningSettings
from nl2sql.schema.models import TableInfo

AUTOINDEX_PREFIX = "sqlite_autoindex_"
# The type name before any "(...)", as SQLAlchemy's SQLite dialect reads it.
_TYPE_NAME = re.compile(r"\s*([\w ]+)")


class SqliteSchemaInspector(DbSchemaInspector):
    supports_comments = False
    # Auto-indexes back PRIMARY KEY (non-rowid) and UNIQUE constraints: list them like any
    # index, so the index list matches PRAGMA index_list.
    index_reflection_kw = {"include_auto_indexes": True}
    views_may_break = True  # DROP TABLE leaves the views that read it
    #: Tables estimated to hold at most this many rows are counted exactly.
    exact_count_max_rows = 1_000_000

    def _backs_primary_key(self, index: dict[str, Any], pk_columns: Sequence[str]) -> bool:
        return (bool(pk_columns) and (index.get("name") or "").startswith(AUTOINDEX_PREFIX)
                and list(index.get("column_names") or []) == list(pk_columns))

    def _complete_indexes(self, conn: Connection, reflected: ReflectedSchema) -> None:
        super()._complete_indexes(conn, reflected)
        # SQLAlchemy skips expression indexes on SQLite (with a warning); read them from
        # sqlite_master and take their columns apart with sqlglot instead.
        known = {(table, index.get("name")) for table, indexes in reflected.indexes.items()
                 for index in indexes}
        query = (f"SELECT tbl_name, name, sql FROM {self._prefix()}sqlite_master "
                 "WHERE type = 'index' AND sql IS NOT NULL")
        for table, name, sql in conn.exec_driver_sql(query):
            if (table, name) in known or table not in reflected.columns:
                continue
            index = _parse_index(name, sql)
            index.update(is_primary=False, index_type=self.default_index_type)
            reflected.indexes.setdefault(table, []).append(index)

    def _complete_foreign_keys(self, conn: Connection, reflected: ReflectedSchema) -> None:
        # SQLAlchemy reads ON DELETE/ON UPDATE by parsing table-level FOREIGN KEY clauses only,
        # so an inline `col REFERENCES t (id) ON DELETE CASCADE` loses its actions. The
        # pragma reports them for every key: take them from there.
        query = (f"SELECT m.name, f.id, f.\"from\", f.\"table\", f.on_update, f.on_delete "
                 f"FROM {self._prefix()}sqlite_master AS m, pragma_foreign_key_list(m.name) AS f "
                 "WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq")
        actions: dict[tuple[str, int], dict[str, Any]] = {}
        for table, key_id, column, referred, on_update, on_delete in conn.exec_driver_sql(query):
            entry = actions.setdefault((table, key_id), {
                "columns": [], "referred": referred.strip('"[]`').lower(),
                "onupdate": on_update, "ondelete": on_delete})
            entry["columns"].append(column)
        by_signature = {(table, tuple(e["columns"]), e["referred"]): e
                        for (table, _id), e in actions.items()}
        for table, fks in reflected.foreign_keys.items():
            for fk in fks:
                signature = (table, tuple(fk["constrained_columns"]),
                             fk["referred_table"].lower())
                entry = by_signature.get(signature)
                if entry is None:
                    continue
                options = fk.setdefault("options", {})
                for key in ("ondelete", "onupdate"):
                    if entry[key] and entry[key].upper() != "NO ACTION":
                        options[key] = entry[key]

    def _complete_types(self, conn: Connection, reflected: ReflectedSchema) -> None:
        # SQLAlchemy maps a declared type it does not know (MONEY, DOUBLE PRECISION, none at
        # all) to SQLite's type affinity (NUMERIC, REAL, NullType), losing the name. Keep the
        # declared text for those; one pragma query covers every table and view reflected
        # (the pragma of one left out, as a view whose table was dropped, would fail it).
        known = conn.dialect.ischema_names
        query = (f"SELECT m.name, p.name, p.type FROM {self._prefix()}sqlite_master AS m, "
                 "pragma_table_xinfo(m.name, ?) AS p WHERE m.type IN ('table', 'view') "
                 "AND m.name IN (SELECT value FROM json_each(?))")
        names = json.dumps(reflected.names)
        declared = {(table, column): type_ or "" for table, column, type_
                    in conn.exec_driver_sql(query, (self.schema or "main", names))}
        for table, columns in reflected.columns.items():
            for column in columns:
                text = declared.get((table, column["name"]))
                if text is None:
                    continue
                base = _TYPE_NAME.match(text)
                if base is None or base.group(1).strip().upper() not in known:
                    column["declared_type"] = text.strip()

    def row_counts(self, conn: Connection, tables: Sequence[str]) -> dict[str, RowCount]:
        """Exact ``COUNT(*)`` up to ``exact_count_max_rows``; above that an estimate from
        ``sqlite_stat1`` (written by ANALYZE) or, failing that, ``max(rowid)``."""
        # No catalog keeps row counts in SQLite; max(rowid) is an O(log n) upper bound for
        # rowid tables (exact unless rows were deleted), NULL exactly when the table is empty.
        stats = self._stat1_counts(conn)
        counts: dict[str, RowCount] = {}
        for name in tables:
            estimate = stats.get(name)
            if estimate is None:
                estimate = self._scalar(conn, f"SELECT max(rowid) FROM {self.qualified_name(name)}",
                                        default=-1)
                if estimate is None:
                    counts[name] = RowCount(0)
                    continue
            if estimate <= self.exact_count_max_rows:  # -1: no estimate at all
                exact = self._scalar(conn, f"SELECT count(*) FROM {self.qualified_name(name)}")
                counts[name] = RowCount(exact)
            else:
                counts[name] = RowCount(estimate, True)
        return counts

    def _stat1_counts(self, conn: Connection) -> dict[str, int]:
        prefix = self._prefix()
        exists = self._scalar(conn, f"SELECT count(*) FROM {prefix}sqlite_master "
                                    "WHERE type = 'table' AND name = 'sqlite_stat1'")
        if not exists:
            return {}
        counts: dict[str, int] = {}
        for table, stat in conn.exec_driver_sql(f"SELECT tbl, stat FROM {prefix}sqlite_stat1"):
            first = (stat or "").split(" ", 1)[0]
            if first.isdigit():
                counts[table] = max(counts.get(table, 0), int(first))
        return counts

    def _scalar(self, conn: Connection, query: str, default: Any = None) -> Any:
        try:
            return conn.exec_driver_sql(query).scalar()
        except DBAPIError:  # e.g. max(rowid) on a WITHOUT ROWID table
            return default

    def _prefix(self) -> str:
        return f"{self.quote(self.schema)}." if self.schema else ""

    def _table_kinds(self, inspector: Inspector, schema: str | None, kind: str) -> set[str]:
        """Names of ``PRAGMA table_list``'s ``kind`` (``shadow``, ``virtual``) in ``schema``."""
        rows = inspector.bind.exec_driver_sql(
            "SELECT name FROM pragma_table_list WHERE schema = ? AND type = ?",
            (schema or "main", kind))
        return {name for (name,) in rows}

    def _internal_tables(self, inspector: Inspector, schema: str | None) -> set[str]:
        # An FTS5 or R*Tree table's data tables (docs_data, docs_idx, boxes_node...).
        return self._table_kinds(inspector, schema, "shadow")

    def _fragile(self, inspector: Inspector, schema: str | None, tables: list[str],
                 views: set[str]) -> set[str]:
        # A virtual table's module may be missing ("no such module") or, as R*Tree, prepare
        # writes when it connects, which the read-only authorizer refuses.
        return super()._fragile(inspector, schema, tables, views) | (
            self._table_kinds(inspector, schema, "virtual") & set(tables))

    # -- enum screening of big tables ---------------------------------------------------------
    def sample_source(self, conn: Connection, base: TableClause, table_info: TableInfo,
                      settings: EnumScreeningSettings) -> FromClause:
        """Evenly spaced rowid windows (index seeks, no full scan); the base sample for a
        WITHOUT ROWID table or one with a column named ``rowid``."""
        if table_info.column("rowid") is None:
            windows = _rowid_windows(conn, base, settings)
            if windows is not None:
                return windows
        return super().sample_source(conn, base, table_info, settings)

def _parse_index(name: str, sql: str) -> dict[str, Any]:
    """An index dict shaped like SQLAlchemy's Postgres one from a ``CREATE INDEX`` statement:
    an expression is None in ``column_names`` and has its SQL text in ``expressions``."""
    index: dict[str, Any] = {"name": name, "unique": False, "column_names": [],
                             "dialect_options": {}}
    try:
        create = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.ParseError:
        return index
    index["unique"] = bool(create.args.get("unique"))
    params = create.this.args.get("params") if isinstance(create.this, exp.Index) else None
    if params is None:
        return index
    texts: list[str] = []
    for item in params.args.get("columns") or []:
        expression = item.this if isinstance(item, exp.Ordered) else item
        is_column = isinstance(expression, exp.Column)
        index["column_names"].append(expression.name if is_column else None)
        texts.append(expression.name if is_column else expression.sql(dialect="sqlite"))
    if None in index["column_names"]:
        index["expressions"] = texts  # like Postgres: every element's text, in order
    if params.args.get("where") is not None:
        index["dialect_options"]["sqlite_where"] = params.args["where"].this.sql("sqlite")
    return index


def _rowid_windows(conn: Connection, base: FromClause,
                   settings: EnumScreeningSettings) -> FromClause | None:
    """``sample_size`` rows from evenly spaced rowid windows; None for WITHOUT ROWID."""
    rowid = literal_column("rowid")
    # Each bound in its own scalar subquery: SQLite answers a lone min()/max() of the rowid
    # from the b-tree's first/last entry, but ``SELECT min(rowid), max(rowid)`` in one
    # SELECT is a full table scan (85 ms at 1M rows, 780 ms at 10M).
    bounds = [select(bound(rowid)).select_from(base).scalar_subquery()
              for bound in (func.min, func.max)]
    try:
        low, high = conn.execute(select(*bounds)).one()
    except DBAPIError:  # WITHOUT ROWID table: no rowid to seek on
        return None
    if low is None:
        return None
    count = max(1, settings.sqlite_sample_windows)
    step = max(1, (high - low + 1) // count)
    per_window = max(1, settings.sample_size // count)
    parts: list[Select] = []
    for k in range(count):
        start = low + k * step
        upper = rowid <= high if k == count - 1 else rowid < start + step
        window = (select(*base.c).where(rowid >= start, upper).order_by(rowid)
                  .limit(per_window).subquery(f"w{k}"))
        parts.append(select(*window.c))
    return union_all(*parts).subquery("sample")
