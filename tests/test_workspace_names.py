"""Names and files in the workspace, through a real MCP client session: a hard link to a file
outside the workspace is not read, invisible characters are refused in result names, and an
``output_file`` with ``/`` puts the result in a sub-folder of the workspace (and nowhere else).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client

from nl2sql.mcp import build_server


@pytest.fixture
def server(tmp_path: Path) -> object:
    """The bundled bookstore sample, a workspace, and a secret file outside it."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.csv").write_text("password\nhunter2\n")
    return build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")


async def _call(client: Client, tool: str, **arguments: object) -> tuple[bool, str]:
    result = await client.call_tool(tool, arguments)
    return bool(result.is_error), "\n".join(getattr(c, "text", "") for c in result.content)


async def test_a_hard_link_to_an_outside_file_is_not_read(server: object, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.link(tmp_path / "outside" / "secret.csv", workspace / "leak.csv")
    async with Client(server) as client:
        for tool in ("csv_head", "csv_tail", "saved_query_get_details", "csv_chart"):
            is_error, text = await _call(client, tool, csv_file="leak.csv")
            assert is_error, (tool, text)
            assert "hunter2" not in text
            assert "hard links" in text or "no metadata" in text.lower(), (tool, text)
        # the same file without a second link is read
        (workspace / "own.csv").write_text("password\nhunter2\n")
        is_error, text = await _call(client, "csv_head", csv_file="own.csv")
        assert not is_error and "hunter2" in text, text


@pytest.mark.parametrize("name", [
    "report\u202egpj.csv",   # right-to-left override: shows as "reportvsc.jpg"
    "a\u200bb.csv",          # zero-width space
    "x\u2066y.csv",          # left-to-right isolate
    "line\u2028break.csv",   # line separator
    "tab\there.csv",         # control character
])
async def test_invisible_characters_are_refused_in_result_names(server: object,
                                                                 tmp_path: Path,
                                                                 name: str) -> None:
    async with Client(server) as client:
        is_error, text = await _call(client, "db_execute_sql", db_id="bookstore",
                                     query="SELECT 1 AS x", output_file=name)
        assert is_error and "invisible or control character" in text, text
    assert not any((tmp_path / "ws").rglob("*.csv"))


async def test_output_file_with_a_slash_makes_a_sub_folder(server: object,
                                                           tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    async with Client(server) as client:
        is_error, text = await _call(client, "db_execute_sql", db_id="bookstore",
                                     query="SELECT 1 AS x", output_file="reports/2024/q1.csv")
        assert not is_error, text
        assert (workspace / "reports" / "2024" / "q1.csv").read_text() == "x\n1\n"
        is_error, text = await _call(client, "saved_queries_list")
        assert "reports/2024/q1.csv" in text, text
        is_error, text = await _call(client, "csv_head", csv_file="reports/2024/q1.csv")
        assert not is_error and text.endswith("x\n1"), text
        for name in ("../q1.csv", "reports/../../q1.csv", "/tmp/q1.csv", "~/q1.csv"):
            is_error, text = await _call(client, "db_execute_sql", db_id="bookstore",
                                         query="SELECT 1 AS x", output_file=name)
            assert is_error, (name, text)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("q1.csv")) == [
        "ws/reports/2024/q1.csv"]
