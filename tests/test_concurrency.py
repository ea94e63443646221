"""Many clients on one server, many processes on one workspace: no errors, no corrupt files."""

from __future__ import annotations

import csv
import json
import multiprocessing
import os
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from conftest import BACKENDS, sample_fixture, write_dbs_yaml
from mcp import Client
from test_mcp_stdio import NL2SQL_MCP, _free_port, _wait_for_port

from nl2sql.schema.cache import save_db_info
from nl2sql.db.base import create_connection
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.mcp import build_server
from nl2sql.workspace.saved_query_index import SavedQueryIndex

chinook = sample_fixture("chinook", BACKENDS)  # 16 clients on every backend
CLIENTS = 16
CALLS_PER_CLIENT = 50


def _query(backend: str, limit: int) -> str:
    if backend == "sqlite":
        return (f"SELECT TrackId, Name, Composer FROM Track WHERE TrackId <= {limit} "
                f"ORDER BY TrackId")
    return (f"SELECT track_id, name, composer FROM track WHERE track_id <= {limit} "
            f"ORDER BY track_id")


@pytest.fixture
def http_server(chinook, tmp_path: Path):  # noqa: ANN001, ANN201
    config_path = write_dbs_yaml(tmp_path, [chinook.config])
    connection = create_connection(chinook.config)
    save_db_info(DbSchemaExtractor(connection).extract("chinook"), tmp_path / "data")
    connection.dispose()
    workspace = tmp_path / "ws"
    port = _free_port()
    env = {**os.environ, "NL2SQL_CONFIG": str(config_path), "NL2SQL_WORKSPACE": str(workspace)}
    process = subprocess.Popen([str(NL2SQL_MCP), "--transport", "http", "--port", str(port)],
                               env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp", workspace, chinook.naming, process
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.mark.slow
async def test_16_clients_x_50_calls_on_one_server(http_server) -> None:  # noqa: ANN001
    url, workspace, backend, process = http_server
    errors: list[str] = []
    written: dict[str, int] = {}  # csv file -> expected rows

    async def client_session(i: int) -> None:
        try:
            await calls(i)
        except Exception as exc:  # noqa: BLE001 (a transport failure: report, stop this client)
            while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
                exc = exc.exceptions[0]
            errors.append(f"client {i}: {type(exc).__name__}: {exc}")

    async def calls(i: int) -> None:
        async with Client(url) as client:
            mine: list[str] = []
            for j in range(CALLS_PER_CLIENT):
                kind = j % 4
                if kind == 0 or not mine:
                    limit = 1 + (i * CALLS_PER_CLIENT + j) % 500
                    name = f"c{i:02d}_{j:02d}.csv"
                    result = await client.call_tool("db_execute_sql", {
                        "db_id": "chinook", "query": _query(backend, limit), "output_file": name,
                        "nl_query": f"tracks up to {limit} for client {i}"})
                    mine.append(name)
                    written[name] = limit
                elif kind == 1:
                    result = await client.call_tool("saved_queries_list",
                                                    {"search": f"tracks client {i}"})
                elif kind == 2:
                    result = await client.call_tool("csv_head", {"csv_file": mine[-1], "n": 5})
                else:
                    result = await client.call_tool("csv_tail", {"csv_file": mine[-1], "n": 5})
                if result.is_error:
                    errors.append(f"client {i} call {j}: {result.content[0].text}")

    started = time.monotonic()
    async with anyio.create_task_group() as group:
        for i in range(CLIENTS):
            group.start_soon(client_session, i)
    elapsed = time.monotonic() - started
    assert process.poll() is None, f"the server died (exit code {process.returncode})"
    assert errors == []
    print(f"{CLIENTS * CALLS_PER_CLIENT} calls from {CLIENTS} clients in {elapsed:.1f}s")

    metadata_files = sorted(workspace.glob("*.metadata.json"))
    assert len(metadata_files) == len(written)
    for meta_path in metadata_files:
        metadata = json.loads(meta_path.read_text(encoding="utf-8"))
        with (workspace / metadata["csv_filename"]).open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        assert len(rows) - 1 == metadata["row_count"] == written[metadata["csv_filename"]]
        assert len(rows[0]) == metadata["column_count"] == 3
    assert not [p for p in workspace.iterdir() if p.name.endswith(".tmp")]
    async with Client(url) as client:
        listed = (await client.call_tool("saved_queries_list",
                                         {"search": "client 7"})).content[0].text
    assert all(name in listed for name in written if name.startswith("c07_"))


async def test_a_slow_query_does_not_block_other_calls(tmp_path: Path) -> None:
    """Operations run in worker threads: a quick call answers while a slow query runs."""
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    slow_sql = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                "WHERE x < 3000000) SELECT count(*) AS n FROM c")
    finished: dict[str, float] = {}
    async with Client(server) as client:
        started = time.monotonic()

        async def slow() -> None:
            result = await client.call_tool("db_execute_sql", {"db_id": "bookstore",
                                                               "query": slow_sql})
            assert not result.is_error, result.content[0].text
            finished["slow"] = time.monotonic() - started

        async def quick() -> None:
            await anyio.sleep(0.05)
            result = await client.call_tool("db_list", {})
            assert not result.is_error
            finished["quick"] = time.monotonic() - started

        async with anyio.create_task_group() as group:
            group.start_soon(slow)
            group.start_soon(quick)
    assert finished["quick"] < finished["slow"], finished


def _search_repeatedly(workspace: str, rounds: int, queue: multiprocessing.Queue) -> None:
    try:
        for _ in range(rounds):
            SavedQueryIndex(Path(workspace)).search("question", limit=5)
        queue.put("ok")
    except Exception as exc:  # noqa: BLE001 (report any failure to the parent)
        queue.put(f"{type(exc).__name__}: {exc}")


def test_processes_share_the_index_while_results_are_written(tmp_path: Path) -> None:
    """Several processes sync and search one workspace's index while files keep appearing."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    spawn = multiprocessing.get_context("spawn")
    queue = spawn.Queue()
    workers = [spawn.Process(target=_search_repeatedly, args=(str(workspace), 60, queue))
               for _ in range(6)]
    for worker in workers:
        worker.start()
    for k in range(150):
        (workspace / f"q{k}.csv").write_text("a\n1\n", encoding="utf-8")
        (workspace / f"q{k}.metadata.json").write_text(json.dumps({
            "sql_query": f"SELECT {k}", "timestamp": f"2026-01-01T00:00:{k % 60:02d}Z",
            "row_count": 1, "column_count": 1, "csv_filename": f"q{k}.csv", "db_id": "x",
            "natural_language_query": f"question number {k}"}), encoding="utf-8")
    results = [queue.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    assert results == ["ok"] * len(workers)
    found, total = SavedQueryIndex(workspace).search("question")
    assert total == 150 and len(found) == 50
