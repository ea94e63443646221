"""One query must not take the server (or its host) down: DuckDB gets a memory limit and a
thread count per database and the MCP server a cap on its own memory; ``max_value_bytes``
holds on DuckDB and MySQL/MariaDB too (MariaDB used to answer NULL for a value over
``max_allowed_packet``). Small limits keep these fast; the big cases are in
``bench/resource_limits.py``."""

from __future__ import annotations

import logging
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest
from conftest import duckdb_config, mysql_config, write_dbs_yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from nl2sql.db.base import create_connection, create_operations
from nl2sql.config.memory_cap import parse_size
from nl2sql.errors import ConfigError, QueryExecutionError, QueryRejectedError
from nl2sql.schema.models import DbInfo
from nl2sql.workspace.results import CsvResultWriter

NL2SQL_MCP = Path(sys.executable).parent / "nl2sql-mcp"
VALUE_TOO_BIG = r"larger than the limit of 1,048,576 bytes \(max_value_bytes\)"


def _run(config: Any, sql: str, tmp_path: Path) -> list[list[str]]:
    connection = create_connection(config)
    ops = create_operations(connection, DbInfo(db_id=config.db_id, db_type=config.type.value))
    writer = CsvResultWriter(tmp_path / "r.csv")
    try:
        ops.execute_select_query(sql, writer)
        return writer.preview
    finally:
        writer.discard()
        connection.dispose()


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    path = tmp_path / "lake.duckdb"
    with duckdb.connect(str(path)) as setup:
        setup.execute("CREATE TABLE t AS SELECT 1 AS id")
        setup.execute("CREATE TABLE big AS SELECT repeat('y', 600000) AS name")
    return path


def test_duckdb_memory_limit_threads_and_value_bound(lake: Path, tmp_path: Path) -> None:
    config = duckdb_config("lake", lake, memory_limit="256MB", threads=1,
                           max_value_bytes=1 << 20)
    assert _run(config, "SELECT current_setting('memory_limit') AS m, "
                        "current_setting('threads') AS t", tmp_path) == [["244.1 MiB", "1"]]
    for sql in ("SELECT concat(name, name) AS s FROM big",  # built from the data: DuckDB's check
                "SELECT 1 AS a, (name || name)::BLOB FROM big"):
        with pytest.raises(QueryExecutionError, match=VALUE_TOO_BIG):
            _run(config, sql, tmp_path)
    for sql in ("SELECT repeat('x', id * 2000000) AS s FROM t",
                "SELECT 1 AS a, repeat('x', 2000000 + id)::BLOB FROM t"):
        with pytest.raises(QueryRejectedError, match="builds a value from a count computed"):
            _run(config, sql, tmp_path)  # DuckDB's interrupt would not stop it
    with pytest.raises(QueryRejectedError, match=r"REPEAT\('x', 2000000\) would build"):
        _run(config, "SELECT repeat('x', 2000000) AS s", tmp_path)  # refused before it runs
    assert _run(config, "SELECT repeat('x', 1000) AS s, id FROM t", tmp_path)[0][1] == "1"
    default = duckdb_config("lake", lake)
    assert _run(default, "SELECT current_setting('memory_limit')", tmp_path) == [["953.6 MiB"]]


def test_a_memory_limit_near_the_process_cap_is_warned_of(
        lake: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """At ``memory_limit`` equal to the cap a failed list left DuckDB holding most of it and
    the next call failed: a limit over half the cap is said in one warning (the process cap
    here is set for this test only, high enough not to matter to the rest of the worker)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = 64 << 30
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        with caplog.at_level(logging.WARNING, logger="nl2sql.config.memory_cap"):
            _run(duckdb_config("lake", lake, memory_limit="1GB"), "SELECT 1 AS x", tmp_path)
            assert caplog.records == []
            _run(duckdb_config("near", lake, memory_limit="40GB"), "SELECT 1 AS x", tmp_path)
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
    [record] = caplog.records
    assert record.getMessage() == (
        "database 'near': memory_limit 40GB is more than half of this process's memory cap "
        "(NL2SQL_MAX_MEMORY, 64.0 GB): a query that fails on the cap may leave the engine "
        "holding the memory the next call needs; set memory_limit to at most 32.0 GB or raise "
        "NL2SQL_MAX_MEMORY.")


async def test_a_huge_list_fails_fast_and_the_server_goes_on(lake: Path, tmp_path: Path) -> None:
    """The audit's probe: DuckDB's memory_limit does not cover a list built whole (it reached
    14.8 GB in 42 s). Its constant count is refused before it runs, and so is the same list
    from a count in the data (DuckDB's interrupt does not stop the function building it); a
    list collected from many rows, which the query cannot bound, fails under the server's
    memory cap (or its time limit, which an aggregate honours). DuckDB's memory_limit is a
    quarter of the cap, as by default (1GB of 4GB): at the cap itself (1GB of 1GB) the failed
    list left DuckDB holding ~750 MB, and the next call's Arrow formatting failed to allocate
    (CI, once in four runs)."""
    config = duckdb_config("lake", lake, query_timeout_seconds=2, memory_limit="256MB")
    path = write_dbs_yaml(tmp_path, [config], include_sample=False)
    env = {"NL2SQL_CONFIG": str(path), "NL2SQL_WORKSPACE": str(tmp_path / "ws"),
           "NL2SQL_DATA_DIR": str(tmp_path / "data"), "NL2SQL_MAX_MEMORY": "1GB",
           **{key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ}}
    async with Client(StdioServerParameters(command=str(NL2SQL_MCP), env=env)) as client:
        result = await client.call_tool("db_execute_sql", {"db_id": "lake", "query": (
            "SELECT count(*) FROM (SELECT unnest(generate_series(1, 300000000)))")})
        assert result.is_error and "would build a value larger" in result.content[0].text
        result = await client.call_tool("db_execute_sql", {"db_id": "lake", "query": (
            "SELECT count(*) FROM (SELECT unnest(generate_series(1, id * 300000000)) FROM t)")})
        assert result.is_error and "count computed from the data" in result.content[0].text
        started = time.monotonic()
        result = await client.call_tool("db_execute_sql", {"db_id": "lake", "query": (
            "SELECT length(list(x)) AS n FROM range(300000000) t(x)")})
        elapsed = time.monotonic() - started
        text = result.content[0].text.lower()
        assert result.is_error and ("memory" in text or "stopped after 2 s" in text), text
        assert elapsed <= 4.0, elapsed  # the time limit (2 s) + 2 s
        after = await client.call_tool("db_execute_sql", {"db_id": "lake",
                                                          "query": "SELECT 42 AS answer"})
        assert not after.is_error and "42" in after.content[0].text


def test_mariadb_value_over_the_limit_is_an_error_not_null(mysql_server: str,
                                                            tmp_path: Path) -> None:
    config = mysql_config("my", "mysql", max_value_bytes=1 << 20)
    # over max_allowed_packet: the server answers NULL with warning 1301
    for sql in ("SELECT repeat('x', 200000000) AS b", "SELECT repeat('x', 2000000) AS b",
                "SELECT 1 AS a, CAST(repeat('y', 1100000) AS BINARY) AS b"):
        with pytest.raises(QueryExecutionError, match=VALUE_TOO_BIG):
            _run(config, sql, tmp_path)
    assert _run(config, "SELECT repeat('x', 300000) AS b, NULL AS n", tmp_path)[0][1] == ""


def test_memory_sizes() -> None:
    assert parse_size("4GB") == 4 << 30 and parse_size("512 MiB") == 512 << 20
    assert parse_size("0") == 0 and parse_size("1048576") == 1 << 20
    with pytest.raises(ConfigError, match="NL2SQL_MAX_MEMORY='lots' is not a size"):
        parse_size("lots")


@pytest.mark.spark
def test_spark_refuses_huge_values_before_building_or_sending_them(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """``repeat('x', 2e8)`` and ``sequence(1, id * 3e8)`` killed the Spark Connect server
    (executor out of memory): a constant count over max_value_bytes (folded, nested calls
    multiplied) and any count computed from the data are refused before anything runs; a big
    value that is already in the data is stopped by the server's own check of each text or
    binary value, which is then never sent."""
    from conftest import spark_db

    db = spark_db(request, "sp", script="CREATE TABLE t (id INT, name STRING);\n"
                                        "INSERT INTO t VALUES (1, 'a'), (2, repeat('y', 600000))",
                  max_value_bytes=1 << 20, query_timeout_seconds=20)
    for sql, call in (("SELECT repeat('x', 200000000) AS b", r"REPEAT\('x', 200000000\)"),
                      ("SELECT repeat('x', 2000 * 100000) AS b",
                       r"REPEAT\('x', 2000 \* 100000\)"),
                      ("SELECT repeat(repeat('x', 2000), 1000) AS b",
                       r"REPEAT\(REPEAT\('x', 2000\), 1000\)"),
                      ("SELECT size(sequence(1, 300000000)) AS n",
                       r"SEQUENCE\(1, 300000000\)")):
        with pytest.raises(QueryRejectedError, match=call + r" would build a value larger than "
                                                            r"the limit of 1,048,576"):
            _run(db.config, sql, tmp_path)
    for sql in ("SELECT repeat('x', id * 2000000) AS s, name FROM t",
                "SELECT id, unhex(repeat('ab', id * 1100000)) AS b FROM t",
                "SELECT size(sequence(1, id * 300000000)) AS n FROM t"):
        with pytest.raises(QueryRejectedError, match=r"builds a value from a count computed "
                                                     r"from the data"):
            _run(db.config, sql, tmp_path)
    with pytest.raises(QueryExecutionError, match=VALUE_TOO_BIG):  # built from the data
        _run(db.config, "SELECT id, concat(name, name) AS b FROM t", tmp_path)
    assert _run(db.config, "SELECT size(sequence(1, 10)) AS n, explode(sequence(DATE "
                           "'2024-01-01', DATE '2024-12-31', INTERVAL 1 DAY)) AS d",
                tmp_path)[0] == ["10", "2024-01-01"]
    assert _run(db.config, "SELECT id, name, repeat('x', 10) AS `a``b`, id AS id FROM t "
                           "WHERE id = 1",
                tmp_path) == [["1", "a", "xxxxxxxxxx", "1"]]


@pytest.mark.parametrize(("module", "argv"), [
    ("ask", ["--list-conversations"]), ("eval", ["no-such-questions.yaml"]),
    ("annotate", ["no_such_db"])])
def test_every_shell_face_caps_its_memory(module: str, argv: list[str], tmp_path: Path) -> None:
    """DuckDB runs in the process of each command that queries it: each caps its data segment
    (NL2SQL_MAX_MEMORY) once its command line is read, whatever happens next (nl2sql-mcp:
    test_a_huge_list_fails_fast_and_the_server_goes_on)."""
    import subprocess

    script = ("import resource\n"
              f"from nl2sql.cli.{module} import main\n"
              "try:\n"
              f"    main({argv!r})\n"
              "except SystemExit:\n"
              "    pass\n"
              "print('cap', resource.getrlimit(resource.RLIMIT_DATA)[0])\n")
    env = {**os.environ, "NL2SQL_MAX_MEMORY": "3GB", "NL2SQL_DATA_DIR": str(tmp_path / "d"),
           "NL2SQL_WORKSPACE": str(tmp_path / "w")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    caps = [line for line in done.stdout.splitlines() if line.startswith("cap ")]
    assert caps == [f"cap {3 << 30}"], (done.stdout, done.stderr)
