"""bench/peers.py without the peers: tool discovery, answer parsing, skipping, one tiny run."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "peers.py"


def _peers():
    spec = importlib.util.spec_from_file_location("bench_peers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _tool(name: str, *properties: str) -> SimpleNamespace:
    return SimpleNamespace(name=name, input_schema={
        "type": "object", "properties": {p: {"type": "string"} for p in properties}})


def test_sql_tool_is_found_from_tools_list() -> None:
    peers = _peers()
    assert peers.sql_tool([_tool("search_objects", "pattern"), _tool("execute_sql", "sql")]) == (
        "execute_sql", "sql")
    assert peers.sql_tool([_tool("all_table_names"), _tool("execute_query", "query", "params")]) \
        == ("execute_query", "query")
    assert peers.sql_tool([_tool("db_execute_sql", "db_id", "query")]) == (
        "db_execute_sql", "query")


def test_rows_in_answer_reads_each_servers_format() -> None:
    peers = _peers()
    assert peers.rows_in_answer("100,000 rows x 6 columns saved to a.csv (metadata: ...)") \
        == 100_000
    assert peers.rows_in_answer('{"success": true, "data": {"rows": [], "count": 0}}') == 0
    assert peers.rows_in_answer("1. row\nid: 1\n\nResult: 1 rows") == 1
    assert peers.rows_in_answer("Result: showing first 41 rows (output truncated)") == 41


def test_runs_ours_alone_when_peers_are_skipped(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--dbhub", "none", "--mcp-alchemy", "none", "--runs", "1",
         "--calls", "5", "--warmup", "1", "--rows", "50", "--think", "0"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "skipped DBHub: skipped by option" in done.stdout
    assert "skipped mcp-alchemy: skipped by option" in done.stdout
    assert "SELECT * of 50 rows" in done.stdout


def test_whole_lines_hands_out_text_ending_at_line_ends() -> None:
    import anyio

    peers = _peers()

    async def read(chunks: list[bytes]) -> list[str]:
        send, receive = anyio.create_memory_object_stream[bytes](len(chunks))
        for chunk in chunks:
            send.send_nowait(chunk)
        send.close()
        return [text async for text in peers.WholeLines(receive)]

    assert anyio.run(read, [b'{"a"', b": 1}\n{", b'"b": 2}\n', b"tail"]) == [
        '{"a": 1}\n', '{"b": 2}\n', "tail"]
    assert anyio.run(read, [b"x" * 70_000, b"y\n"]) == ["x" * 70_000 + "y\n"]
