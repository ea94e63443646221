"""Enum screening: which columns hold a small, fixed set of values, and which values.

Without a model a column becomes an enum only when the statistics are clear-cut; the other
candidates keep their values and counts (``ColumnInfo.enum_candidates``) for the LLM step.

Cost is bounded on big tables (see ``EnumScreeningSettings``): one statement per table computes
the candidates of all its screened columns, over the whole table only up to
``sample_threshold_rows``. Above it Postgres reads ``pg_stats`` (``n_distinct`` and the
most-common-values list, when the table has been analyzed) and samples the remaining columns with
``TABLESAMPLE SYSTEM``; SQLite reads ``sample_size`` rows from evenly spaced rowid windows (the
backend inspectors' ``planner_stats`` / ``sample_source`` hooks). No full-table
``COUNT(DISTINCT ...)`` ever runs.

A label array (``TEXT[]`` tags or features: ``label_array_element``) is screened element by
element where the backend unnests (``screen_array_elements``): its elements are what a question
names ("films with deleted scenes"), so they become its enum values, domain and indexed values.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable

from sqlalchemy import (Connection, FromClause, Text, cast, column, func, literal_column, select,
                        table, union_all)
from sqlalchemy.exc import DBAPIError

from nl2sql.db.base import DbConnection
from nl2sql.inspection.base import DbSchemaInspector
from nl2sql.inspection.base import create_inspector
from nl2sql.inspection.samples import readable_columns, refusal_reason, runs_user_function
from nl2sql.inspection.statistics import ColumnStats, EnumScreeningSettings, Relation
from nl2sql.schema.models import (ColumnInfo, EnumValueCount, TableInfo, is_label_type,
                                  label_array_element)

__all__ = ["ColumnStats", "EnumScreeningSettings", "apply_stats", "is_screenable",
           "screen_array_elements", "screen_table", "screen_tables"]

log = logging.getLogger(__name__)
#: From this many tables to screen in batches on, they go in at least two statements, run at once.
SPLIT_MIN_TABLES = 20

#: A column that names its rows (unique, or the primary key alone) is read for its values only
#: in a table this small, a lookup table read whole (``departments.dept_name``,
#: ``countries.name``): every name goes to the value index and a short list is its domain. In
#: a bigger table its values are identifiers (emails, serial numbers), any 1,000 of them noise.
NAMING_MAX_ROWS = 1000


def is_screenable(column: ColumnInfo, table: TableInfo) -> bool:
    """True for the columns of ``table`` screening reads: a text-like type, not a secret nor
    listed by the schema, and not naming its rows unless the table is a small lookup table
    (``NAMING_MAX_ROWS``; such a column is never an enum: each value is one row's). A column
    of a composite primary key (``titles.title``) is screened as any other."""
    if column.secret or column.enum_decision == "schema" or not is_label_type(column.data_type):
        return False
    if column.is_unique or (column.is_primary_key and table.primary_key == [column.name]):
        return table.row_count is not None and table.row_count <= NAMING_MAX_ROWS
    return True


def screen_table(connection: DbConnection, table_info: TableInfo,
                 settings: EnumScreeningSettings | None = None, *, keep_values: int = 0,
                 on_stats: Callable[[dict[str, ColumnStats]], object] | None = None,
                 ) -> list[ColumnInfo]:
    """Screen the columns of one table in place; returns the columns that became candidates.

    Columns whose enum decision came from a model or a person (``enum_decision`` "llm"/"user")
    keep that decision; their candidates are refreshed. ``keep_values``: fetch up to that many
    most frequent values per column in the same statement (the context engine's value index),
    handed with the rest of the statistics to ``on_stats``.
    """
    settings = settings or EnumScreeningSettings()
    columns = [c for c in table_info.columns if is_screenable(c, table_info)]
    if table_info.is_view or not columns or table_info.row_count == 0 \
            or runs_user_function(connection, table_info, "enum screening"):
        return []
    stats = _screen_one(connection, create_inspector(connection), table_info, columns,
                        settings, max(settings.max_values, keep_values))
    if stats is None:
        return []
    if on_stats is not None:
        on_stats(stats)
    candidates = []
    for column_info in columns:
        column_stats = stats.get(column_info.name)
        if column_stats is not None and apply_stats(column_info, column_stats, settings):
            candidates.append(column_info)
    return candidates


def screen_tables(connection: DbConnection, tables: list[TableInfo],
                  settings: EnumScreeningSettings | None = None, *, keep_values: int = 0,
                  on_stats: Callable[[TableInfo, dict[str, ColumnStats]], object] | None = None,
                  on_done: Callable[[list[str]], object] | None = None,
                  ) -> list[ColumnInfo]:
    """``screen_table`` of each table, with the same results, in few statements where the
    backend reads many tables in one (``DbSchemaInspector.batch_size``): tables small enough
    to be read whole go in batches; big ones (statistics, samples) keep their own statements.
    ``on_stats`` gets each table with its statistics; ``on_done`` the names of the tables
    whose reading is over, as it ends (for progress; maybe from another thread)."""
    settings = settings or EnumScreeningSettings()
    inspector = create_inspector(connection)
    fetch = max(settings.max_values, keep_values)
    done = on_done or (lambda names: None)
    jobs: list[tuple[TableInfo, list[ColumnInfo]]] = []
    for table_info in tables:
        columns = [c for c in table_info.columns if is_screenable(c, table_info)]
        if not (table_info.is_view or not columns or table_info.row_count == 0):
            jobs.append((table_info, columns))
    if jobs:  # the catalogue read once for all of them
        functions = connection.user_functions()
        jobs = [(t, cols) for t, cols in jobs
                if not runs_user_function(connection, t, "enum screening", functions)]
    screened = {t.name for t, _ in jobs}
    done([t.name for t in tables if t.name not in screened])  # nothing to read
    batched = [(t, cols) for t, cols in jobs
               if inspector.batch_size > 0 and (t.schema_name or connection.schema)
               and t.row_count is not None and t.row_count <= settings.sample_threshold_rows]
    found: dict[str, dict[str, ColumnStats]] = {}
    # At least two batches once there are a few tables, on two connections: the server sorts
    # each column's values (most of a batch's time) on two cores.
    size = max(1, min(inspector.batch_size, -(-len(batched) // 2)
                      if len(batched) >= SPLIT_MIN_TABLES else inspector.batch_size))

    def count(start: int) -> dict[str, dict[str, ColumnStats]]:
        relations = [Relation(t.name, t.schema_name or connection.schema or "",
                              t.relation_name, [c.name for c in cols])
                     for t, cols in batched[start:start + size]]
        try:
            with connection.connect() as conn:
                part = inspector.grouped_counts_many(conn, relations, fetch)
        except DBAPIError:  # e.g. a table the login may not read: each on its own, below
            return {}
        done(list(part))
        return part

    starts = range(0, len(batched), size)
    if len(starts) > 1:
        with ThreadPoolExecutor(max_workers=2) as pool:
            for part in pool.map(count, starts):
                found.update(part)
    else:
        for start in starts:
            found.update(count(start))
    candidates: list[ColumnInfo] = []
    for table_info, columns in jobs:
        stats = found.get(table_info.name)
        if stats is None:
            stats = _screen_one(connection, inspector, table_info, columns, settings, fetch)
            done([table_info.name])
        if stats is None:
            continue
        if on_stats is not None:
            on_stats(table_info, stats)
        for column_info in columns:
            column_stats = stats.get(column_info.name)
            if column_stats is not None and apply_stats(column_info, column_stats, settings):
                candidates.append(column_info)
    return candidates


def apply_stats(column_info: ColumnInfo, stats: ColumnStats,
                settings: EnumScreeningSettings) -> bool:
    """Record ``stats`` on the column and decide; True when it is an enum candidate."""
    column_info.distinct_count = stats.distinct_count
    is_candidate = (0 < stats.distinct_count <= settings.max_values
                    and stats.non_null_rows > 0
                    and stats.distinct_count / stats.non_null_rows <= settings.max_ratio
                    and stats.max_length <= settings.max_value_length)
    column_info.enum_candidates = stats.values if is_candidate else None
    values = [v.value for v in stats.values if v.value is not None]
    column_info.domain_values = (
        values if stats.source == "table" and 0 < len(values) == stats.distinct_count
        <= settings.domain_max_values
        and sum(len(v) + 2 for v in values) <= settings.domain_max_chars else None)
    if column_info.enum_decision in ("llm", "user"):
        return is_candidate
    clear_cut = (is_candidate
                 and stats.distinct_count <= min(settings.clear_cut_max_values,
                                                 settings.max_values)
                 and stats.non_null_rows >= settings.clear_cut_min_rows
                 and stats.distinct_count / stats.non_null_rows <= settings.clear_cut_max_ratio)
    column_info.is_enum = clear_cut
    column_info.enum_values = ([v.value for v in stats.values if v.value is not None]
                               if clear_cut else [])
    column_info.enum_decision = "statistics" if clear_cut else None
    return is_candidate


def screen_array_elements(connection: DbConnection, tables: list[TableInfo],
                          settings: EnumScreeningSettings | None = None, *, keep_values: int = 0,
                          on_stats: Callable[[TableInfo, dict[str, ColumnStats]], object]
                          | None = None) -> list[ColumnInfo]:
    """Screen the elements of the label arrays of ``tables`` (not views, not secret columns)
    in place, as ``screen_tables`` screens values, where the backend unnests
    (``DbSchemaInspector.unnest_function``): the whole table up to ``sample_threshold_rows``
    rows, else its first ``sample_size`` rows; one statement per array column (few tables
    have one). Returns the columns that became candidates; ``on_stats`` as for
    ``screen_tables``."""
    settings = settings or EnumScreeningSettings()
    inspector = create_inspector(connection)
    unnest = inspector.unnest_function
    jobs = readable_columns(connection, tables if unnest else [], lambda c, _t: (
        not c.is_primary_key and label_array_element(c.data_type)), "array screening")
    candidates = []
    for table_info, arrays in jobs:
        big = (table_info.row_count is None
               or table_info.row_count > settings.sample_threshold_rows)
        schema = table_info.schema_name or inspector.schema
        stats: dict[str, ColumnStats] = {}
        for column_info in arrays:
            name = column_info.name
            base = table(table_info.relation_name, column(name), schema=schema)
            rows = select(base.c[name])
            rows = (rows.limit(settings.sample_size) if big else rows).subquery("arrays")
            elements = select(getattr(func, unnest)(rows.c[name]).label(name)
                              ).subquery("elements")
            try:
                with connection.connect() as conn:
                    stats.update(_grouped_counts(conn, elements, [name],
                                                 max(settings.max_values, keep_values),
                                                 "sample" if big else "table"))
            except DBAPIError as exc:
                log.warning("no array screening for %s.%s: %s", table_info.name, name,
                            refusal_reason(exc))
                continue
            if apply_stats(column_info, stats[name], settings):
                candidates.append(column_info)
        if stats and on_stats is not None:
            on_stats(table_info, stats)
    return candidates


# -- statistics collection -------------------------------------------------------------------

def _screen_one(connection: DbConnection, inspector: DbSchemaInspector, table_info: TableInfo,
                columns: list[ColumnInfo], settings: EnumScreeningSettings,
                fetch: int) -> dict[str, ColumnStats] | None:
    """``_collect_stats`` on a connection of its own; None (one warning) when the database
    refuses it: a table the login may not read must not stop the annotation of the others."""
    try:
        with connection.connect() as conn:
            return _collect_stats(conn, inspector, table_info, columns, settings, fetch)
    except DBAPIError as exc:
        log.warning("no enum screening for %s: %s", table_info.name, refusal_reason(exc))
        return None


def _collect_stats(conn: Connection, inspector: DbSchemaInspector, table_info: TableInfo,
                   columns: list[ColumnInfo], settings: EnumScreeningSettings,
                   fetch: int) -> dict[str, ColumnStats]:
    schema = table_info.schema_name or inspector.schema
    names = [c.name for c in columns]
    is_big = table_info.row_count is None or table_info.row_count > settings.sample_threshold_rows
    stats: dict[str, ColumnStats] = {}
    if is_big and table_info.row_count:
        stats = inspector.planner_stats(conn, schema, table_info.relation_name, names,
                                        table_info.row_count, settings)
    remaining = [n for n in names if n not in stats]
    if remaining:
        base = table(table_info.relation_name, *[column(n) for n in remaining], schema=schema)
        source = (inspector.sample_source(conn, base, table_info, settings) if is_big
                  else base)
        stats.update(_grouped_counts(conn, source, remaining, fetch,
                                     "sample" if is_big else "table"))
    return stats


def _grouped_counts(conn: Connection, source: FromClause, names: list[str], fetch: int,
                    kind: str) -> dict[str, ColumnStats]:
    """One statement for all columns: per column the NULL count and the top ``fetch + 1``
    values by count, plus the distinct count and the longest value (window functions)."""
    src = select(*[source.c[n] for n in names]).cte("src")
    branches = [select(literal_column(str(i)).label("col"),
                       cast(src.c[n], Text).label("value"), func.count().label("n"))
                .group_by(src.c[n]) for i, n in enumerate(names)]
    groups = (branches[0] if len(branches) == 1 else union_all(*branches)).subquery("groups")
    by_col = {"partition_by": groups.c.col}
    ranked = select(
        groups.c.col, groups.c.value, groups.c.n,
        func.count(groups.c.value).over(**by_col).label("distinct_count"),
        func.max(func.length(groups.c.value)).over(**by_col).label("max_length"),
        func.row_number().over(order_by=(groups.c.value.is_(None).desc(), groups.c.n.desc(),
                                         groups.c.value), **by_col).label("rn"),
    ).subquery("ranked")
    query = (select(ranked.c.col, ranked.c.value, ranked.c.n, ranked.c.distinct_count,
                    ranked.c.max_length)
             .where(ranked.c.rn <= fetch + 2)
             .order_by(ranked.c.col, ranked.c.rn))
    result: dict[str, ColumnStats] = {n: ColumnStats(source=kind) for n in names}
    totals: dict[str, int] = {n: 0 for n in names}
    for col, value, count, distinct_count, max_length in conn.execute(query):
        stats = result[names[int(col)]]
        stats.distinct_count = int(distinct_count)
        stats.max_length = int(max_length or 0)
        stats.values.append(EnumValueCount(value=value, count=int(count)))
        if value is not None:
            totals[names[int(col)]] += int(count)
    for name, stats in result.items():
        # Rows of values beyond the fetched ones are not counted, but then the column has too
        # many values to be a candidate anyway: the ratio only matters up to ``max_values``
        # (``fetch`` is at least that).
        stats.non_null_rows = totals[name]
    return result
