"""Enum screening: which columns hold a small, fixed set of values, and which values.

Without a model a column becomes an enum only when the statistics are clear-cut; the other
candidates keep their values and counts (``ColumnInfo.enum_candidates``) for the LLM step.

Cost is bounded on big tables (see ``EnumScreeningSettings``): one statement per table computes
the candidates of all its screened columns, over the whole table only up to
``sample_threshold_rows``. Above it Postgres reads ``pg_stats`` (``n_distinct`` and the
most-common-values list, when the table has been analyzed) and samples the remaining columns with
``TABLESAMPLE SYSTEM``; SQLite reads ``sample_size`` rows from evenly spaced rowid windows. No
full-table ``COUNT(DISTINCT ...)`` ever runs.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from sqlalchemy import (Connection, FromClause, Select, Text, cast, column, func, literal_column,
                        select, table, tablesample, text, union_all)
from sqlalchemy.exc import DBAPIError

from nl2sql.config import DatabaseType
from nl2sql.db.base import DbConnection
from nl2sql.models import ColumnInfo, EnumValueCount, TableInfo

log = logging.getLogger(__name__)

# Types that are never categorical labels: numbers (a 1-5 rating is an ordinal score), dates and
# times, binary, booleans, structured and network types. Everything else (text, char, varchar,
# Postgres enum types, untyped SQLite columns) is screened.
_SKIPPED_TYPE = re.compile(
    r"INT|NUM|DEC|REAL|FLOA|DOUB|MONEY|SERIAL|DATE|TIME|INTERVAL|YEAR|BOOL|BIT|BLOB|BYTEA|"
    r"BINARY|JSON|UUID|XML|GEOM|GEOG|POINT|POLYGON|TSVECTOR|INET|CIDR|MACADDR|ARRAY|\[\]|RANGE",
    re.IGNORECASE)


@dataclass(frozen=True)
class EnumScreeningSettings:
    """Thresholds of enum screening (defaults in parentheses).

    - candidate: at most ``max_values`` (20) distinct non-null values, at most ``max_ratio`` (0.5)
      distinct values per non-null row, no value longer than ``max_value_length`` (64) chars;
    - clear-cut enum without a model: at most ``clear_cut_max_values`` (10) values, at least
      ``clear_cut_min_rows`` (20) non-null rows and at most ``clear_cut_max_ratio`` (0.2)
      distinct values per row, i.e. each value occurs five times or more on average;
    - tables above ``sample_threshold_rows`` (100,000) are read through statistics or a sample
      of about ``sample_size`` (50,000) rows.
    """

    max_values: int = 20
    max_ratio: float = 0.5
    max_value_length: int = 64
    clear_cut_max_values: int = 10
    clear_cut_min_rows: int = 20
    clear_cut_max_ratio: float = 0.2
    sample_threshold_rows: int = 100_000
    sample_size: int = 50_000
    sqlite_sample_windows: int = 10


@dataclass
class ColumnStats:
    """What screening saw for one column: values with counts, distinct count, rows looked at."""

    values: list[EnumValueCount] = field(default_factory=list)
    distinct_count: int = 0  # distinct non-null values (a lower bound when sampled)
    non_null_rows: int = 0
    max_length: int = 0
    source: str = "table"  # "table", "sample" or "pg_stats"


def is_screenable(column: ColumnInfo) -> bool:
    """True for columns that may hold enum values: not a key, not unique, a text-like type."""
    if column.is_primary_key or column.is_unique:
        return False
    return not _SKIPPED_TYPE.search(column.data_type or "")


def screen_table(connection: DbConnection, table_info: TableInfo,
                 settings: EnumScreeningSettings | None = None) -> list[ColumnInfo]:
    """Screen the columns of one table in place; returns the columns that became candidates.

    Columns whose enum decision came from a model or a person (``enum_decision`` "llm"/"user")
    keep that decision; their candidates are refreshed.
    """
    settings = settings or EnumScreeningSettings()
    columns = [c for c in table_info.columns if is_screenable(c)]
    if table_info.is_view or not columns or table_info.row_count == 0:
        return []
    with connection.connect() as conn:
        stats = _collect_stats(conn, connection, table_info, columns, settings)
    candidates = []
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


# -- statistics collection -------------------------------------------------------------------

def _collect_stats(conn: Connection, connection: DbConnection, table_info: TableInfo,
                   columns: list[ColumnInfo], settings: EnumScreeningSettings,
                   ) -> dict[str, ColumnStats]:
    schema = table_info.schema_name or connection.schema
    names = [c.name for c in columns]
    is_big = table_info.row_count is None or table_info.row_count > settings.sample_threshold_rows
    stats: dict[str, ColumnStats] = {}
    if is_big and connection.config.type is DatabaseType.POSTGRES and table_info.row_count:
        stats = _pg_stats(conn, schema, table_info.name, names, table_info.row_count, settings)
    remaining = [n for n in names if n not in stats]
    if remaining:
        source = (table(table_info.name, *[column(n) for n in remaining], schema=schema)
                  if not is_big else _sample_source(conn, connection, table_info, schema,
                                                    remaining, settings))
        stats.update(_grouped_counts(conn, source, remaining, settings,
                                     "sample" if is_big else "table"))
    return stats


def _grouped_counts(conn: Connection, source: FromClause, names: list[str],
                    settings: EnumScreeningSettings, kind: str) -> dict[str, ColumnStats]:
    """One statement for all columns: per column the NULL count and the top ``max_values + 1``
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
             .where(ranked.c.rn <= settings.max_values + 2)
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
        # many values to be a candidate anyway: the ratio only matters up to ``max_values``.
        stats.non_null_rows = totals[name]
    return result


def _sample_source(conn: Connection, connection: DbConnection, table_info: TableInfo,
                   schema: str | None, names: list[str],
                   settings: EnumScreeningSettings) -> FromClause:
    """A bounded sample of a big (or uncounted) table, per backend."""
    base = table(table_info.name, *[column(n) for n in names], schema=schema)
    match connection.config.type:
        case DatabaseType.POSTGRES if table_info.row_count:
            # Block sampling reads only the chosen pages; REPEATABLE keeps runs deterministic.
            percent = min(100.0, 100.0 * settings.sample_size / table_info.row_count)
            sampled = tablesample(base, func.system(percent), name="sampled",
                                  seed=literal_column("0"))
            return select(*[sampled.c[n] for n in names]).subquery("sample")
        case DatabaseType.SQLITE if table_info.column("rowid") is None:
            windows = _sqlite_rowid_windows(conn, base, settings)
            if windows is not None:
                return windows
    return select(*[base.c[n] for n in names]).limit(settings.sample_size).subquery("sample")


def _sqlite_rowid_windows(conn: Connection, base: FromClause,
                          settings: EnumScreeningSettings) -> FromClause | None:
    """Evenly spaced rowid windows (index seeks, no full scan); None for WITHOUT ROWID."""
    rowid = literal_column("rowid")
    try:
        low, high = conn.execute(select(func.min(rowid), func.max(rowid)).select_from(base)).one()
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


def _pg_stats(conn: Connection, schema: str | None, table_name: str, names: list[str],
              row_count: int, settings: EnumScreeningSettings) -> dict[str, ColumnStats]:
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
            result[name] = ColumnStats(distinct_count=distinct, non_null_rows=non_null,
                                       source="pg_stats")
    return result
