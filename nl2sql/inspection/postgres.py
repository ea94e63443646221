"""PostgreSQL specifics: materialized views, PK-backing indexes, row counts, database comment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (Connection, FromClause, TableClause, func, literal_column, select,
                        tablesample, text)
from sqlalchemy.engine.reflection import Inspector, ObjectKind
from sqlalchemy.exc import DBAPIError

from nl2sql.inspection.base import DbSchemaInspector, ReflectedSchema, RowCount
from nl2sql.inspection.check_lists import allowed_values
from nl2sql.inspection import postgres_batches
from nl2sql.inspection.statistics import ColumnStats, EnumScreeningSettings, Relation
from nl2sql.schema.models import EnumValueCount, TableInfo

# SQLAlchemy has no row-count API. One query for the whole schema: the planner's estimate
# (pg_class.reltuples, -1 when never analyzed) and the main-fork size, which decides whether an
# exact count is cheap. A partitioned parent has no storage of its own: sum its leaves (its own
# reltuples is set only by an ANALYZE of the parent, which autovacuum never runs).
_SIZES_SQL = text("""
SELECT c.relname AS name,
       CASE WHEN c.relkind = 'p'
            THEN (SELECT coalesce(CASE WHEN bool_and(l.reltuples < 0) THEN -1
                                       ELSE sum(greatest(l.reltuples, 0)) END, -1)::bigint
                  FROM pg_partition_tree(c.oid) AS t JOIN pg_class AS l ON l.oid = t.relid
                  WHERE t.isleaf)
            ELSE c.reltuples::bigint END AS estimate,
       CASE WHEN c.relkind = 'p'
            THEN (SELECT coalesce(sum(pg_relation_size(t.relid)), 0)
                  FROM pg_partition_tree(c.oid) AS t WHERE t.isleaf)
            ELSE pg_relation_size(c.oid) END AS bytes
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = :schema AND c.relkind IN ('r', 'p')
""")

# SQLAlchemy lists a partitioned table's partitions as tables of their own.
_PARTITIONS_SQL = text("""
SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = :schema AND c.relispartition
""")

# SQLAlchemy reflects table and column comments but not COMMENT ON DATABASE.
_DATABASE_COMMENT_SQL = text("""
SELECT shobj_description(d.oid, 'pg_database')
FROM pg_database AS d WHERE d.datname = current_database()
""")

# Only for columns SQLAlchemy reflected as NullType (types it does not know): their name.
_DECLARED_TYPES_SQL = text("""
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod)
FROM pg_attribute AS a
JOIN pg_class AS c ON c.oid = a.attrelid
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = :schema AND c.relname = ANY(:tables) AND a.attnum > 0 AND NOT a.attisdropped
""")


# Whether the login may SELECT any column of a relation (a column grant): hand-written, as
# SQLAlchemy has no privilege API.
_COLUMN_PRIVILEGE_SQL = text("""
SELECT bool_or(has_column_privilege(c.oid, a.attnum, 'SELECT'))
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE n.nspname = :schema AND c.relname = :name
""")


class PostgresSchemaInspector(DbSchemaInspector):
    # Materialized views are queryable like views: list them, flagged as views.
    reflect_kind = ObjectKind.ANY
    parallel_reflection = True
    #: Tables whose main fork is at most this big are counted exactly; bigger ones estimated.
    exact_count_max_bytes = 32 * 1024 * 1024
    #: Exact counts run as UNION ALL statements of this many tables (few round trips).
    count_batch_size = 200
    unnest_function = "unnest"
    json_keys_sql = ("SELECT k, count(*) AS n FROM ({rows}) AS s, jsonb_object_keys(CASE WHEN "
                     "jsonb_typeof(s.j::jsonb) = 'object' THEN s.j::jsonb END) AS k "
                     "GROUP BY k ORDER BY n DESC, k LIMIT {keys}")

    def _table_names(self, inspector: Inspector, schema: str | None) -> list[str]:
        # SQLAlchemy lists foreign tables (postgres_fdw, file_fdw...) apart: they are tables
        # to a query, their rows on another server (no local size: no row count).
        return [*super()._table_names(inspector, schema),
                *inspector.get_foreign_table_names(schema=schema)]

    def _internal_tables(self, inspector: Inspector, schema: str | None) -> set[str]:
        # A partition holds part of its table's rows: the partitioned table is the one to
        # query (a schema of monthly partitions would list each month as a table).
        return set(inspector.bind.execute(_PARTITIONS_SQL, {"schema": schema or self.schema})
                   .scalars())

    def _prepare_schemas(self, conn: Connection) -> None:
        # Postgres prints a foreign key's target without its schema when the search_path
        # reaches it; with several schemas that is ambiguous, so reflect with none on it
        # (SET LOCAL: gone when this read-only transaction ends).
        conn.exec_driver_sql("SET LOCAL search_path TO pg_catalog")

    def _view_names(self, inspector: Inspector) -> list[str]:
        return [*inspector.get_view_names(schema=self.schema),
                *inspector.get_materialized_view_names(schema=self.schema)]

    def _declared_types(self, conn: Connection,
                        tables: Sequence[str]) -> dict[tuple[str, str], str]:
        rows = conn.execute(_DECLARED_TYPES_SQL, {"schema": self.schema, "tables": list(tables)})
        return {(table, column): declared for table, column, declared in rows}

    def _index_type(self, index: dict[str, Any]) -> str:
        # SQLAlchemy reports the access method only when it is not btree (the default), so
        # no pg_am query of our own is needed.
        options = index.get("dialect_options") or {}
        return options.get("postgresql_using") or self.default_index_type

    def _complete_indexes(self, conn: Connection, reflected: ReflectedSchema) -> None:
        super()._complete_indexes(conn, reflected)
        # get_multi_indexes leaves out the index backing the primary key; the constraint and
        # its index share the name, and it is always a unique btree.
        for name, pk in reflected.primary_keys.items():
            columns = pk.get("constrained_columns") or []
            if not columns:
                continue
            indexes = reflected.indexes.setdefault(name, [])
            indexes.append({"name": pk.get("name"), "column_names": list(columns),
                            "unique": True, "is_primary": True,
                            "index_type": self.default_index_type, "dialect_options": {}})
            indexes.sort(key=lambda index: index.get("name") or "")

    def refuses_for_good(self, exc: DBAPIError, table_info: TableInfo) -> bool:
        if getattr(exc.orig, "sqlstate", None) != "42501":  # insufficient_privilege
            return False
        try:
            with self.connection.connect() as conn:
                return not conn.execute(_COLUMN_PRIVILEGE_SQL, {
                    "schema": table_info.schema_name or self.schema,
                    "name": table_info.relation_name}).scalar()
        except DBAPIError:
            return True

    def native_enum_values(self, column: dict[str, Any]) -> list[str] | None:
        """The labels of a column of an enum type (``CREATE TYPE mood AS ENUM (...)``), in
        their order, as SQLAlchemy reflects them from ``pg_enum``: complete, whatever the
        table's size (screening would see a sample of a big one); or of a domain whose check
        lists them (``CREATE DOMAIN status AS text CHECK (VALUE IN ('open', 'closed'))``)."""
        values = getattr(column["type"], "enums", None)
        if values:
            return list(values)
        check = getattr(column["type"], "check", None)  # a DOMAIN's
        allowed = allowed_values(str(getattr(check, "text", check)), "postgres") \
            if check is not None else None
        return allowed[1] if allowed and allowed[0].upper() == "VALUE" else None

    def row_counts(self, conn: Connection, tables: Sequence[str]) -> dict[str, RowCount]:
        """Exact counts for small tables (size 0 means empty: no query), ``reltuples`` for
        big ones (an estimate), None for big tables that were never analyzed."""
        wanted = set(tables)
        counts: dict[str, RowCount] = {}
        to_count: list[str] = []
        for name, estimate, size in conn.execute(_SIZES_SQL, {"schema": self.schema}):
            if name not in wanted:
                continue
            if size == 0:
                counts[name] = RowCount(0)
            elif size <= self.exact_count_max_bytes:
                to_count.append(name)
            counts.setdefault(name, RowCount(estimate if estimate >= 0 else None, True))
        for start in range(0, len(to_count), self.count_batch_size):
            counts.update(self._exact_counts(conn, to_count[start:start + self.count_batch_size]))
        return counts

    def _exact_counts(self, conn: Connection, names: list[str]) -> dict[str, RowCount]:
        query = " UNION ALL ".join(
            f"SELECT {i} AS i, count(*) AS n FROM {self.qualified_name(name)}"
            for i, name in enumerate(names))
        try:
            rows = conn.exec_driver_sql(query).all()
        except DBAPIError:
            # E.g. no SELECT privilege on one of them: that one keeps its estimate, the others
            # are counted one by one.
            conn.rollback()
            if len(names) == 1:
                return {}
            return {name: count for one in names
                    for name, count in self._exact_counts(conn, [one]).items()}
        return {names[i]: RowCount(n) for i, n in rows}

    def database_comment(self, conn: Connection) -> str | None:
        return conn.execute(_DATABASE_COMMENT_SQL).scalar()

    # -- enum screening of big tables ---------------------------------------------------------
    def planner_stats(self, conn: Connection, schema: str | None, table_name: str,
                      names: list[str], row_count: int,
                      settings: EnumScreeningSettings) -> dict[str, ColumnStats]:
        """Candidates from ``pg_stats`` for columns ANALYZE has covered (no table scan at all).

        Hand-written catalog SQL: SQLAlchemy has no API for planner statistics.
        """
        query = text(
            "SELECT attname, null_frac, n_distinct, most_common_vals::text::text[] AS mcv, "
            "most_common_freqs AS mcf FROM pg_catalog.pg_stats "
            "WHERE schemaname = :schema AND tablename = :table AND attname = ANY(:names) "
            "ORDER BY inherited")
        result: dict[str, ColumnStats] = {}
        rows = conn.execute(query, {"schema": schema or "public", "table": table_name,
                                    "names": names})
        for name, null_frac, n_distinct, mcv, mcf in rows:
            if name in result or n_distinct is None:
                continue
            non_null = max(0, round(row_count * (1 - (null_frac or 0.0))))
            distinct = int(n_distinct if n_distinct > 0 else round(-n_distinct * row_count))
            if distinct <= settings.max_values:
                # Trust the list only when it covers (nearly) every non-null row.
                covered = sum(mcf or []) >= (1 - (null_frac or 0.0)) * 0.99
                if not mcv or not covered:
                    continue  # the sampled query below decides
                values = [EnumValueCount(value=v, count=round(f * row_count))
                          for v, f in sorted(zip(mcv, mcf), key=lambda vf: (-vf[1], vf[0]))]
                result[name] = ColumnStats(values=values, distinct_count=len(values),
                                           non_null_rows=non_null,
                                           max_length=max(len(v) for v in mcv), source="pg_stats")
            else:
                # Too many values for an enum; the most common ones still serve the context
                # engine's value index (``apply_stats`` ignores them: not a candidate).
                values = [EnumValueCount(value=v, count=round(f * row_count))
                          for v, f in zip(mcv or [], mcf or [])]
                result[name] = ColumnStats(values=values, distinct_count=distinct,
                                           non_null_rows=non_null, source="pg_stats")
        return result

    def sample_source(self, conn: Connection, base: TableClause, table_info: TableInfo,
                      settings: EnumScreeningSettings) -> FromClause:
        if not table_info.row_count:
            return super().sample_source(conn, base, table_info, settings)
        # Block sampling reads only the chosen pages; REPEATABLE keeps runs deterministic.
        percent = min(100.0, 100.0 * settings.sample_size / table_info.row_count)
        sampled = tablesample(base, func.system(percent), name="sampled",
                              seed=literal_column("0"))
        return select(*sampled.c).subquery("sample")

    # -- offline steps over many tables per statement (``postgres_batches``) ----------------
    batch_size = 200

    def sample_rows_many(self, conn: Connection, relations: Sequence[Relation],
                         rows: int) -> dict[str, list[tuple[Any, ...]]]:
        return postgres_batches.sample_rows(conn, relations, rows)

    def grouped_counts_many(self, conn: Connection, relations: Sequence[Relation],
                            fetch: int) -> dict[str, dict[str, ColumnStats]]:
        return postgres_batches.grouped_counts(conn, relations, fetch)
