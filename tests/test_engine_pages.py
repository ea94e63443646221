"""Postgres engine layer: index maintenance that writes pages without a transaction id.

With the parser switched off, a login that owns GIN and BRIN indexes calls the maintenance
functions from a read-only, rolled-back query: the pages change for good (shown with
pageinspect by the admin), and the engine's after-check must report it. Writes by other
sessions during a plain query must not be taken for ours.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from conftest import PG_HOST, PG_PORT

from nl2sql.config.registry import DatabaseType, DbConnectionConfig
from nl2sql.db.base import DbOperations
from nl2sql.db.base import create_connection, create_operations
from nl2sql.db.postgres_pages import PLANNER_PAGE_READS, Readings, suspects
from nl2sql.errors import QueryExecutionError, QueryRejectedError
from nl2sql.inspection import DbSchemaExtractor

pytestmark = pytest.mark.postgres


class RowSink:
    def begin(self, columns: Sequence[str]) -> None:
        self.rows: list[tuple[Any, ...]] = []

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.rows += [tuple(r) for r in rows]


class CsvSink(RowSink):
    """Takes CSV records too: the COPY path."""

    def write_csv_records(self, records: Sequence[bytes]) -> None:
        self.rows += [(bytes(r),) for r in records]


@dataclass
class Owner:
    """A database whose tables (and so their indexes) belong to the nl2sql login."""

    admin_dsn: str
    ops: DbOperations
    role: str

    def admin(self, sql: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            cur = conn.execute(sql)
            return cur.fetchall() if cur.description else []

    def make_table(self, *, summarized: bool = False) -> str:
        """A table owned by the login with a GIN pending list and unsummarized BRIN ranges."""
        name = f"m_{uuid.uuid4().hex[:8]}"
        self.admin(
            f"CREATE TABLE {name} (id int, tags int[], n int) WITH (autovacuum_enabled = off);"
            f"CREATE INDEX {name}_gin ON {name} USING gin (tags) WITH (fastupdate = on);"
            f"CREATE INDEX {name}_brin ON {name} USING brin (n) WITH (pages_per_range = 1);"
            f"INSERT INTO {name} SELECT g, ARRAY[g % 7, g % 11], g "
            f"FROM generate_series(1, 2000) g;"
            f'ALTER TABLE {name} OWNER TO "{self.role}"')
        if summarized:
            self.admin(f"SELECT brin_summarize_new_values('{name}_brin')")
        return name

    def pages(self, table: str) -> tuple[int, int]:
        """(GIN pending pages, summarized BRIN ranges), read from the pages themselves."""
        ((pending, ranges),) = self.admin(
            f"SELECT (gin_metapage_info(get_raw_page('{table}_gin', 0))).n_pending_pages, "
            f"(SELECT count(*) FROM brin_revmap_data(get_raw_page('{table}_brin', 1)) "
            f"WHERE split_part(btrim(pages::text, '()'), ',', 1)::bigint "
            f"NOT IN (0, 4294967295))")  # 0: never summarized, 2^32-1: desummarized
        return int(pending), int(ranges)


@pytest.fixture(scope="module")
def owner(pg_server: str) -> Iterator[Owner]:
    suffix = uuid.uuid4().hex[:10]
    role, dbname = f"nl2sql_owner_{suffix}", f"nl2sql_pages_{suffix}"
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}" LOGIN')
        admin.execute(f'CREATE DATABASE "{dbname}"')
    admin_dsn = pg_server.replace("dbname=postgres", f"dbname={dbname}")
    with psycopg.connect(admin_dsn, autocommit=True) as setup:
        setup.execute(f'CREATE EXTENSION pageinspect; CREATE TABLE side (x int); '
                      f'GRANT SELECT ON side TO "{role}"')
    config = DbConnectionConfig(db_id="owner", type=DatabaseType.POSTGRES, host=PG_HOST,
                                port=PG_PORT, user=role, dbname=dbname,
                                query_timeout_seconds=10)
    connection = create_connection(config)
    try:
        info = DbSchemaExtractor(connection).extract("owner")
        yield Owner(admin_dsn, create_operations(connection, info), role)
    finally:
        connection.dispose()
        with psycopg.connect(pg_server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
            admin.execute(f'DROP ROLE IF EXISTS "{role}"')


MAINTENANCE = [
    ("SELECT gin_clean_pending_list('{t}_gin')", False),
    ("SELECT brin_summarize_new_values('{t}_brin')", False),
    ("SELECT * FROM brin_summarize_range('{t}_brin', 5)", False),
    ("SELECT brin_desummarize_range('{t}_brin', 5)", True),
    ("SELECT count(*), max(gin_clean_pending_list('{t}_gin'::regclass)) FROM {t}", False),
]


@pytest.mark.parametrize(("sql", "summarized"), MAINTENANCE, ids=[s for s, _ in MAINTENANCE])
def test_engine_reports_index_maintenance_by_the_owner_login(owner: Owner, sql: str,
                                                            summarized: bool) -> None:
    table = owner.make_table(summarized=summarized)
    query = sql.format(t=table)
    with pytest.raises(QueryRejectedError):  # the parser layer refuses it by name
        owner.ops.execute_select_query(query, RowSink())
    before = owner.pages(table)
    with pytest.raises(QueryExecutionError, match=rf"wrote pages of index {table}_(gin|brin)"):
        owner.ops.execute_select_query(query, CsvSink(), validate=False)
    assert owner.pages(table) != before  # the write happened: the check is not vacuous
    sink = RowSink()
    owner.ops.execute_select_query(f"SELECT count(*) FROM {table}", sink)
    assert sink.rows == [(2000,)]


def test_plain_queries_on_owned_indexes_pass_while_others_write(owner: Owner) -> None:
    """The WAL moves (another session commits while our query waits on its lock) and the
    planner reads the owned indexes' metapages: no index maintenance, so no refusal."""
    table = owner.make_table()
    query = (f"SELECT count(*) FROM {table} WHERE n > 10 AND tags && '{{1,2}}' "
             f"AND EXISTS (SELECT 1 FROM side)")
    lsn_before = owner.admin("SELECT pg_current_wal_insert_lsn()::text")[0][0]
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            sink = RowSink()
            owner.ops.execute_select_query(query, sink)
            outcome["rows"] = sink.rows
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            outcome["error"] = exc

    with psycopg.connect(owner.admin_dsn) as writer:
        writer.execute("LOCK TABLE side IN ACCESS EXCLUSIVE MODE")
        writer.execute("INSERT INTO side SELECT generate_series(1, 1000)")
        reader = threading.Thread(target=run)
        reader.start()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not owner.admin(
                "SELECT 1 FROM pg_locks WHERE relation = 'side'::regclass AND NOT granted"):
            time.sleep(0.02)
        writer.commit()  # WAL moves while the query is between its before and after readings
        reader.join(10)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["rows"][0][0] > 0
    lsn_after = owner.admin("SELECT pg_current_wal_insert_lsn()::text")[0][0]
    assert lsn_after != lsn_before


def _readings(wal: str | None, reads: int, scans: int) -> Readings:
    return Readings((42,), wal, (reads,), (scans,))


@pytest.mark.parametrize(("before", "after", "suspected"), [
    (_readings("0/10", 0, 0), _readings("0/10", 50, 0), False),  # WAL still: nothing written
    (_readings("0/10", 0, 0), _readings("0/20", PLANNER_PAGE_READS, 0), False),  # planner
    (_readings("0/10", 0, 0), _readings("0/20", 50, 1), False),  # an index scan read them
    (_readings("0/10", 3, 0), _readings("0/20", 5 + PLANNER_PAGE_READS, 0), True),
    (_readings(None, 0, 0), _readings(None, 50, 0), False),  # a standby: no WAL position
], ids=["wal-still", "planner-read", "index-scan", "maintenance", "standby"])
def test_page_write_decision(before: Readings, after: Readings, suspected: bool) -> None:
    assert (suspects(before, after) == (42,)) is suspected
