"""Postgres after-check for page writes that take no transaction id (index maintenance).

``gin_clean_pending_list``, ``brin_summarize_new_values``, ``brin_summarize_range`` and
``brin_desummarize_range`` write index pages from a READ ONLY transaction without an xid, so
``txid_current_if_assigned()`` stays NULL and the rollback undoes nothing. They need the
index's owner, so only GIN and BRIN indexes whose owner role the login has the privileges of
are at risk (none for a login that owns nothing, the recommended setup). The list is kept per
pooled session; each call reads the WAL position and max(pg_class.oid) in the same round trip
as the transaction's setup, and only a login with at-risk indexes pays one more round trip
after the query.

What each signal proves, on a server other sessions write to at the same time:
- the WAL insert position (``pg_current_wal_insert_lsn()``) is cluster-wide: unchanged from
  before the query to after it proves that nothing, ours or anyone's, wrote a page; moved,
  it proves nothing about us (concurrent commits, autovacuum, even our own heap pruning);
- this transaction's own statistics (``pg_stat_get_xact_blocks_fetched`` and
  ``pg_stat_get_xact_numscans`` of each at-risk index, read before and after in the same
  transaction, so other sessions cannot change the difference) tell whether *this query*
  read an index's pages outside any index scan. A plain query does that only when the
  planner reads the metapage (one page); index maintenance reads the metapage and more.
The query is refused when the WAL moved *and* it read an at-risk index that way. Known limit:
a query that scans the very index it maintains hides the reads in the scan; the parser layer
denies these functions by name (the catalogue class in ``sql_guard/postgres_functions.py``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import psycopg

#: Pages a plain query may read from an index outside an index scan (the planner's metapage
#: read for cost estimates); index maintenance reads the metapage and the pages it changes.
PLANNER_PAGE_READS = 1
#: Seconds a pooled session trusts its list of at-risk indexes when no relation was created
#: since (a new index gets a new, higher oid and refreshes the list at once; a change of owner
#: or of role membership is seen within this time).
AT_RISK_TTL_SECONDS = 60.0
_CACHE_KEY = "nl2sql_at_risk_indexes"

_AT_RISK = """SELECT coalesce(array_agg(c.oid ORDER BY c.oid), '{}')
FROM pg_class c
WHERE c.relkind = 'i' AND pg_has_role(c.relowner, 'USAGE')
  AND c.relam IN (SELECT oid FROM pg_am WHERE amname IN ('gin', 'brin'))"""
# max(oid) is one step of pg_class' oid index: the cheap "was any relation created" signal.
_READINGS = """SELECT (SELECT max(oid) FROM pg_class),
  CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_current_wal_insert_lsn()::text END,
  ARRAY(SELECT pg_stat_get_xact_blocks_fetched(o) FROM unnest('{oids}'::oid[]) o ORDER BY o),
  ARRAY(SELECT pg_stat_get_xact_numscans(o) FROM unnest('{oids}'::oid[]) o ORDER BY o)"""
_NAMES = "SELECT array_agg(o::regclass::text ORDER BY o) FROM unnest(%s::oid[]) AS o"


@dataclass(frozen=True)
class Readings:
    """The WAL insert position and each at-risk index's (pages read, index scans)."""

    indexes: tuple[int, ...]
    wal_position: str | None
    pages_read: tuple[int, ...]
    scans: tuple[int, ...]


@dataclass(frozen=True)
class _AtRisk:
    checked_at: float
    max_oid: int
    indexes: tuple[int, ...]


def readings_statement(info: dict[str, Any]) -> str:
    """The "before" readings for the indexes this pooled session last found at risk; appended
    to the transaction's setup, so the common case costs no extra round trip."""
    cached: _AtRisk | None = info.get(_CACHE_KEY)
    return _statement(cached.indexes if cached else ())


def before(raw: psycopg.Connection[Any], info: dict[str, Any],
           row: tuple[Any, ...]) -> Readings | None:
    """Readings from the setup's row; refreshes the at-risk list when a relation was created
    or it is older than AT_RISK_TTL_SECONDS. None: the login can maintain no GIN/BRIN index."""
    cached: _AtRisk | None = info.get(_CACHE_KEY)
    max_oid, now = int(row[0] or 0), time.monotonic()
    indexes = cached.indexes if cached else ()
    if cached is None or cached.max_oid != max_oid \
            or now - cached.checked_at > AT_RISK_TTL_SECONDS:
        found = raw.execute(_AT_RISK).fetchone()
        fresh = tuple(int(oid) for oid in (found[0] if found else ()))
        info[_CACHE_KEY] = _AtRisk(now, max_oid, fresh)
        if fresh != indexes:
            indexes, row = fresh, raw.execute(_statement(fresh)).fetchone() or row
    if not indexes:
        return None
    return Readings(indexes, row[1], tuple(row[2]), tuple(row[3]))


def _statement(indexes: tuple[int, ...]) -> str:
    return _READINGS.replace("{oids}", "{" + ",".join(str(int(i)) for i in indexes) + "}")


def _after(raw: psycopg.Connection[Any], first: Readings) -> Readings:
    row = raw.execute(_statement(first.indexes)).fetchone()
    assert row is not None
    return Readings(first.indexes, row[1], tuple(row[2]), tuple(row[3]))


def maintained_indexes(raw: psycopg.Connection[Any], before: Readings) -> list[str]:
    """Names of the at-risk indexes this transaction wrote since ``before`` was read."""
    return _names(raw, suspects(before, _after(raw, before)))


def suspects(before: Readings, after: Readings) -> tuple[int, ...]:
    """The decision, on readings alone (see the module docstring for what each proves)."""
    if before.wal_position is None or before.wal_position == after.wal_position:
        return ()
    return tuple(
        oid for oid, read0, read1, scans0, scans1 in zip(
            before.indexes, before.pages_read, after.pages_read, before.scans, after.scans)
        if scans1 == scans0 and read1 - read0 > PLANNER_PAGE_READS)


def _names(raw: psycopg.Connection[Any], oids: tuple[int, ...]) -> list[str]:
    if not oids:
        return []
    row = raw.execute(_NAMES, [list(oids)]).fetchone()
    return list(row[0]) if row and row[0] else []
