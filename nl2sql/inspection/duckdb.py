"""DuckDB inspection through DuckDB's own catalog functions, not SQLAlchemy reflection.

Why: duckdb_engine reflects through DuckDB's emulation of Postgres' ``pg_catalog``, and that
path fails for foreign keys (``CAST(... AS REGCLASS)`` does not exist in DuckDB) and reports
no indexes; ``duckdb_tables()``, ``duckdb_columns()``, ``duckdb_constraints()``,
``duckdb_indexes()`` and ``duckdb_views()`` answer everything in five small queries, with
comments, declared types and composite keys. Views over configured files count as tables
(users see them as their tables): they get row counts and enum screening on a sample
(``USING SAMPLE``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlalchemy import (ColumnElement, Connection, Double, FromClause, String, TableClause,
                        cast, column, text)
from sqlalchemy.exc import DBAPIError
from sqlalchemy.types import NullType
from sqlglot import exp

from nl2sql.errors import ConfigError
from nl2sql.inspection.base import (DbSchemaInspector, ReflectedSchema, RowCount,
                                    merge_schemas, warn_left_out)
from nl2sql.inspection.statistics import EnumScreeningSettings
from nl2sql.schema.models import TableInfo

if TYPE_CHECKING:
    from nl2sql.db.duckdb import FileView

# The configured schema of the database's own catalog, plus the temporary views over files.
_SCOPE = ("((database_name = current_database() AND schema_name = COALESCE(:schema, "
          "current_schema())) OR (database_name = 'temp' AND :files))")
_TABLES = text(f"SELECT table_name, comment, estimated_size FROM duckdb_tables() "
               f"WHERE {_SCOPE} AND NOT internal")
_VIEWS = text(f"SELECT view_name, comment, temporary FROM duckdb_views() "
              f"WHERE {_SCOPE} AND NOT internal")
_COLUMNS = text(f"SELECT table_name, column_name, data_type, is_nullable, column_default, "
                f"comment FROM duckdb_columns() WHERE {_SCOPE} AND NOT internal "
                f"ORDER BY table_name, column_index")
_CONSTRAINTS = text(f"SELECT table_name, constraint_type, constraint_name, "
                    f"constraint_column_names, referenced_table, referenced_column_names "
                    f"FROM duckdb_constraints() WHERE {_SCOPE} AND constraint_type IN "
                    f"('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY') ORDER BY constraint_index")
_INDEXES = text(f"SELECT table_name, index_name, is_unique, expressions FROM duckdb_indexes() "
                f"WHERE {_SCOPE}")
# The database's own schemas (``main`` is an internal one) and how many tables and views each
# has.
_SCHEMAS = text("SELECT s.schema_name, (SELECT count(*) FROM duckdb_tables() t WHERE "
                "t.database_name = s.database_name AND t.schema_name = s.schema_name AND NOT "
                "t.internal) + (SELECT count(*) FROM duckdb_views() v WHERE v.database_name = "
                "s.database_name AND v.schema_name = s.schema_name AND NOT v.internal) "
                "FROM duckdb_schemas() s WHERE s.database_name = current_database()")
_ENUM_TYPE = re.compile(r"^\s*ENUM\s*\((.*)\)\s*$", re.IGNORECASE | re.DOTALL)
_LABEL = re.compile(r"'((?:[^']|'')*)'")
# DuckDB names its CHECK constraints itself: the condition alone is kept.
_CHECKS = text(f"SELECT table_name, expression FROM duckdb_constraints() "
               f"WHERE {_SCOPE} AND constraint_type = 'CHECK' ORDER BY constraint_index")


class DuckdbSchemaInspector(DbSchemaInspector):
    #: DuckDB's index structure (explicit indexes and those behind PRIMARY KEY/UNIQUE).
    default_index_type = "art"
    #: Tables whose size estimate is at most this many rows are counted exactly.
    exact_count_max_rows = 5_000_000
    #: Text files (CSV, JSON lines) up to this size are counted exactly; a bigger one would be
    #: read whole for count(*), so its rows are estimated from its size and its first lines.
    exact_count_max_file_bytes = 64 << 20
    #: How much of a big text file the estimate reads.
    estimate_sample_bytes = 1 << 20
    unnest_function = "unnest"
    json_keys_sql = ("SELECT k, count(*) AS n FROM (SELECT unnest(json_keys(CASE WHEN "
                     "json_type(CAST(j AS JSON)) = 'OBJECT' THEN CAST(j AS JSON) END)) AS k "
                     "FROM ({rows}) AS s) AS t GROUP BY k ORDER BY n DESC, k LIMIT {keys}")

    def reflect_with(self, conn: Connection) -> ReflectedSchema:
        """The configured schema, or several (``schema: [main, crm]`` or ``'*'``) keyed by
        schema-qualified names as on the other backends; the file views go with one schema
        (they are not in the database's schemas)."""
        wanted = self.connection.config.schemas
        if wanted is None:
            return self._reflect_one(conn, files=bool(self.connection.config.files))
        if self.connection.config.files:
            raise ConfigError(f"Database '{self.connection.db_id}': 'files' and several "
                              f"schemas together are not read; set one 'schema' (or none) in "
                              f"dbs.yaml.", db_id=self.connection.db_id)
        existing = {name: count for name, count in conn.execute(_SCHEMAS)}
        if wanted == ["*"]:
            schemas = sorted(name for name, count in existing.items() if count)
        else:
            schemas = wanted
            for schema in schemas:
                if schema not in existing:
                    raise ConfigError(
                        f"Database '{self.connection.db_id}' has no schema '{schema}' (it has: "
                        f"{', '.join(sorted(existing))}); fix 'schema' in dbs.yaml.",
                        db_id=self.connection.db_id)
        parts = []
        for schema in schemas:
            self._reflecting = schema
            try:
                parts.append(self._reflect_one(conn, files=False))
            finally:
                self._reflecting = None
        return merge_schemas(parts, schemas)

    def _reflect_one(self, conn: Connection, *, files: bool) -> ReflectedSchema:
        params = {"schema": self.schema, "files": files}
        tables, comments, estimates = [], {}, {}
        for name, comment, size in conn.execute(_TABLES, params):
            tables.append(name)
            comments[name], estimates[name] = comment, size
        views: set[str] = set()
        listed = conn.execute(_VIEWS, params).all()
        broken = self._unbound_views([name for name, _, temporary in listed if not temporary])
        for name, comment, temporary in listed:
            if name in broken:
                continue
            comments[name] = comment
            (tables.append(name) if temporary else views.add(name))  # file views are tables
        if self.schema is not None and not tables and not views:
            raise ConfigError(f"Database '{self.connection.db_id}' has no schema "
                              f"'{self.schema}' or it is empty; fix 'schema' in dbs.yaml.",
                              db_id=self.connection.db_id)
        columns: dict[str, list[dict[str, Any]]] = {}
        for table, name, data_type, nullable, default, comment in conn.execute(_COLUMNS, params):
            if table in broken:
                continue
            columns.setdefault(table, []).append({
                "name": name, "type": NullType(), "declared_type": data_type,
                "nullable": bool(nullable), "default": default, "comment": comment})
        primary_keys: dict[str, dict[str, Any]] = {}
        foreign_keys: dict[str, list[dict[str, Any]]] = {}
        uniques: dict[str, list[dict[str, Any]]] = {}
        indexes: dict[str, list[dict[str, Any]]] = {}
        for table, kind, name, names, referred, referred_names in conn.execute(_CONSTRAINTS,
                                                                              params):
            if kind == "PRIMARY KEY":
                primary_keys[table] = {"name": name, "constrained_columns": list(names)}
                indexes.setdefault(table, []).append(self._index(name, names, True, True))
            elif kind == "UNIQUE":
                uniques.setdefault(table, []).append({"name": name, "column_names": list(names)})
                indexes.setdefault(table, []).append(self._index(name, names, True, False))
            else:
                foreign_keys.setdefault(table, []).append({
                    "name": name, "constrained_columns": list(names),
                    "referred_schema": None, "referred_table": referred,
                    "referred_columns": list(referred_names), "options": {}})
        for table, name, unique, expressions in conn.execute(_INDEXES, params):
            names = [e.strip().strip('"') for e in str(expressions or "").strip("[]").split(",")
                     if e.strip()]
            indexes.setdefault(table, []).append(self._index(name, names, bool(unique), False))
        for entries in indexes.values():
            entries.sort(key=lambda index: index["name"] or "")
        checks: dict[str, list[dict[str, Any]]] = {}
        for table, expression in conn.execute(_CHECKS, params):
            try:
                condition = sqlglot.parse_one(expression, read="duckdb")
            except sqlglot.errors.SqlglotError:
                condition = None  # shown as DuckDB reports it
            if isinstance(condition, exp.Paren):  # "(qty > 0)"
                expression = condition.this.sql(dialect="duckdb")
            checks.setdefault(table, []).append({"name": None, "sqltext": expression})
        reflected = ReflectedSchema(
            schema=self.schema, tables=sorted(tables), views=views, columns=columns,
            primary_keys=primary_keys, foreign_keys=foreign_keys, indexes=indexes,
            unique_constraints=uniques, comments=comments, check_constraints=checks)
        reflected.row_counts = self._counts(conn, reflected.tables, estimates)
        return reflected

    def native_enum_values(self, column: dict[str, Any]) -> list[str] | None:
        """The labels of an ``ENUM`` type (``CREATE TYPE mood AS ENUM (...)``, reported as
        ``ENUM('sad', 'ok')``), in their order."""
        declared = _ENUM_TYPE.match(str(column.get("declared_type") or ""))
        if declared is None:
            return None
        return [label.replace("''", "'") for label in _LABEL.findall(declared.group(1))] or None

    def _unbound_views(self, views: Sequence[str]) -> set[str]:
        """The ``views`` DuckDB cannot bind (``DESCRIBE`` runs nothing), one warning each:
        DuckDB keeps a view whose table was dropped, and its columns as they were. Checked on
        a connection of their own: a failed statement aborts its transaction."""
        broken: set[str] = set()
        if not views:
            return broken
        with self.connection.connect() as conn:
            for view in views:
                try:
                    conn.exec_driver_sql(f"DESCRIBE {self.qualified_name(view)}")
                except DBAPIError as exc:
                    warn_left_out(view, exc)
                    broken.add(view)
                    conn.rollback()
        return broken

    def sample_column(self, column: ColumnElement[Any], data_type: str) -> ColumnElement[Any]:
        # A FLOAT by its shortest digits (0.1), as results write it, not its double's.
        if data_type.upper() == "FLOAT":
            return cast(cast(column, String), Double).label(column.key)
        return column

    def _index(self, name: str, columns: Sequence[str], unique: bool,
               primary: bool) -> dict[str, Any]:
        return {"name": name, "column_names": list(columns), "unique": unique,
                "is_primary": primary, "index_type": self.default_index_type,
                "dialect_options": {}}

    def _counts(self, conn: Connection, tables: Sequence[str],
                estimates: dict[str, int]) -> dict[str, RowCount]:
        counts: dict[str, RowCount] = {}
        files = self.connection.views if self.connection.config.files else {}
        for name in tables:
            estimate = estimates.get(name)
            if name in files:  # a file view: Parquet knows its count, a big text file does not
                estimate = self._text_files_rows(files[name])
            if estimate is not None and (name in files or estimate > self.exact_count_max_rows):
                counts[name] = RowCount(int(estimate), True)
                continue
            exact = conn.exec_driver_sql(f"SELECT count(*) FROM {self.qualified_name(name)}")
            counts[name] = RowCount(int(exact.scalar() or 0))
        return counts

    def row_counts(self, conn: Connection, tables: Sequence[str]) -> dict[str, RowCount]:
        return self._counts(conn, tables, {})

    def _text_files_rows(self, view: FileView) -> int | None:
        """Estimated rows of a view's uncompressed CSV or JSON-lines files when together they
        are over the exact-count size (each file's size over the mean length of its first
        lines, less a header line); None when the view is counted exactly (small, Parquet,
        compressed or JSON documents)."""
        if (view.reader == "read_parquet"
                or sum(path.stat().st_size for path in view.files)
                <= self.exact_count_max_file_bytes
                or any(path.suffix.lower() in (".gz", ".zst", ".json") for path in view.files)):
            return None
        total = 0
        for path in view.files:
            estimate = self._text_file_rows(path, view.reader)
            if estimate is None:  # no line in its first bytes: count them all exactly
                return None
            total += estimate
        return total

    def _text_file_rows(self, path: Path, reader: str) -> int | None:
        """One text file's estimated rows (None: no line in its first bytes)."""
        size = path.stat().st_size
        with path.open("rb") as file:
            head = file.read(self.estimate_sample_bytes)
        lines = head.count(b"\n")
        if not lines:
            return None
        header = 1 if reader == "read_csv" else 0
        return max(round(size * lines / len(head)) - header, 0)

    # -- enum screening of big tables -----------------------------------------------------
    def sample_source(self, conn: Connection, base: TableClause, table_info: TableInfo,
                      settings: EnumScreeningSettings) -> FromClause:
        """A reservoir sample of ``sample_size`` rows (``USING SAMPLE``), seeded: repeatable."""
        names = [c.name for c in base.c]
        listed = ", ".join(self.quote(n) for n in names)
        sampled = text(f"SELECT {listed} FROM {self.qualified_name(table_info.name)} "
                       f"USING SAMPLE reservoir({int(settings.sample_size)} ROWS) "
                       f"REPEATABLE (0)")
        return sampled.columns(*[column(n) for n in names]).subquery("sample")
