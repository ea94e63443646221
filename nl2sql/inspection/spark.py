"""Spark SQL schema inspection from the catalog of a Spark Connect session.

Per database: ``spark.catalog.listTables`` (tables and views; session temporary views left
out), then per table ``listColumns`` (types, nullability, comments, partition columns) and
``DESCRIBE TABLE EXTENDED`` (table comment, properties, provider, catalog statistics and, where
the catalog keeps them, informational PRIMARY/FOREIGN KEY constraints), a few tables at a time.

Row counts come from catalog statistics (``ANALYZE TABLE ... COMPUTE STATISTICS``) when present,
else from one bounded count of all tables (``count(*)`` over at most ``count_bound + 1`` rows);
``row_count_source`` in the cache says which ("statistics", "count" or "bounded_count", the
last a lower bound marked as an estimate). Big tables are sampled with ``TABLESAMPLE (n ROWS)``
(a LIMIT: Spark reads only the first splits), never scanned whole.

Keys: informational constraints when the catalog has them; otherwise the primary key is
inferred from names (``AlbumId`` in ``album``, ``id``) and checked to be unique and non-null on
tables up to ``verify_bound`` rows (``key_source: "inferred"`` in the cache). Foreign keys are
then implied by ``nl2sql.inspection.implied_keys`` at annotation, as on every backend (names,
types and a bounded value-containment check; ``inferred: true``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from sqlalchemy import FromClause, TableClause, column, text

from nl2sql.db.spark import arrow_rows, frame_table
from nl2sql.db.spark_sql import SparkDialect, SparkSqlConnection
from nl2sql.inspection.base import DbSchemaInspector, ReflectedSchema, RowCount
from nl2sql.inspection.statistics import EnumScreeningSettings
from nl2sql.schema.models import DbInfo, TableInfo

log = logging.getLogger(__name__)

_STATISTICS = re.compile(r"(\d+)\s+bytes(?:,\s*(\d+)\s+rows)?", re.IGNORECASE)
_PROPERTY = re.compile(r"([^=,\[\]]+)=([^,\]]*)")
_PK = re.compile(r"PRIMARY KEY\s*\(([^)]*)\)", re.IGNORECASE)
_FK = re.compile(r"FOREIGN KEY\s*\(([^)]*)\)\s*REFERENCES\s+([^\s(]+)\s*\(([^)]*)\)",
                 re.IGNORECASE)


def _names(text_: str) -> list[str]:
    return [part.strip().strip("`") for part in text_.split(",") if part.strip()]


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


class SparkSchemaInspector(DbSchemaInspector):
    default_index_type = None  # type: ignore[assignment]  # Spark has no indexes
    #: Tables without catalog statistics are counted up to this many rows.
    count_bound: ClassVar[int] = 1_000_000
    #: Inferred primary keys are checked for uniqueness on tables up to this many rows.
    verify_bound: ClassVar[int] = 100_000
    #: Catalog calls in flight at once.
    threads: ClassVar[int] = 4
    unnest_function = "explode"

    _preparer = SparkDialect().identifier_preparer

    def quote(self, identifier: str) -> str:
        return self._preparer.quote(identifier)

    # -- reflection -------------------------------------------------------------------------
    def reflect_with(self, conn: SparkSqlConnection) -> ReflectedSchema:  # type: ignore[override]
        session = conn.session
        database = self.schema
        listed = [t for t in session.catalog.listTables(dbName=database) if not t.isTemporary]
        views = {t.name for t in listed if (t.tableType or "").upper() == "VIEW"}
        names = sorted(t.name for t in listed)
        with ThreadPoolExecutor(self.threads) as pool:
            details = dict(zip(names, pool.map(lambda n: self._describe(session, n), names)))
        reflected = ReflectedSchema(
            schema=database, tables=[n for n in names if n not in views], views=views,
            columns={n: d["columns"] for n, d in details.items()},
            primary_keys={n: d["primary_key"] for n, d in details.items() if d["primary_key"]},
            foreign_keys={n: d["foreign_keys"] for n, d in details.items()},
            indexes={}, unique_constraints={},
            comments={n: d["comment"] for n, d in details.items()})
        self._extras = {n: d["extras"] for n, d in details.items()}
        reflected.row_counts = self._row_counts(conn, reflected.tables, details)
        reflected.database_comment = self._database_comment(session, database)
        return reflected

    def _describe(self, session: Any, name: str) -> dict[str, Any]:
        columns = session.catalog.listColumns(self.qualified_name(name))
        rows = arrow_rows(frame_table(
            session.sql(f"DESCRIBE TABLE EXTENDED {self.qualified_name(name)}")))
        section, detail, constraints = "", {}, []
        for row in rows:
            key, value = (row[0] or "").strip(), (row[1] or "").strip()
            if key.startswith("#"):
                section = key.lstrip("# ").lower()
                continue
            if "detailed" in section and key:
                detail[key] = value
            elif "constraint" in section and key:
                constraints.append(value)
        properties = dict((k.strip(), v.strip()) for k, v in
                          _PROPERTY.findall(detail.get("Table Properties", "")))
        stats = _STATISTICS.search(detail.get("Statistics", ""))
        primary_key: dict[str, Any] = {}
        foreign_keys = []
        for constraint in constraints:
            if match := _PK.search(constraint):
                primary_key = {"constrained_columns": _names(match[1]), "name": None}
            elif match := _FK.search(constraint):
                target = match[2].replace("`", "").split(".")
                foreign_keys.append({
                    "name": None, "constrained_columns": _names(match[1]),
                    "referred_table": target[-1], "referred_columns": _names(match[3]),
                    "referred_schema": target[-2] if len(target) > 1 else None})
        extras: dict[str, Any] = {
            "partition_columns": [c.name for c in columns if c.isPartition],
            "table_properties": properties or None,
            "provider": detail.get("Provider") or None,
            "key_source": "declared" if primary_key else None}
        return {
            "columns": [{"name": c.name, "declared_type": c.dataType.upper(),
                         "nullable": c.nullable, "comment": c.description or None,
                         "default": None} for c in columns],
            "primary_key": primary_key, "foreign_keys": foreign_keys,
            "comment": detail.get("Comment") or None,
            "statistics_rows": int(stats[2]) if stats and stats[2] else None,
            "extras": {k: v for k, v in extras.items() if v is not None}}

    def _database_comment(self, session: Any, database: str | None) -> str | None:
        if not database:
            return None
        try:
            return session.catalog.getDatabase(database).description or None
        except Exception:  # noqa: BLE001 - no permission on the namespace: no comment
            return None

    def _row_counts(self, conn: SparkSqlConnection, tables: Sequence[str],
                    details: dict[str, dict[str, Any]]) -> dict[str, RowCount]:
        counts: dict[str, RowCount] = {}
        to_count = []
        for name in tables:
            rows = details[name]["statistics_rows"]
            if rows is not None:
                counts[name] = RowCount(rows)
                self._extras[name]["row_count_source"] = "statistics"
            else:
                to_count.append(name)
        if to_count:
            query = " UNION ALL ".join(
                f"SELECT {i} AS i, count(*) AS n FROM (SELECT 1 FROM {self.qualified_name(n)} "
                f"LIMIT {self.count_bound + 1})" for i, n in enumerate(to_count))
            for i, n in conn.execute(query):
                name = to_count[int(i)]
                bounded = int(n) > self.count_bound
                counts[name] = RowCount(self.count_bound if bounded else int(n), bounded)
                self._extras[name]["row_count_source"] = "bounded_count" if bounded else "count"
        return counts

    def row_counts(self, conn: Any, tables: Sequence[str]) -> dict[str, RowCount]:
        raise NotImplementedError  # counted inside reflect_with (statistics first)

    def column_type(self, conn: Any, column: dict[str, Any]) -> str:
        return column.get("declared_type") or ""

    # -- after the extraction: extras and inferred keys ---------------------------------------
    def finish(self, conn: SparkSqlConnection, info: DbInfo) -> None:
        extras = getattr(self, "_extras", {})
        for table in info.tables:
            for key, value in extras.get(table.name, {}).items():
                setattr(table, key, value)
        self._infer_keys(conn, info)

    def _infer_keys(self, conn: SparkSqlConnection, info: DbInfo) -> None:
        """Primary keys from names where the catalog declares none (foreign keys are then
        inferred and checked on data by ``nl2sql.inspection.implied_keys``, as for every
        backend)."""
        candidates: dict[str, str] = {}
        for table in info.tables:
            if table.is_view or table.primary_key:
                continue
            base = _normal(table.name)
            wanted = {"id", f"{base}id", f"{base.rstrip('s')}id", f"{re.sub('ies$', 'y', base)}id"}
            matches = [c.name for c in table.columns if _normal(c.name) in wanted]
            if len(matches) == 1:
                candidates[table.name] = matches[0]
        for name, key in self._unique_keys(conn, info, candidates).items():
            table = info.table(name)
            assert table is not None
            table.column(key).is_primary_key = True  # type: ignore[union-attr]
            table.key_source = "inferred"  # type: ignore[attr-defined]

    def _unique_keys(self, conn: SparkSqlConnection, info: DbInfo,
                     candidates: dict[str, str]) -> dict[str, str]:
        """The candidates that hold no NULL and no duplicate (checked on tables up to
        ``verify_bound`` rows; bigger ones keep their name-based key unchecked)."""
        small = [n for n in candidates
                 if (info.table(n).row_count or 0) <= self.verify_bound]  # type: ignore[union-attr]
        kept = {n: k for n, k in candidates.items() if n not in small}
        if small:
            query = " UNION ALL ".join(
                f"SELECT {i} AS i, count(*) = count(DISTINCT {self.quote(candidates[n])}) "
                f"AND count({self.quote(candidates[n])}) = count(*) AS ok "
                f"FROM {self.qualified_name(n)}" for i, n in enumerate(small))
            for i, ok in conn.execute(query):
                if ok:
                    kept[small[int(i)]] = candidates[small[int(i)]]
        return kept

    # -- enum screening of big tables -----------------------------------------------------------
    def sample_source(self, conn: Any, base: TableClause, table_info: TableInfo,
                      settings: EnumScreeningSettings) -> FromClause:
        names = [c.name for c in base.c]
        listed = ", ".join(self.quote(n) for n in names)
        source = self.qualified_name(table_info.relation_name)
        statement = text(f"SELECT {listed} FROM {source} "
                         f"TABLESAMPLE ({int(settings.sample_size)} ROWS)")
        return statement.columns(*[column(n) for n in names]).subquery("sample")
