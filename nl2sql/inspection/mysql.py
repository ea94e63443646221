"""MySQL / MariaDB specifics on top of SQLAlchemy's reflection: index types and the primary key
index, row counts from ``information_schema`` (exact only for small tables), native ENUM/SET
values, and index cardinalities for enum screening (no table scan)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, text
from sqlalchemy.engine.reflection import Inspector, ObjectKind
from sqlalchemy.exc import DBAPIError

from nl2sql.inspection.base import DbSchemaInspector, ReflectedSchema, RowCount, SomeColumns
from nl2sql.inspection.statistics import ColumnStats, EnumScreeningSettings
from nl2sql.schema.models import TableInfo

_SCHEMA = "COALESCE(:schema, DATABASE())"
# Every index with its access method (BTREE, HASH, FULLTEXT, SPATIAL) and cardinality.
_STATISTICS_SQL = text(f"""
SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME, NON_UNIQUE, INDEX_TYPE, CARDINALITY, SEQ_IN_INDEX
FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = {_SCHEMA}
ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX
""")
# InnoDB's TABLE_ROWS is an estimate kept by the engine: no scan. (MariaDB's system-versioned
# tables are tables too.)
_TABLE_ROWS_SQL = text(f"""
SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES
WHERE TABLE_SCHEMA = {_SCHEMA} AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')
""")

# The declared type of columns SQLAlchemy's MySQL dialect does not know (POINT, GEOMETRY,
# MariaDB's INET6, UUID...): it reflects them as NullType, without a name.
_DECLARED_TYPES_SQL = text(f"""
SELECT TABLE_NAME, COLUMN_NAME, UPPER(COLUMN_TYPE) FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = {_SCHEMA} AND TABLE_NAME IN :tables
""").bindparams(bindparam("tables", expanding=True))

# MariaDB's JSON is an alias: a LONGTEXT column with the column check ``json_valid(`c`)``, which
# SQLAlchemy reflects as LONGTEXT (and returns no column-level check for), so a model would not
# know to use JSON functions on it. The checks in the catalogue name those columns (hand-written
# catalogue SQL; MySQL has a real JSON type and no TABLE_NAME in this view).
_MARIADB_JSON_SQL = text(f"""
SELECT TABLE_NAME, CONSTRAINT_NAME FROM information_schema.CHECK_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = {_SCHEMA}
  AND CHECK_CLAUSE = CONCAT('json_valid(`', REPLACE(CONSTRAINT_NAME, '`', '``'), '`)')
""")

# MariaDB's CHECK constraints, column-level ones too (``status varchar(10) CHECK (status IN
# (...))``), which SQLAlchemy, reading ``SHOW CREATE TABLE``, leaves out (hand-written catalogue
# SQL; MySQL 8 makes every check a table's, which SQLAlchemy reads). Not the JSON columns' own.
_MARIADB_CHECKS_SQL = text(f"""
SELECT TABLE_NAME, CONSTRAINT_NAME, LEVEL, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = {_SCHEMA}
  AND CHECK_CLAUSE <> CONCAT('json_valid(`', REPLACE(CONSTRAINT_NAME, '`', '``'), '`)')
""")


#: Errors that refuse a relation until someone changes it or a grant: no privilege on the
#: database, table, column or routine; a view whose table, column or function is gone or whose
#: definer lacks the right; a view whose definer does not exist.
_LASTING_REFUSALS = frozenset({1044, 1142, 1143, 1227, 1356, 1370, 1449})


def _unescape_names(reflected: ReflectedSchema) -> None:
    """Column names as the server has them: SQLAlchemy reads them from ``SHOW CREATE TABLE``
    without undoing its quoting, so a column named ``a`b`` comes back ``a``b`` (and every query
    of it, the sample rows first, fails)."""
    def name(text: str) -> str:
        return text.replace("``", "`")

    for columns in reflected.columns.values():
        for column in columns:
            column["name"] = name(column["name"])
    for key in reflected.primary_keys.values():
        key["constrained_columns"] = [name(c) for c in key.get("constrained_columns") or []]
    for entries, fields in ((reflected.foreign_keys, ("constrained_columns", "referred_columns")),
                            (reflected.indexes, ("column_names",)),
                            (reflected.unique_constraints, ("column_names",))):
        for entry in (entry for listed in entries.values() for entry in listed):
            for field in fields:
                entry[field] = [name(c) if c else c for c in entry.get(field) or []]


class MysqlSchemaInspector(DbSchemaInspector):
    default_index_type = "BTREE"
    #: A view of a dropped table; on MariaDB also a view calling a function that writes,
    #: which it cannot describe inside a read-only transaction (error 1792).
    views_may_break = True
    #: Tables whose estimate is at most this many rows are counted exactly.
    exact_count_max_rows = 200_000
    #: JSON_TABLE: MySQL 8 and MariaDB 10.6 on.
    json_keys_sql = ("SELECT jt.k, count(*) AS n FROM ({rows}) AS s, JSON_TABLE(JSON_KEYS(s.j), "
                     "'$[*]' COLUMNS (k VARCHAR(255) PATH '$')) AS jt "
                     "GROUP BY jt.k ORDER BY n DESC, jt.k LIMIT {keys}")

    def _fragile(self, inspector: Inspector, schema: str | None, tables: list[str],
                 views: set[str]) -> set[str]:
        """Every relation: besides a broken view, a table the login holds only some columns of
        (``GRANT SELECT (a, b)``) cannot be described (``SHOW CREATE TABLE`` is denied, error
        1142), and SQLAlchemy describes each relation alone anyway (its descriptions are kept
        and reused): checking them all costs nothing more."""
        return {*tables, *views}

    def _some_columns(self, conn: Connection, schema: str | None, name: str,
                      refusal: Exception) -> SomeColumns | None:
        """A table the login holds only some columns of (``GRANT SELECT (a, b) ON t``): the
        server refuses ``SHOW CREATE TABLE`` (error 1142) but lists those columns in ``SHOW
        FULL COLUMNS``. Hand-written: SQLAlchemy reflects a MySQL table only from ``SHOW CREATE
        TABLE``; its own path for a view (``MySQLDialect._setup_parser``: the columns written
        as DDL, then its parser) turns them into reflection dicts here too."""
        code = (getattr(getattr(refusal, "orig", None), "args", ()) or (None,))[0]
        if code != 1142:
            return None
        qualified = self.qualified_name(name) if schema is None else \
            f"{self.quote(schema)}.{self.quote(name)}"
        try:
            rows = conn.exec_driver_sql(f"SHOW FULL COLUMNS FROM {qualified}").fetchall()
        except DBAPIError:
            return None
        if not rows:
            return None
        # Field, Type, Collation, Null, Key, Default, Extra, Privileges, Comment
        parser = conn.dialect._tabledef_parser  # type: ignore[attr-defined]
        # (its DESCRIBE rows: Field, Type, Null, Key, Default, Extra; a false Null: NOT NULL)
        ddl = parser._describe_to_create(name, [(r[0], r[1], r[3] == "YES", r[4], r[5], r[6])
                                                for r in rows])
        charset = conn.dialect._connection_charset  # type: ignore[attr-defined]
        columns = parser.parse(ddl, charset).columns
        for column, row in zip(columns, rows):
            column["comment"] = row[8] or None
        return SomeColumns(columns, [row[0] for row in rows if row[4] == "PRI"])

    def _complete_indexes(self, conn: Connection, reflected: ReflectedSchema) -> None:
        stats = self._statistics(conn)
        for table, indexes in reflected.indexes.items():
            for index in indexes:
                entry = stats.get((table, index.get("name")))
                if entry is not None:
                    index["index_type"] = entry["type"]
        super()._complete_indexes(conn, reflected)
        # SQLAlchemy leaves out the PRIMARY index; add it, as on Postgres.
        for (table, name), entry in stats.items():
            if name != "PRIMARY" or table not in reflected.columns:
                continue
            indexes = reflected.indexes.setdefault(table, [])
            indexes.append({"name": "PRIMARY", "column_names": entry["columns"],
                            "unique": True, "is_primary": True, "index_type": entry["type"],
                            "dialect_options": {}})
            indexes.sort(key=lambda index: index.get("name") or "")

    def _statistics(self, conn: Connection) -> dict[tuple[str, str], dict[str, Any]]:
        result: dict[tuple[str, str], dict[str, Any]] = {}
        for table, index, column, _non_unique, kind, cardinality, _seq in conn.execute(
                _STATISTICS_SQL, {"schema": self.schema}):
            entry = result.setdefault((table, index), {"columns": [], "type": kind,
                                                       "cardinality": cardinality})
            entry["columns"].append(column)
        return result

    def _declared_types(self, conn: Connection,
                        tables: Sequence[str]) -> dict[tuple[str, str], str]:
        rows = conn.execute(_DECLARED_TYPES_SQL, {"schema": self.schema, "tables": list(tables)})
        return {(table, column): declared for table, column, declared in rows}

    def _complete_types(self, conn: Connection, reflected: ReflectedSchema) -> None:
        _unescape_names(reflected)
        super()._complete_types(conn, reflected)
        if not getattr(conn.dialect, "is_mariadb", False):
            return
        json = {(table, column) for table, column in conn.execute(
            _MARIADB_JSON_SQL, {"schema": self.schema})}
        for table, columns in reflected.columns.items() if json else ():
            for column in columns:
                if (table, column["name"]) in json:
                    column["declared_type"] = "JSON"

    def _check_constraints(self, inspector: Inspector, schema: str | None, kind: ObjectKind,
                           only: dict[str, Any]) -> dict[tuple[str | None, str], Any]:
        conn = inspector.bind
        if not getattr(conn.dialect, "is_mariadb", False):
            return super()._check_constraints(inspector, schema, kind, only)
        wanted = set(only.get("filter_names") or ())
        found: dict[tuple[str | None, str], list[dict[str, Any]]] = {}
        for table, name, level, clause in conn.execute(  # type: ignore[union-attr]
                _MARIADB_CHECKS_SQL, {"schema": schema or self.schema}):
            if not wanted or table in wanted:
                found.setdefault((schema, table), []).append(
                    {"name": name if level == "Table" else None, "sqltext": clause})
        return found

    def refuses_for_good(self, exc: DBAPIError, table_info: TableInfo) -> bool:
        args = getattr(exc.orig, "args", ())
        return bool(args) and args[0] in _LASTING_REFUSALS

    def native_enum_values(self, column: dict[str, Any]) -> list[str] | None:
        """The values of a native ``ENUM``/``SET`` column, straight from its type."""
        kind = column["type"]
        values = getattr(kind, "enums", None) or getattr(kind, "values", None)  # ENUM / SET
        return list(values) if values else None

    def row_counts(self, conn: Connection, tables: Sequence[str]) -> dict[str, RowCount]:
        wanted = set(tables)
        counts: dict[str, RowCount] = {}
        for name, estimate in conn.execute(_TABLE_ROWS_SQL, {"schema": self.schema}):
            if name not in wanted:
                continue
            if estimate is not None and estimate <= self.exact_count_max_rows:
                try:
                    exact = conn.exec_driver_sql(
                        f"SELECT COUNT(*) FROM {self.qualified_name(name)}").scalar()
                    counts[name] = RowCount(int(exact))
                    continue
                except DBAPIError:
                    conn.rollback()  # e.g. no SELECT privilege: keep the estimate
            counts[name] = RowCount(None if estimate is None else int(estimate), True)
        return counts

    # -- enum screening of big tables -----------------------------------------------------
    def planner_stats(self, conn: Connection, schema: str | None, table_name: str,
                      names: list[str], row_count: int,
                      settings: EnumScreeningSettings) -> dict[str, ColumnStats]:
        """Columns that lead an index whose cardinality already rules them out as enums."""
        result: dict[str, ColumnStats] = {}
        for (table, _index), entry in self._statistics(conn).items():
            column = entry["columns"][0]
            cardinality = entry["cardinality"]
            if (table == table_name and column in names and cardinality is not None
                    and cardinality > settings.max_values):
                result[column] = ColumnStats(distinct_count=int(cardinality),
                                             non_null_rows=row_count, source="statistics")
        return result
