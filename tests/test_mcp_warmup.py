"""The MCP server's warm-up after the handshake: what it prepares, and when it starts."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from conftest import sqlite_config, write_dbs_yaml
from mcp.shared.message import SessionMessage

from nl2sql.mcp import build_server, edge
from nl2sql.mcp.warmup import warm_up
from nl2sql.operations.ops_context import OpsContext


def test_warm_up_opens_a_pooled_connection_per_database(tmp_path: Path) -> None:
    ctx = OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    try:
        warm_up(ctx)
        connection = ctx.connection("bookstore")
        assert connection.engine.pool.checkedin() == 1  # kept for the first call
        from nl2sql.sql_guard import guard
        assert guard._cached_verdict.cache_info().currsize >= 1
        from nl2sql.schema.models import DbInfo
        from nl2sql.operations.queries import QueryResult
        from nl2sql.workspace.results import ResultMetadata
        assert all(m.__pydantic_complete__ for m in (DbInfo, QueryResult, ResultMetadata))
    finally:
        ctx.close()


def test_warm_up_never_raises_for_a_database_that_cannot_open(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    config_path = write_dbs_yaml(tmp_path / "conf",
                                 [sqlite_config("gone", tmp_path / "missing.sqlite")])
    ctx = OpsContext.load(config_path, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    try:
        warm_up(ctx)  # logged at debug level; the first call reports it
    finally:
        ctx.close()



def test_what_the_warm_up_imports_is_frozen_in_a_console_scripts_process_only(
        tmp_path: Path) -> None:
    """In ``nl2sql-mcp``'s process the query path the warm-up imported is moved out of the
    collector's reach, as the command's own imports are (a first query paid a 2-4 ms
    collection scanning it); in any other process (here, the tests') nothing is frozen."""
    import gc

    ctx = OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    try:
        before = gc.get_freeze_count()
        warm_up(ctx)
        assert gc.get_freeze_count() == before
    finally:
        ctx.close()
    script = f"""
import gc
from nl2sql.cli.start import imported
imported("nl2sql-mcp")
from nl2sql.mcp.warmup import warm_up
from nl2sql.operations.ops_context import OpsContext
ctx = OpsContext.load(None, data_dir={str(tmp_path / "data")!r}, workspace={str(tmp_path / "ws")!r})
before = gc.get_freeze_count()
warm_up(ctx)
print(gc.get_freeze_count() - before > 10_000)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "True", done.stderr

def _message(payload: dict[str, object]) -> SessionMessage:
    return SessionMessage(types.jsonrpc_message_adapter.validate_json(json.dumps(payload)))


async def test_warm_up_starts_once_when_the_client_is_initialized(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](10)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](10)

    @asynccontextmanager
    async def memory_stdio() -> AsyncIterator[tuple[object, object]]:
        yield server_reads, server_writes

    monkeypatch.setattr(edge, "stdio_server", memory_stdio)
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    calls: list[str] = []
    server.on_initialized = lambda: calls.append("warm")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(server.run_stdio_async)
        await to_server.send(_message({
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}}))
        await from_server.receive()
        assert calls == []  # not before the handshake is complete
        for _ in range(2):
            await to_server.send(_message({"jsonrpc": "2.0",
                                           "method": "notifications/initialized"}))
        await to_server.send(_message({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        answer = (await from_server.receive()).message
        assert isinstance(answer, types.JSONRPCResponse) and answer.id == 2
        assert calls == ["warm"]
        await to_server.aclose()
        tasks.cancel_scope.cancel()


def test_warm_up_looks_up_who_a_stdio_call_acts_for(tmp_path: Path) -> None:
    """The account's entry in the users store is read by the warm-up (opening the store took
    a few ms of the first call), under the lock that keeps its imports from the calls'."""
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    try:
        assert server.default_caller is not None and server.on_initialized is not None
        assert server.default_caller.cache_info().currsize == 0  # type: ignore[attr-defined]
        server.on_initialized().join()  # type: ignore[union-attr]
        assert server.default_caller.cache_info().currsize == 1  # type: ignore[attr-defined]
        assert server.ops_context is not None
        assert "users" in vars(server.ops_context.store)  # the users store is open
    finally:
        assert server.ops_context is not None
        server.ops_context.close()
