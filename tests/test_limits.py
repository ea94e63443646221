"""Resource limits of one query: the largest value (max_value_bytes), the byte budget of a result
file (max_result_bytes, reported as truncation) and the time limit while rows are written.
The full-size cases (randomblob(3e8), repeat('x', 2e8)) with the server's peak RSS are in
bench/resource_limits.py; these use small limits so they stay fast."""

from __future__ import annotations

import time

import pytest

from nl2sql.schema.cache import save_db_info
from nl2sql.errors import QueryExecutionError, QueryTimeoutError
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.workspace.results import CsvResultWriter

BIG_VALUE = {"sqlite": "SELECT randomblob(300000000) AS b",
             "postgres": "SELECT repeat('x', 3000000) AS b"}
#: Rows that take far longer than the 10 s time limit to produce (Postgres materializes a
#: generate_series, so its query stays at 3e6 and the check is that the server stops it).
ENDLESS = {"sqlite": "300000000", "postgres": "3000000"}
MANY_ROWS = {"sqlite": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                       "WHERE i < 5000) SELECT i, 'row number ' || i AS label FROM c",
             "postgres": "SELECT i, 'row number ' || i AS label FROM generate_series(1, 5000) i"}


@pytest.fixture(params=["sqlite", "postgres"])
def limited(request: pytest.FixtureRequest, make_db, make_registry) -> tuple[OpsContext, str]:
    db = make_db(request.param, "lim", script="CREATE TABLE t (id integer PRIMARY KEY)",
                 max_value_bytes=1_000_000, max_result_bytes=20_000, query_timeout_seconds=10)
    ctx = OpsContext(make_registry(db.config))
    # dbs.yaml written by make_registry may leave the bounds out: set them here.
    ctx.configs.databases["lim"] = db.config
    save_db_info(DbSchemaExtractor(ctx.connection("lim")).extract("lim"), ctx.data_dir)
    return ctx, request.param


def test_a_value_over_max_value_bytes_stops_the_query_at_once(limited) -> None:
    ctx, backend = limited
    started = time.monotonic()
    with pytest.raises(QueryExecutionError) as raised:
        db_execute_sql_op(ctx, "lim", BIG_VALUE[backend], output_file="big")
    assert time.monotonic() - started < 2.0
    message = str(raised.value)
    assert "larger than the limit of 1,000,000 bytes (max_value_bytes)" in message
    assert "\n" not in message and not any(ctx.workspace.glob("*"))
    after = db_execute_sql_op(ctx, "lim", "SELECT 1 AS one")
    assert after.row_count == 1


def test_the_byte_budget_cuts_whole_rows_and_says_so(limited) -> None:
    ctx, backend = limited
    result = db_execute_sql_op(ctx, "lim", MANY_ROWS[backend], output_file="many.csv")
    data = (ctx.workspace / "many.csv").read_bytes()
    assert len(data) <= 20_000 and data.endswith(b"\n")
    assert result.truncated and result.truncated_by == "bytes"
    assert result.row_count == data.count(b"\n") - 1 and 500 < result.row_count < 5000
    assert result.max_result_bytes == 20_000
    assert "file size budget of 20,000 bytes" in result.render()
    assert "max_result_bytes" in result.render()


class _SlowDisk(CsvResultWriter):
    """A writer on a disk that takes 0.3 s per batch (a fault injected at the file edge)."""

    def write_rows(self, rows):
        time.sleep(0.3)
        return super().write_rows(rows)

    def write_csv_records(self, records):
        time.sleep(0.3)
        return super().write_csv_records(records)


def test_the_time_limit_holds_while_rows_are_written(limited, monkeypatch, tmp_path) -> None:
    ctx, backend = limited
    ctx.configs.databases["lim"] = ctx.config("lim").model_copy(
        update={"query_timeout_seconds": 1.0, "max_result_bytes": 1 << 30})
    monkeypatch.setattr("nl2sql.operations.queries.CsvResultWriter", _SlowDisk)
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError):
        db_execute_sql_op(ctx, "lim", MANY_ROWS[backend].replace("5000", "200000"),
                          output_file="slow")
    assert time.monotonic() - started < 1.0 + 1.0
    assert not any(ctx.workspace.glob("*"))


def test_the_value_check_keeps_column_names_duplicates_and_errors(limited) -> None:
    """Postgres checks sizes on the server, through renamed columns: names, duplicates and
    error lines are what the query says."""
    ctx, backend = limited
    result = db_execute_sql_op(ctx, "lim", "SELECT 1 AS a, 'x' AS a, 'y' AS \"Odd \"\"name\"",
                               output_file="dup.csv")
    assert (ctx.workspace / "dup.csv").read_text() == 'a,a,"Odd ""name"\n1,x,y\n'
    assert result.columns == ["a", "a", 'Odd "name']
    with pytest.raises(QueryExecutionError, match="nosuch") as raised:
        db_execute_sql_op(ctx, "lim", "SELECT 'x' AS a\nFROM nosuch", output_file="bad")
    assert "max_value_bytes" not in str(raised.value)
    assert backend != "postgres" or "(line 2)" in str(raised.value)


def test_the_byte_budget_stops_a_long_running_result_early(limited) -> None:
    """The budget is spent while the server is still sending: the query is stopped there (on
    Postgres the COPY is cancelled) and the result is the truncated file, not an error."""
    ctx, backend = limited
    query = MANY_ROWS[backend].replace("5000", ENDLESS[backend])
    result = db_execute_sql_op(ctx, "lim", query, output_file="long.csv")
    # Stopped by the budget, not by the 10 s time limit (its truncation would say "time"), and
    # not left running on the server (a wall-clock bound flaked on a loaded machine: 1.7 s).
    assert result.truncated and result.truncated_by == "bytes" and result.row_count > 500
    if backend == "postgres":
        deadline = time.monotonic() + 5
        while _running(ctx, "3000000") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(ctx, "3000000")
    assert db_execute_sql_op(ctx, "lim", "SELECT 7 AS seven").row_count == 1


def _running(ctx: OpsContext, marker: str) -> bool:
    """Whether PostgreSQL still runs a statement containing ``marker`` (another session's)."""
    with ctx.connection("lim").connect() as conn:
        return bool(conn.exec_driver_sql(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
            "AND pid <> pg_backend_pid() AND query LIKE %s", (f"%{marker}%",)).scalar())
