"""The installed ``nl2sql-mcp`` console script as a real subprocess: stdio and streamable HTTP."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SAMPLE_DATA, sqlite_config, stop_process, write_dbs_yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from nl2sql.schema.cache import save_db_info
from nl2sql.db.base import create_connection
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.operations.registry import OPERATIONS

NL2SQL_MCP = Path(sys.executable).parent / "nl2sql-mcp"
TOOL_NAMES = {op.name for op in OPERATIONS}
ALBUMS_SQL = "SELECT count(*) AS albums FROM Album"


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, str]:
    """A dbs.yaml with a copy of Chinook (SQLite), its schema cache, and an empty workspace."""
    assert NL2SQL_MCP.is_file(), "install the package: .venv/bin/pip install -e ."
    db_path = tmp_path / "chinook.sqlite"
    shutil.copyfile(SAMPLE_DATA / "chinook" / "chinook.sqlite", db_path)
    config = sqlite_config("chinook", db_path)
    (tmp_path / "conf").mkdir()
    config_path = write_dbs_yaml(tmp_path / "conf", [config])
    data_dir = tmp_path / "data"
    connection = create_connection(config)
    save_db_info(DbSchemaExtractor(connection).extract("chinook"), data_dir)
    connection.dispose()
    return {"NL2SQL_CONFIG": str(config_path), "NL2SQL_WORKSPACE": str(tmp_path / "ws"),
            "NL2SQL_DATA_DIR": str(data_dir)}


async def test_stdio_server_lists_tools_and_runs_a_query(setup: dict[str, str]) -> None:
    params = StdioServerParameters(command=str(NL2SQL_MCP), env=setup)
    async with Client(params) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == TOOL_NAMES
        result = await client.call_tool("db_execute_sql", {
            "db_id": "chinook", "query": ALBUMS_SQL, "output_file": "albums.csv"})
        assert not result.is_error, result.content[0].text
        assert "1 row x 1 column saved to albums.csv" in result.content[0].text
        assert "| 347 |" in result.content[0].text
        error = await client.call_tool("db_show_schema", {"db_id": "nope"})
        assert error.is_error and "Known databases: bookstore, chinook." in error.content[0].text
    workspace = Path(setup["NL2SQL_WORKSPACE"])
    assert (workspace / "albums.csv").read_text() == "albums\n347\n"
    assert json.loads((workspace / "albums.metadata.json").read_text())["row_count"] == 1


def test_a_broken_config_fails_at_start_on_stderr(tmp_path: Path) -> None:
    bad = tmp_path / "dbs.yaml"
    bad.write_text("databases:\n  shop:\n    type: oracle\n", encoding="utf-8")
    done = subprocess.run([str(NL2SQL_MCP), "--config", str(bad)], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2  # a set-up error, as every command says it
    assert done.stdout == ""  # stdout belongs to the MCP protocol
    assert done.stderr.startswith("error: ") and "unknown type 'oracle'" in done.stderr
    assert "Traceback" not in done.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port} after {timeout}s")


@pytest.fixture
def http_server(setup: dict[str, str]) -> tuple[str, dict[str, str]]:
    port = _free_port()
    process = subprocess.Popen([str(NL2SQL_MCP), "--transport", "http", "--port", str(port)],
                               env={**os.environ, **setup}, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp", setup
    finally:
        stop_process(process)


async def test_streamable_http_server(http_server: tuple[str, dict[str, str]]) -> None:
    url, env = http_server
    async with Client(url) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == TOOL_NAMES
        result = await client.call_tool("db_execute_sql", {"db_id": "chinook",
                                                           "query": ALBUMS_SQL})
        assert not result.is_error and "| 347 |" in result.content[0].text
        listed = await client.call_tool("saved_queries_list", {"search": "album"})
        assert not listed.is_error and "count(*) AS albums" in listed.content[0].text
        catalog = await client.read_resource("db://catalog")
        assert "chinook (sqlite)" in catalog.contents[0].text


def test_start_up_imports_stay_light(tmp_path: Path) -> None:
    """The server never needs pandas or pydantic-ai; sqlglot and SQLAlchemy load on the first
    query (or in the warm-up) only, the context engine and the semantic models (pydantic models
    of their own, ~15 ms) on the first search or prompt; the result models are built on first
    use, not at start."""
    script = f"""
import sys
from nl2sql.mcp import build_server
build_server(None, data_dir={str(tmp_path / 'data')!r}, workspace={str(tmp_path / 'ws')!r})
print(sorted(m for m in ("pandas", "pydantic_ai", "sqlglot", "sqlalchemy",
                         "nl2sql.context_engine.engine", "nl2sql.semantic",
                         "nl2sql.agents.instructions") if m in sys.modules))
from nl2sql.schema.models import DbInfo
from nl2sql.operations.queries import QueryResult
print([m.__name__ for m in (DbInfo, QueryResult) if m.__pydantic_complete__])
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split("\n")[:2] == ["[]", "[]"], done.stdout


def test_help_names_transports_flags_and_an_example() -> None:
    done = subprocess.run([str(NL2SQL_MCP), "--help"], capture_output=True, text=True,
                          timeout=60, check=True)
    for text in ("--transport {stdio,http}", "--port", "--config", "--workspace", "--data-dir",
                 "Example:", "claude mcp add nl2sql"):
        assert text in done.stdout
