"""Names and files in the workspace, through a real MCP client session: a hard link to a file
outside the workspace is not read, invisible characters are refused in result names, and an
``output_file`` with ``/`` puts the result in a sub-folder of the workspace (and nowhere else).
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from mcp import Client

from nl2sql.errors import WorkspacePathError
from nl2sql.mcp import build_server
from nl2sql.workspace.results import resolve_workspace_path


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


# -- lookalike characters and deep folders (issue 28) ----------------------------------------

#: The audit's names and variants: characters that look like (or normalise to) a dot or a slash,
#: fullwidth letters, mixed-script words, overlays, and folders nested 300 deep.
LOOKALIKES = [
    "\u2024\u2024/evil.csv",          # ONE DOT LEADER: NFKC '.'
    "..\u2215evil.csv",               # DIVISION SLASH: looks like '/', NFKC keeps it
    "\u2025/evil.csv",                # TWO DOT LEADER: NFKC '..'
    "..\uff0fevil.csv",               # FULLWIDTH SOLIDUS: NFKC '/'
    "\uff0e\uff0e/evil.csv",          # FULLWIDTH FULL STOP
    "..\u2044evil.csv",               # FRACTION SLASH
    "..\u29f8evil.csv",               # BIG SOLIDUS
    "\ufe52\ufe52/evil.csv",          # SMALL FULL STOP: NFKC '.'
    "..\uff3cevil.csv",               # FULLWIDTH REVERSE SOLIDUS: NFKC '\'
    "report\u3002csv",                # IDEOGRAPHIC FULL STOP
    "x\u0338y.csv",                   # COMBINING LONG SOLIDUS OVERLAY
    "\uff52\uff45\uff50\uff4f\uff52\uff54.csv",  # fullwidth 'report'
    "r\u0435\u0440\u043ert.csv",      # Cyrillic е р о inside a Latin word
    "\u2460.csv",                     # CIRCLED DIGIT ONE: NFKC '1'
    "\ufb01le.csv",                   # LATIN SMALL LIGATURE FI: NFKC 'fi'
    "cafe\u0301.csv",                 # decomposed é: NFKC composes it
    "a\\b.csv",                       # a backslash reads as a separator elsewhere
    "./x.csv", ".hidden.csv", "a//b.csv", "...", " lead.csv",
    "a/" * 300 + "deep.csv",          # 300 folders
    "a/" * 9 + "deep.csv",            # one past the limit
]


@pytest.mark.parametrize("name", LOOKALIKES)
async def test_lookalike_and_deep_names_are_refused(server: object, tmp_path: Path,
                                                    name: str) -> None:
    async with Client(server) as client:
        is_error, text = await _call(client, "db_execute_sql", db_id="bookstore",
                                     query="SELECT 1 AS x", output_file=name)
        assert is_error, text
        assert "\n" not in text and "Traceback" not in text
        is_error, text = await _call(client, "csv_head", csv_file=name)
        assert is_error, text
    assert list((tmp_path / "ws").rglob("*")) == []  # no file and no folder was made


@pytest.mark.parametrize("name", [
    "отчёт.csv", "销售_2024.csv", "Ελλάδα_report.csv", "हिन्दी रिपोर्ट.csv", "sales (2024).csv",
    "売上sales.csv", "a/" * 8 + "deep.csv",
])
async def test_names_in_one_script_per_word_are_written_and_read(server: object, tmp_path: Path,
                                                                  name: str) -> None:
    async with Client(server) as client:
        is_error, text = await _call(client, "db_execute_sql", db_id="bookstore",
                                     query="SELECT 1 AS x", output_file=name)
        assert not is_error, text
        is_error, text = await _call(client, "csv_head", csv_file=name)
        assert not is_error and text.endswith("x\n1"), text
    assert (tmp_path / "ws" / name).read_text() == "x\n1\n"


def _one_of_many(char: str) -> bool:
    return unicodedata.category(char) == "Cn" or unicodedata.name(char, "").startswith(
        ("CJK UNIFIED IDEOGRAPH", "HANGUL SYLLABLE", "TANGUT", "YI SYLLABLE"))


def test_every_accepted_character_reads_as_itself(tmp_path: Path) -> None:
    """Over every assigned code point (every 97th unassigned one, Han ideograph or Hangul
    syllable: thousands of letters alike): a name holding it is
    refused, or it is NFKC-stable, no separator, dot, symbol, space or invisible character
    but the ASCII ones the rule lists, and no overlay; and every character whose NFKC form
    holds a dot, slash or backslash is refused."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    root = workspace.resolve()
    accepted = []
    for code in range(0x110000):
        char = chr(code)
        if 0xD800 <= code <= 0xDFFF or (code % 97 and _one_of_many(char)):
            continue
        name = f"1{char}1.csv"  # digits: a word of its own, a mark joins them
        try:
            resolve_workspace_path(root, name, resolved=True)
        except WorkspacePathError as refused:
            assert "\n" not in str(refused)
            continue
        accepted.append(char)
        assert unicodedata.normalize("NFKC", name) == name, hex(code)
        category = unicodedata.category(char)
        if not char.isascii():
            assert category[0] in "LMN" and category not in ("Nl", "No", "Me"), hex(code)
            assert unicodedata.combining(char) != 1, hex(code)  # no overlay
            assert not set(unicodedata.normalize("NFKC", char)) & set("./\\"), hex(code)
    assert set("._- ") <= set(accepted) and {"é", "ж", "あ", "ア"} <= set(accepted)
    assert not set(accepted) & set("\\\u2024\u2215\uff0f\u2044")
    assert list(workspace.iterdir()) == []  # resolving created nothing
