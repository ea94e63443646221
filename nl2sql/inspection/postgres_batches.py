"""Postgres: sample rows and enum-screening counts of many tables per statement.

The per-table path (``samples.collect_sample``, ``enums._grouped_counts``) sends one statement
per table, built with SQLAlchemy constructs; on a wide schema the round trips and the statement
building were most of ``annotate-schema``'s time. Here one statement covers a batch of tables,
and its text is assembled from string templates with identifiers quoted by the dialect's
identifier preparer (SQLAlchemy has no construct for a UNION ALL whose branches have different
column lists, and building one construct per table was the cost being removed).

Results equal the per-table path's:
- Sample rows travel as a ``text[]`` per row, each cell the column type's output function
  (``concat(v)``, exactly what the server sends in text format), and are turned into
  Python values by the connection's own psycopg loader for the type the server would have
  reported (a domain reports its base type), so the values are the ones a plain
  ``SELECT`` would have returned. The ordering and limit are the per-table query's.
- Enum counts: the same grouping, ranking and limit per column, each column ranked in its own
  branch (so each keeps its own collation, as in the per-table statement).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from psycopg.adapt import Transformer
from psycopg.pq import Format
from sqlalchemy import Connection, text

from nl2sql.inspection.statistics import ColumnStats, Relation
from nl2sql.schema.models import EnumValueCount

# Hand-written catalog SQL (SQLAlchemy's reflection does not report type OIDs): the type the
# server reports for each column's values, a domain resolved to its base type (as the server
# does in a row description), so the right psycopg loader can be picked.
_COLUMN_TYPES_SQL = text("""
WITH RECURSIVE cols AS (
    SELECT n.nspname AS schema_name, c.relname AS table_name, a.attname AS column_name,
           a.atttypid AS type_oid
    FROM pg_catalog.pg_attribute AS a
    JOIN pg_catalog.pg_class AS c ON c.oid = a.attrelid
    JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
    WHERE n.nspname = ANY(:schemas) AND c.relname = ANY(:tables)
      AND a.attnum > 0 AND NOT a.attisdropped
), base(type_oid, oid) AS (
    SELECT t.oid, t.oid FROM pg_catalog.pg_type AS t
    WHERE t.oid IN (SELECT type_oid FROM cols)
    UNION ALL
    SELECT b.type_oid, t.typbasetype FROM base AS b
    JOIN pg_catalog.pg_type AS t ON t.oid = b.oid WHERE t.typtype = 'd'
)
SELECT cols.schema_name, cols.table_name, cols.column_name, base.oid
FROM cols JOIN base ON base.type_oid = cols.type_oid
JOIN pg_catalog.pg_type AS t ON t.oid = base.oid AND t.typtype <> 'd'
""")


def _quoter(conn: Connection) -> Callable[[str], str]:
    preparer = conn.dialect.identifier_preparer
    return preparer.quote_identifier  # always quoted: no reserved-word or case surprises


def _relation_sql(q: Callable[[str], str], relation: Relation) -> str:
    return f"{q(relation.schema)}.{q(relation.name)} AS t_"


def sample_rows(conn: Connection, relations: Sequence[Relation],
                rows: int) -> dict[str, list[tuple[Any, ...]]]:
    """The first ``rows`` rows of each relation (in ``order_by`` order when given), as the
    driver would have returned them to ``SELECT cols FROM t ORDER BY ... LIMIT rows``."""
    relations = [r for r in relations if r.columns]
    if not relations:
        return {}
    q = _quoter(conn)
    branches = []
    for i, relation in enumerate(relations):
        # concat(v): the type's output function, as the server's text format (v::text is
        # not: booleans become 'true', char(n) loses its padding). num_nulls: a NULL stays
        # NULL (concat would give ''), and a composite value whose fields are all NULL is not
        # mistaken for NULL (``IS NULL`` would be true for it).
        cells = ", ".join(f"CASE WHEN num_nulls(t_.{q(c)}) = 0 THEN concat(t_.{q(c)}) END"
                          for c in relation.columns)
        # Columns are always qualified with the alias t_, so no output name can shadow them.
        order = (" ORDER BY " + ", ".join(f"t_.{q(c)}" for c in relation.order_by)
                 if relation.order_by else "")
        branches.append(
            f"SELECT {i} AS i, y.n, y.v FROM (SELECT row_number() OVER () AS n, x.v FROM "
            f"(SELECT ARRAY[{cells}]::text[] FROM {_relation_sql(q, relation)}{order} "
            f"LIMIT {int(rows)}) AS x(v)) AS y")
    statement = "\nUNION ALL\n".join(branches) + "\nORDER BY 1, 2"
    found = conn.exec_driver_sql(statement).all()
    loaders = _loaders(conn, relations)
    result: dict[str, list[tuple[Any, ...]]] = {r.key: [] for r in relations}
    for i, _n, cells in found:
        relation = relations[i]
        column_loaders = loaders[i]
        result[relation.key].append(tuple(
            None if cell is None else column_loaders[j](cell) for j, cell in enumerate(cells)))
    return result


def _loaders(conn: Connection, relations: Sequence[Relation]
             ) -> list[list[Callable[[str], Any]]]:
    """Per relation and column: text as the server sent it -> the driver's Python value."""
    raw = conn.connection.driver_connection
    encoding = raw.info.encoding
    transformer = Transformer(raw)
    types: dict[tuple[str, str, str], int] = {}
    for schema, table, column, oid in conn.execute(_COLUMN_TYPES_SQL, {
            "schemas": sorted({r.schema for r in relations}),
            "tables": sorted({r.name for r in relations})}):
        types[(schema, table, column)] = oid
    by_oid: dict[int | None, Callable[[str], Any]] = {}

    def loader(oid: int | None) -> Callable[[str], Any]:
        if oid not in by_oid:
            if oid is None:  # not in the catalog (cannot happen for a relation just read)
                by_oid[oid] = str
            else:
                load = transformer.get_loader(oid, Format.TEXT).load
                by_oid[oid] = lambda cell, load=load: load(cell.encode(encoding))
        return by_oid[oid]

    return [[loader(types.get((r.schema, r.name, c))) for c in r.columns] for r in relations]


def grouped_counts(conn: Connection, relations: Sequence[Relation], fetch: int,
                   kind: str = "table") -> dict[str, dict[str, ColumnStats]]:
    """Enum-screening counts of ``relations``' ``columns``, the per-table statement's numbers:
    per column the NULL count and the top ``fetch + 2`` values by count, the distinct count
    and the longest value."""
    relations = [r for r in relations if r.columns]
    if not relations:
        return {}
    q = _quoter(conn)
    ctes, branches, owners = [], [], []
    for i, relation in enumerate(relations):
        source = f"s{i}"
        columns = ", ".join(f"t_.{q(c)}" for c in relation.columns)
        ctes.append(f"{source} AS (SELECT {columns} FROM {_relation_sql(q, relation)})")
        for name in relation.columns:
            col = f"{source}.{q(name)}"
            branches.append(
                f"SELECT {len(owners)} AS col, r.value, r.n, r.distinct_count, r.max_length, "
                f"r.rn FROM (SELECT g.value, g.n, count(g.value) OVER () AS distinct_count, "
                f"max(length(g.value)) OVER () AS max_length, row_number() OVER (ORDER BY "
                f"g.value IS NULL DESC, g.n DESC, g.value) AS rn FROM (SELECT CAST({col} AS TEXT)"
                f" AS value, count(*) AS n FROM {source} GROUP BY {col}) AS g) AS r "
                f"WHERE r.rn <= {int(fetch) + 2}")
            owners.append((relation.key, name))
    # No ORDER BY: the rows carry (col, rn), and sorting them here is cheaper than on the
    # server (the rows of a column already come in rn order).
    statement = "WITH " + ",\n".join(ctes) + "\n" + "\nUNION ALL\n".join(branches)
    result: dict[str, dict[str, ColumnStats]] = {r.key: {} for r in relations}
    totals = [0] * len(owners)
    for key, name in owners:
        result[key][name] = ColumnStats(source=kind)
    rows = conn.exec_driver_sql(statement).all()
    rows.sort(key=lambda row: (row[0], row[5]))
    for col, value, count, distinct_count, max_length, _rn in rows:
        key, name = owners[col]
        stats = result[key][name]
        stats.distinct_count = int(distinct_count)
        stats.max_length = int(max_length or 0)
        stats.values.append(EnumValueCount(value=value, count=int(count)))
        if value is not None:
            totals[col] += int(count)
    for col, (key, name) in enumerate(owners):
        # As in the per-table path: values beyond the fetched ones are not counted.
        result[key][name].non_null_rows = totals[col]
    return result
