"""Two ``nl2sql-mcp --transport http`` processes sharing one PostgreSQL store (and one workspace)
behave as one, with no sticky sessions: a result saved through one is listed and accepted
through the other, a model's accept through either is a proposal listed everywhere and served
nowhere, and an answer a person verifies through one is served by another process with no model
request."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import yaml
from conftest import SAMPLE_DATA, stop_process
from mcp import Client
from mcp_processes import start_server

BIN = Path(sys.executable).parent
QUESTION = "How many artists are there?"
RIGHT = "SELECT count(*) AS artists FROM Artist"
INJECTED = "SELECT 0 AS artists"


@pytest.fixture
def two_servers(tmp_path: Path, pg_store: str) -> Iterator[dict[str, Any]]:
    shutil.copyfile(SAMPLE_DATA / "chinook" / "chinook.sqlite", tmp_path / "chinook.sqlite")
    config = tmp_path / "dbs.yaml"
    config.write_text(yaml.safe_dump({
        "databases": {"chinook": {"type": "sqlite", "path": "chinook.sqlite"}},
        "store": pg_store}))
    workspace = tmp_path / "ws"
    started = [start_server(config, workspace) for _ in range(2)]
    try:
        yield {"urls": [url for _process, url in started],
               "env": {"NL2SQL_CONFIG": str(config), "NL2SQL_WORKSPACE": str(workspace)}}
    finally:
        for process, _url in started:
            stop_process(process)


def text(result: types.CallToolResult) -> str:
    assert not result.is_error, result.content[0].text
    return result.content[0].text


def ask_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "nl2sql-ask"), *args], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)


async def accept_confirmed(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={})


async def test_two_servers_sharing_a_postgresql_store_behave_as_one(two_servers: dict) -> None:
    one, other = two_servers["urls"]
    env = two_servers["env"]
    async with Client(one) as first, Client(other) as second:
        text(await first.call_tool("db_execute_sql", {
            "db_id": "chinook", "query": INJECTED, "nl_query": QUESTION,
            "output_file": "injected"}))
        # Saved through one, listed and accepted (a proposal) through the other.
        listed = text(await second.call_tool("saved_queries_list", {"search": "artists"}))
        assert "injected.csv" in listed and INJECTED in listed
        assert text(await second.call_tool("saved_query_accept", {
            "csv_file": "injected"})).startswith("Proposed ")
    proposals = json.loads(ask_cli(env, "--list-proposed", "--json").stdout)
    assert [p["sql"] for p in proposals] == [INJECTED]
    # A person confirms an answer through the first server (the client asks them) ...
    async with Client(one, elicitation_callback=accept_confirmed) as person:
        text(await person.call_tool("db_execute_sql", {
            "db_id": "chinook", "query": RIGHT, "nl_query": QUESTION, "output_file": "right"}))
        assert "is the verified answer" in text(await person.call_tool(
            "saved_query_accept", {"csv_file": "right"}))
    # ... and another process serves it with no model (none is configured), not the proposal.
    done = ask_cli(env, "how many ARTISTS are there", "--json")
    assert done.returncode == 0, done.stderr
    served = json.loads(done.stdout)
    assert served["source"].startswith("verified:") and served["sql"] == RIGHT
    assert served["usage"]["requests"] == 0 and served["df"] == [{"artists": 275}]
    assert [p["sql"] for p in json.loads(ask_cli(env, "--list-proposed", "--json").stdout)] \
        == [INJECTED]
    # Both servers list the results either saved, the served answer's too.
    async with Client(other) as second:
        listed = text(await second.call_tool("saved_queries_list", {}))
    assert "injected.csv" in listed and "right.csv" in listed and listed.startswith("3 ")
