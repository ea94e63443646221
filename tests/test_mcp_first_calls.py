"""Calls that arrive right after start-up, while the warm-up still runs, over a real stdio
session with the installed ``nl2sql-mcp``: every tool, every answer correct, and the server
still works afterwards (concurrent first imports used to break it for good)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import (BACKENDS, SAMPLE_DATA, SampleDb, duckdb_config, run_duckdb, sample_fixture,
                      sqlite_config, write_dbs_yaml)
from metrics_samples import chinook_model
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from nl2sql.schema.cache import save_db_info
from nl2sql.db.base import create_connection
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.operations.registry import OPERATIONS

NL2SQL_MCP = Path(sys.executable).parent / "nl2sql-mcp"

#: tool -> (arguments, a piece of its correct answer)
CALLS: dict[str, tuple[dict[str, Any], str]] = {
    "db_list": ({}, "chinook (sqlite)"),
    "db_show_schema": ({"db_id": "chinook", "tables": ["Album"]}, "CREATE TABLE Album"),
    "db_search_schema": ({"question": "album titles", "db_id": "chinook"}, "Album"),
    "db_execute_sql": ({"db_id": "chinook", "query": "SELECT count(*) AS n FROM Album"},
                       "| 347 |"),
    "db_get_row_by_id": ({"db_id": "chinook", "table": "Album", "row_id": 1},
                         "For Those About To Rock"),
    "saved_queries_list": ({}, "genres.csv"),
    "saved_query_get_details": ({"csv_file": "genres.csv"}, "SELECT name, id AS n FROM genres"),
    "csv_head": ({"csv_file": "genres.csv", "n": 2}, "Rock"),
    "csv_tail": ({"csv_file": "genres.csv", "n": 1}, "Jazz"),
    "csv_chart": ({"csv_file": "genres.csv"}, "genres"),
    # a model's accept over stdio is a proposal, served once a person confirms it
    "saved_query_accept": ({"csv_file": "genres.csv"}, "Proposed"),
    "metrics_list": ({"db_id": "chinook"}, "invoice_count"),
    "metrics_query": ({"db_id": "chinook", "metrics": ["invoice_count"]}, "| 412 |"),
}
#: The same on the DuckDB database (another backend's first imports at the same time).
DUCKDB_CALLS: dict[str, tuple[dict[str, Any], str]] = {
    "duck_schema": ({"db_id": "shop", "tables": ["genres"]}, "CREATE TABLE genres"),
    "duck_sql": ({"db_id": "shop", "query": "SELECT count(*) AS n FROM genres"}, "| 3 |"),
}


chinook = sample_fixture("chinook", BACKENDS)


@pytest.fixture
def server_env(tmp_path: Path) -> dict[str, str]:
    """Chinook (SQLite, with its dbt metrics) and a small DuckDB file, both with a schema
    cache, and one saved result (genres.csv) in the workspace."""
    chinook = tmp_path / "chinook.sqlite"
    shutil.copyfile(SAMPLE_DATA / "chinook" / "chinook.sqlite", chinook)
    shop = tmp_path / "shop.duckdb"
    run_duckdb(shop, "CREATE TABLE genres AS SELECT * FROM (VALUES (1, 'Rock'), (2, 'Blues'), "
                     "(3, 'Jazz')) AS t(id, name)")
    (tmp_path / "conf").mkdir()
    model = chinook_model(tmp_path / "conf" / "metrics", "dbt", "sqlite")
    configs = [sqlite_config("chinook", chinook, semantic_model=model),
               duckdb_config("shop", shop)]
    config_path = write_dbs_yaml(tmp_path / "conf", configs)
    data_dir, workspace = tmp_path / "data", tmp_path / "ws"
    for config in configs:
        connection = create_connection(config)
        save_db_info(DbSchemaExtractor(connection).extract(config.db_id), data_dir)
        connection.dispose()
    ctx = OpsContext.load(config_path, data_dir=data_dir, workspace=workspace)
    try:
        db_execute_sql_op(ctx, db_id="shop", query="SELECT name, id AS n FROM genres ORDER BY id",
                          output_file="genres.csv", nl_query="Which genres are there?")
    finally:
        ctx.close()
    return {"NL2SQL_CONFIG": str(config_path), "NL2SQL_WORKSPACE": str(workspace),
            "NL2SQL_DATA_DIR": str(data_dir),  # and the tree under test, when it is not installed
            **{key: os.environ[key] for key in ("PYTHONPATH",) if key in os.environ}}


def test_every_tool_is_exercised() -> None:
    assert set(CALLS) == {op.name for op in OPERATIONS}


async def _first_calls(env: dict[str, str], delay: float) -> dict[str, tuple[bool, str]]:
    answers: dict[str, tuple[bool, str]] = {}
    async with Client(StdioServerParameters(command=str(NL2SQL_MCP), env=env)) as client:

        async def call(key: str, tool: str, arguments: dict[str, Any]) -> None:
            result = await client.call_tool(tool, arguments)
            text = "\n".join(getattr(item, "text", "") for item in result.content)
            answers[key] = (result.is_error, text)

        await client.list_tools()
        await anyio.sleep(delay)
        async with anyio.create_task_group() as tasks:  # all at once: first imports overlap
            for tool, (arguments, _) in CALLS.items():
                tasks.start_soon(call, tool, tool, arguments)
            tasks.start_soon(call, "duck_schema", "db_show_schema", DUCKDB_CALLS["duck_schema"][0])
            tasks.start_soon(call, "duck_sql", "db_execute_sql", DUCKDB_CALLS["duck_sql"][0])
        # ... and the server still answers afterwards
        await call("again", "db_execute_sql",
                   {"db_id": "chinook", "query": "SELECT count(*) AS n FROM Artist"})
    return answers


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05])
async def test_every_tool_answers_right_after_tools_list(server_env: dict[str, str],
                                                         delay: float) -> None:
    expected = {key: text for key, (_, text) in {**CALLS, **DUCKDB_CALLS}.items()}
    expected["again"] = "| 275 |"
    for _ in range(2):  # the race is a matter of timing: several fresh servers per delay
        answers = await _first_calls(server_env, delay)
        wrong = {key: text[:300] for key, (is_error, text) in answers.items()
                 if is_error or expected[key] not in text}
        assert not wrong, wrong


#: In a fresh interpreter: the warm-up thread starts, and after ``offset`` seconds four calls
#: run at once through the MCP tools' own function (two backends, two tools each), then one
#: more. Prints the outcomes as JSON.
RACE = """
import json, sys, threading, time
from nl2sql.mcp.tools import _run
from nl2sql.mcp.warmup import start_warm_up
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.registry import OPERATIONS

env, offset = json.loads(sys.argv[1]), float(sys.argv[2])
ctx = OpsContext.load(env["NL2SQL_CONFIG"], data_dir=env["NL2SQL_DATA_DIR"],
                      workspace=env["NL2SQL_WORKSPACE"])
ops = {op.name: op for op in OPERATIONS}
calls = [("db_show_schema", {"db_id": "chinook", "tables": ["Album"]}),
         ("db_execute_sql", {"db_id": "chinook", "query": "SELECT count(*) AS n FROM Album"}),
         ("db_show_schema", {"db_id": "shop"}),
         ("db_execute_sql", {"db_id": "shop", "query": "SELECT count(*) AS n FROM genres"})]
out = [None] * (len(calls) + 1)
def call(i, name, arguments):
    try:
        out[i] = _run(ops[name], ctx, arguments)[:200]
    except Exception as exc:
        out[i] = "FAILED " + repr(exc)
start_warm_up(ctx)
time.sleep(offset)
threads = [threading.Thread(target=call, args=(i, *c)) for i, c in enumerate(calls)]
for thread in threads: thread.start()
for thread in threads: thread.join()
call(len(calls), "db_execute_sql", {"db_id": "chinook", "query": "SELECT count(*) AS n FROM Artist"})
print(json.dumps(out))
"""


@pytest.mark.parametrize("offset", [0.0, 0.002, 0.01, 0.03])
def test_calls_during_the_warm_up_are_correct(server_env: dict[str, str], offset: float) -> None:
    """The same race without the stdio transport's delays, so it is met on every run: the
    calls used to fail with KeyError: 'sqlalchemy', and every call after them too."""
    done = subprocess.run([sys.executable, "-c", RACE, json.dumps(server_env), str(offset)],
                          capture_output=True, text=True, timeout=120, check=True)
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    expected = ["CREATE TABLE Album", "| 347 |", "CREATE TABLE genres", "| 3 |", "| 275 |"]
    wrong = [answer for answer, text in zip(answers, expected, strict=True) if text not in answer]
    assert not wrong, wrong


#: In a fresh interpreter: prepare one database's code path, then run each tool on it and
#: print the modules each call imported (none: nothing is left to import concurrently).
IMPORTS_AFTER_PREPARE = """
import json, sys
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.first_use import call_prepared, prepare, prepare_context_engine
from nl2sql.operations.registry import OPERATIONS

env, table = json.loads(sys.argv[1]), sys.argv[2]
ctx = OpsContext.load(env["NL2SQL_CONFIG"], data_dir=env["NL2SQL_DATA_DIR"],
                      workspace=env["NL2SQL_WORKSPACE"])
ops = {op.name: op.function for op in OPERATIONS}
prepare(ctx, "chinook")
prepare_context_engine()
calls = [("db_show_schema", {"db_id": "chinook"}),
         ("db_execute_sql", {"db_id": "chinook", "query": f"SELECT * FROM {table}",
                             "output_file": "all.csv"}),
         ("db_get_row_by_id", {"db_id": "chinook", "table": table, "row_id": 1}),
         ("db_search_schema", {"db_id": "chinook", "question": "album titles"}),
         ("saved_queries_list", {}), ("saved_query_get_details", {"csv_file": "all.csv"}),
         ("csv_head", {"csv_file": "all.csv"}), ("csv_tail", {"csv_file": "all.csv"}),
         ("db_list", {}), ("metrics_list", {"db_id": "chinook"})]
imported = {}
for name, arguments in calls:
    before = set(sys.modules)
    call_prepared(ops[name], ctx, **arguments).render()
    imported[name] = sorted(set(sys.modules) - before)
print(json.dumps(imported))
"""


def test_a_prepared_database_imports_nothing_more(chinook: SampleDb, tmp_path: Path) -> None:
    """What ``prepare`` loads covers every tool's call on each backend."""
    config_path = write_dbs_yaml(tmp_path, [chinook.config])
    env = {"NL2SQL_CONFIG": str(config_path), "NL2SQL_DATA_DIR": str(tmp_path / "data"),
           "NL2SQL_WORKSPACE": str(tmp_path / "ws")}
    connection = create_connection(chinook.config)
    save_db_info(DbSchemaExtractor(connection).extract("chinook"), tmp_path / "data")
    connection.dispose()
    done = subprocess.run([sys.executable, "-c", IMPORTS_AFTER_PREPARE, json.dumps(env),
                           chinook.quoted("album")],
                          capture_output=True, text=True, timeout=300, check=True)
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert imported == {name: [] for name in imported}, imported
