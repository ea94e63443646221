"""PostgreSQL specifics: materialized views, PK-backing indexes, row counts, database comment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.engine.reflection import Inspector, ObjectKind
from sqlalchemy.exc import DBAPIError

from nl2sql.inspection.base import DbSchemaInspector, ReflectedSchema, RowCount

# SQLAlchemy has no row-count API. One query for the whole schema: the planner's estimate
# (pg_class.reltuples, -1 when never analyzed) and the main-fork size, which decides whether an
# exact count is cheap. A partitioned parent has no storage of its own: sum its leaves.
_SIZES_SQL = text("""
SELECT c.relname AS name,
       c.reltuples::bigint AS estimate,
       CASE WHEN c.relkind = 'p'
            THEN (SELECT coalesce(sum(pg_relation_size(t.relid)), 0)
                  FROM pg_partition_tree(c.oid) AS t WHERE t.isleaf)
            ELSE pg_relation_size(c.oid) END AS bytes
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = :schema AND c.relkind IN ('r', 'p')
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


class PostgresSchemaInspector(DbSchemaInspector):
    # Materialized views are queryable like views: list them, flagged as views.
    reflect_kind = ObjectKind.ANY
    #: Tables whose main fork is at most this big are counted exactly; bigger ones estimated.
    exact_count_max_bytes = 32 * 1024 * 1024
    #: Exact counts run as UNION ALL statements of this many tables (few round trips).
    count_batch_size = 200

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
            # E.g. no SELECT privilege on one of them: keep the estimates for this batch.
            conn.rollback()
            return {}
        return {names[i]: RowCount(n) for i, n in rows}

    def database_comment(self, conn: Connection) -> str | None:
        return conn.execute(_DATABASE_COMMENT_SQL).scalar()
