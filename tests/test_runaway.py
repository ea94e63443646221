"""Runaway queries are stopped within the configured time limit, leave no result files, and the
next call on the same context works. No test here reads a whole result into memory."""

from __future__ import annotations

import time

import pytest
from conftest import BACKENDS, sample_fixture

from nl2sql.schema.cache import save_db_info
from nl2sql.errors import QueryTimeoutError
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op

chinook = sample_fixture("chinook", BACKENDS)  # every backend
TIMEOUT = 1.0
SLACK = 1.5  # connection checkout, rollback and cleanup on a busy test machine


class CountingCsvSink:
    def begin(self, columns) -> None:
        self.rows = 0

    def write_rows(self, rows) -> None:
        self.rows += len(rows)

    def write_csv_records(self, records) -> None:
        self.rows += len(records)


@pytest.fixture
def ctx(chinook, make_registry) -> OpsContext:
    context = OpsContext(make_registry(chinook.config))
    # dbs.yaml written by make_registry leaves the bounds out: set the small limit here. The
    # row cap is lifted so that only the time limit can stop a runaway: on a quiet machine the
    # default cap (1M rows) of the huge streamed result is reached in under a second.
    context.configs.databases["chinook"] = chinook.config.model_copy(
        update={"query_timeout_seconds": TIMEOUT, "max_rows": 1_000_000_000})
    save_db_info(DbSchemaExtractor(context.connection("chinook")).extract("chinook"),
                 context.data_dir)
    return context


def _runaways(chinook) -> dict[str, str]:
    track = chinook.quoted("track")
    return {
        "cross join explosion": f"SELECT count(*) FROM {track} a, {track} b, {track} c",
        "recursive CTE without end": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL "
                                     "SELECT n + 1 FROM r) SELECT count(*) FROM r",
        "huge streamed result": f"SELECT a.*, b.* FROM {track} a, {track} b",
    }


@pytest.mark.parametrize("kind", ["cross join explosion", "recursive CTE without end",
                                  "huge streamed result"])
def test_runaway_query_is_stopped_and_the_next_call_works(chinook, ctx, kind) -> None:
    query = _runaways(chinook)[kind]
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError) as raised:
        db_execute_sql_op(ctx, "chinook", query, output_file="runaway")
    elapsed = time.monotonic() - started
    assert elapsed < TIMEOUT + SLACK, f"{kind} ran {elapsed:.2f} s"
    message = str(raised.value)
    assert "stopped after 1 s" in message and "query_timeout_seconds" in message
    assert "\n" not in message
    assert not any(ctx.workspace.glob("*")), "a stopped query leaves no files"
    after = db_execute_sql_op(ctx, "chinook", f'SELECT count(*) FROM {chinook.quoted("genre")}')
    assert after.row_count == 1 and "25" in after.preview


# Each server's own sleep functions, run with the parser off: the engine's time limit stops them.
_ENGINE_SLEEPS = {
    "postgres": ("SELECT pg_sleep(30)", "SELECT 1 FROM pg_sleep(30)"),
    "mysql": ("SELECT SLEEP(30)", "SELECT BENCHMARK(10000000000, MD5('a'))"),
}


@pytest.mark.parametrize("chinook", list(_ENGINE_SLEEPS), indirect=True)
def test_sleep_is_stopped_by_the_engine_without_the_parser(chinook, ctx) -> None:
    ops = ctx.operations("chinook")
    for query in _ENGINE_SLEEPS[chinook.backend]:
        started = time.monotonic()
        with pytest.raises(QueryTimeoutError):
            ops.execute_select_query(query, CountingCsvSink(), validate=False)
        assert time.monotonic() - started < TIMEOUT + SLACK
    sink = CountingCsvSink()
    assert ops.execute_select_query("SELECT 1", sink).row_count == 1
