"""Faults injected at the edges: nothing lost, nothing wedged, every error one sentence.

Disk full (ENOSPC raised where the bytes are written), a SQLite file deleted or replaced while
the server runs, two writers of one output_file with readers in between, a metadata file that
is a symlink out of the workspace, and every face (MCP tools, MCP stdio, CLI, agent tools)
turning any exception into one sentence."""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from mcp import Client

from conftest import sqlite_config
from nl2sql.schema.cache import save_db_info
from nl2sql.errors import (DatabaseConnectionError, UnknownTableError, WorkspaceFileError,
                           WorkspacePathError)
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.mcp import build_server
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.csv_files import csv_head_op, csv_tail_op
from nl2sql.operations.queries import db_execute_sql_op, db_get_row_by_id_op
from nl2sql.operations.saved_queries import saved_query_get_details_op
from nl2sql.workspace.results import CsvResultWriter, read_metadata_for_csv

NL2SQL_MCP = Path(sys.executable).with_name("nl2sql-mcp")


def _no_space(*_args: object, **_kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _files(folder: Path) -> list[str]:
    """Every entry, hidden ones too (temporary files start with a dot)."""
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def _make_db(path: Path, rows: list[tuple[int, str]]) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", rows)
    conn.close()


@pytest.fixture
def ctx(tmp_path: Path, make_registry) -> OpsContext:
    path = tmp_path / "f.db"
    _make_db(path, [(i, f"name {i}") for i in range(1, 3001)])
    context = OpsContext(make_registry(sqlite_config("f", path)))
    save_db_info(DbSchemaExtractor(context.connection("f")).extract("f"), context.data_dir)
    return context


# -- 7: disk full -------------------------------------------------------------------------

class _FullAfterFirstBatch(CsvResultWriter):
    def _write(self, records):
        if self.bytes_written:
            _no_space()
        return super()._write(records)


class _FullOnClose(CsvResultWriter):
    """The buffered bytes hit the full disk when the file is closed (the flush in close)."""

    def _close(self) -> None:
        if not self._binary.closed:
            self._binary.close()
            _no_space()


@pytest.mark.parametrize("fault", ["write", "close", "metadata"])
def test_disk_full_is_one_sentence_and_leaves_no_file(ctx, monkeypatch, fault) -> None:
    with monkeypatch.context() as patch:
        if fault == "write":
            patch.setattr("nl2sql.operations.queries.CsvResultWriter", _FullAfterFirstBatch)
        elif fault == "close":
            patch.setattr("nl2sql.operations.queries.CsvResultWriter", _FullOnClose)
        else:
            patch.setattr("nl2sql.workspace.results._write_all", _no_space)  # the metadata's bytes
        with pytest.raises(WorkspaceFileError) as raised:
            db_execute_sql_op(ctx, "f", "SELECT * FROM t", output_file="full")
    message = str(raised.value)
    assert "the workspace disk is full (" in message and " free)" in message
    assert "\n" not in message
    assert not [n for n in _files(ctx.workspace) if n.startswith(".full")], "temp file left"
    assert "full.metadata.json" not in _files(ctx.workspace)
    assert db_execute_sql_op(ctx, "f", "SELECT count(*) AS n FROM t").row_count == 1


async def test_disk_full_through_mcp_is_one_sentence(tmp_path, monkeypatch) -> None:
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    monkeypatch.setattr("nl2sql.operations.queries.CsvResultWriter", _FullAfterFirstBatch)
    async with Client(server) as client:
        result = await client.call_tool("db_execute_sql", {
            "db_id": "bookstore", "query": "SELECT * FROM books"})
    text = result.content[0].text
    assert result.is_error and "the workspace disk is full (" in text and "\n" not in text


def test_rotate_key_on_a_full_disk_is_one_line(tmp_path, monkeypatch, capsys) -> None:
    from nl2sql.config import secrets
    from nl2sql.cli import secrets as cli

    secrets.create_key()
    config = tmp_path / "dbs.yaml"
    token = secrets.encrypt_value("pw")
    config.write_text(f"databases:\n  shop:\n    type: postgres\n    dbname: shop\n"
                      f"    password: {token}\n")
    monkeypatch.setattr(secrets, "atomic_write_text", _no_space)
    monkeypatch.setattr(os, "fsync", _no_space)  # the key file's own write too
    code = cli.main(["rotate-key", "--config", str(config)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "The disk is full (" in err and "Traceback" not in err and token not in err


def test_annotate_with_an_impossible_data_dir_is_one_line(capsys) -> None:
    from nl2sql.cli import annotate

    code = annotate.main(["bookstore", "--data-dir", "/proc/x"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "/proc/x" in err and "Traceback" not in err


# -- 8: the SQLite file deleted or replaced while the server runs ---------------------------

def test_a_replaced_sqlite_file_is_reopened(ctx, tmp_path) -> None:
    path = ctx.config("f").path
    first = db_execute_sql_op(ctx, "f", "SELECT count(*) AS n FROM t", output_file="n1")
    assert "3000" in first.preview
    replacement = tmp_path / "new.db"
    _make_db(replacement, [(1, "only")])
    os.replace(replacement, path)  # a new inode under the same name, pool still open
    second = db_execute_sql_op(ctx, "f", "SELECT count(*) AS n FROM t", output_file="n2")
    assert "| 1 |" in second.preview
    row = db_get_row_by_id_op(ctx, "f", "t", 1)
    assert row.row == {"id": 1, "name": "only"}


def test_a_deleted_sqlite_file_is_reported(ctx) -> None:
    db_execute_sql_op(ctx, "f", "SELECT 1 AS one")
    ctx.config("f").path.unlink()
    with pytest.raises(DatabaseConnectionError, match="was deleted while the server ran"):
        db_execute_sql_op(ctx, "f", "SELECT count(*) FROM t")



@pytest.mark.parametrize(("content", "expected"), [
    (b"id,name\n1,a\n", "is not an SQLite database file; fix its 'path' in dbs.yaml"),
    (None, "is a folder, not a file; fix its 'path' in dbs.yaml"),
])
def test_a_path_that_is_not_an_sqlite_file_is_one_line(tmp_path, make_registry, content,
                                                       expected) -> None:
    """A CSV (or any other file) or a folder given as an SQLite path is one line, from
    annotate-schema and a query alike (SQLite itself says 'file is not a database' only at the
    first statement: an internal error before); an empty file is an empty database."""
    from nl2sql.annotation.pipeline import annotate_database

    path = tmp_path / "data.csv"
    path.write_bytes(content) if content is not None else path.mkdir()
    context = OpsContext(make_registry(sqlite_config("x", path)))
    with pytest.raises(DatabaseConnectionError, match=expected):
        annotate_database(context.config("x"), context.data_dir)
    with pytest.raises(DatabaseConnectionError, match=expected) as raised:
        db_execute_sql_op(context, "x", "SELECT 1 AS one")
    assert "\n" not in str(raised.value)
    empty = tmp_path / "empty.db"
    empty.touch()
    context = OpsContext(make_registry(sqlite_config("e", empty)))
    assert "| 1 |" in db_execute_sql_op(context, "e", "SELECT 1 AS one").preview


# -- 9: two writers of one output_file, readers in between ----------------------------------

def test_readers_never_see_a_csv_and_metadata_of_different_runs(ctx) -> None:
    errors: list[str] = []
    stop = threading.Event()

    def writer(k: int) -> None:
        for _ in range(6):
            db_execute_sql_op(ctx, "f", f"SELECT id FROM t WHERE id <= {k * 100 + 1}",
                              output_file="shared.csv", overwrite=True)

    def reader() -> None:
        while not stop.is_set():
            try:
                head = csv_head_op(ctx, "shared.csv", n=1000)
            except WorkspacePathError:
                continue  # not written yet
            if head.total_rows != len(head.rows):
                errors.append(f"{len(head.rows)} rows beside metadata of {head.total_rows}")

    readers = [threading.Thread(target=reader) for _ in range(3)]
    writers = [threading.Thread(target=writer, args=(k,)) for k in range(1, 7)]
    for thread in readers + writers:
        thread.start()
    for thread in writers:
        thread.join()
    stop.set()
    for thread in readers:
        thread.join()
    assert not errors, errors[:3]
    final = csv_head_op(ctx, "shared.csv", n=1000)
    assert final.total_rows == len(final.rows)


# -- 10: every face, one sentence -----------------------------------------------------------

def test_a_300_character_output_file_is_refused_in_one_sentence(ctx) -> None:
    with pytest.raises(WorkspacePathError, match="file name is too long") as raised:
        db_execute_sql_op(ctx, "f", "SELECT 1 AS one", output_file="x" * 300)
    assert "\n" not in str(raised.value)


def test_csv_head_and_tail_on_a_binary_file(ctx) -> None:
    ctx.workspace.mkdir(parents=True, exist_ok=True)
    (ctx.workspace / "blob.csv").write_bytes(bytes(range(256)) * 64)
    for op in (csv_head_op, csv_tail_op):
        with pytest.raises(WorkspaceFileError, match="Cannot read blob.csv as CSV") as raised:
            op(ctx, "blob.csv")
        assert "\n" not in str(raised.value)


def test_row_id_beyond_64_bits_on_sqlite(ctx) -> None:
    with pytest.raises(UnknownTableError, match="outside the database's integer range"):
        db_get_row_by_id_op(ctx, "f", "t", 10**40)


async def test_mcp_faces_answer_one_sentence(tmp_path, monkeypatch, caplog) -> None:
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    context = OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    save_db_info(DbSchemaExtractor(context.connection("bookstore")).extract("bookstore"),
                 context.data_dir)
    context.close()

    def crash(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("secret internals /etc/shadow")

    async with Client(server) as client:
        async def call(tool: str, **arguments: object) -> str:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, tool
            text = result.content[0].text
            assert "\n" not in text and "pydantic.dev" not in text and "Traceback" not in text
            return text

        assert "Invalid arguments for csv_head: n: Input should be less than or equal to " \
               "1000" in await call("csv_head", csv_file="x.csv", n=5000)
        assert "row_id: Field required" in await call("db_get_row_by_id", db_id="bookstore",
                                                      table="books")
        assert "file name is too long" in await call("db_execute_sql", db_id="bookstore",
                                                     query="SELECT 1", output_file="y" * 300)
        ws = tmp_path / "ws"
        ws.mkdir(exist_ok=True)
        (ws / "bin.csv").write_bytes(b"\xff\xfe\x00\x01" * 1000)
        assert "not UTF-8 text" in await call("csv_head", csv_file="bin.csv")
        assert "integer range" in await call("db_get_row_by_id", db_id="bookstore",
                                             table="books", row_id=10**40)
        monkeypatch.setattr("nl2sql.schema.formatting.format_schema", crash)
        with caplog.at_level(logging.ERROR):
            text = await call("db_show_schema", db_id="bookstore")
        assert "internal error, see the log" in text and "secret" not in text
        assert "secret internals" in caplog.text  # the details are in the log only


def test_a_non_json_line_on_stdio_gets_a_parse_error(tmp_path) -> None:
    env = {**os.environ, "NL2SQL_WORKSPACE": str(tmp_path / "ws"),
           "NL2SQL_DATA_DIR": str(tmp_path / "data")}
    requests = ["this is not json", '{"jsonrpc": "2.0"}',
                json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}})]
    done = subprocess.run([str(NL2SQL_MCP)], input="\n".join(requests) + "\n", text=True,
                          capture_output=True, timeout=60, env=env, cwd=tmp_path)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0]["error"]["code"] == -32700 and answers[0]["id"] is None
    assert answers[1]["error"]["code"] == -32600
    assert answers[2]["id"] == 1 and "result" in answers[2]  # the server still works


def test_agent_tool_turns_a_crash_into_one_sentence(tmp_path, monkeypatch, caplog) -> None:
    import anyio

    from nl2sql.agents.tools import run_operation
    from nl2sql.errors import InternalError
    from nl2sql.operations.registry import operation

    context = OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    save_db_info(DbSchemaExtractor(context.connection("bookstore")).extract("bookstore"),
                 context.data_dir)

    def crash(*_args: object, **_kwargs: object) -> None:
        raise KeyError("internals")

    monkeypatch.setattr("nl2sql.schema.formatting.format_schema", crash)
    with caplog.at_level(logging.ERROR), pytest.raises(InternalError) as raised:
        anyio.run(run_operation, operation("db_show_schema"), context, {"db_id": "bookstore"})
    assert str(raised.value).startswith("internal error, see the log")
    assert "internals" not in str(raised.value) and "internals" in caplog.text


# -- 11: a metadata file that is a symlink out of the workspace -----------------------------

def test_a_metadata_symlink_out_of_the_workspace_is_not_followed(ctx, tmp_path) -> None:
    db_execute_sql_op(ctx, "f", "SELECT id FROM t WHERE id <= 3", output_file="r.csv")
    outside = tmp_path / "outside.metadata.json"
    meta = ctx.workspace / "r.metadata.json"
    shutil.copyfile(meta, outside)
    outside.write_text(outside.read_text().replace('"row_count": 3', '"row_count": 999'))
    meta.unlink()
    meta.symlink_to(outside)
    assert read_metadata_for_csv(ctx.workspace / "r.csv", ctx.workspace) is None
    assert csv_head_op(ctx, "r.csv").total_rows is None
    assert saved_query_get_details_op(ctx, "r.csv").metadata is None
