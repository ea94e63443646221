"""The stdio transport's ends (``nl2sql/mcp/stdio.py``): lines read as the SDK reads them,
answers written whole and in order, and a client that writes before it reads never blocks it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest

from nl2sql.mcp.stdio import LineReader, LineWriter

NL2SQL_MCP = Path(sys.executable).parent / "nl2sql-mcp"
LONG = "x" * 200_000  # several reads of the reader
CHUNKS = [b'{"a": 1}\n{"b"', ': "x\u2028y"}\n'.encode(), LONG.encode() + b"\n", b"\xff\n",
          b"the last line, unterminated"]
LINES = ['{"a": 1}\n', '{"b": "x\u2028y"}\n', LONG + "\n", "\ufffd\n",
         "the last line, unterminated"]


async def _read_lines(fd: int) -> tuple[list[str], bool]:
    reader = LineReader(fd)
    try:
        return [line async for line in reader], reader.watched
    finally:
        reader.close()


def _write_slowly(fd: int, chunks: list[bytes]) -> None:
    for chunk in chunks:  # each chunk arrives on its own
        os.write(fd, chunk)
        time.sleep(0.02)
    os.close(fd)


async def test_lines_from_a_pipe_are_whole_and_split_only_at_newlines() -> None:
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=_write_slowly, args=(write_end, CHUNKS))
    writer.start()
    try:
        lines, watched = await _read_lines(read_end)
    finally:
        writer.join()
        os.close(read_end)
    assert watched  # the event loop reads the pipe: no thread in between
    assert lines == LINES


async def test_lines_from_a_regular_file_are_read_by_a_thread(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    path.write_bytes(b"".join(CHUNKS))
    fd = os.open(path, os.O_RDONLY)
    try:
        lines, watched = await _read_lines(fd)
    finally:
        os.close(fd)
    assert not watched  # epoll cannot watch a regular file
    assert lines == LINES


async def test_answers_are_handed_over_without_waiting_and_written_in_order() -> None:
    read_end, write_end = os.pipe()
    writer = LineWriter(write_end)
    answers = [f'{{"id": {i}, "text": "{"y" * (i % 7) * 1000}"}}\n' for i in range(300)]
    with anyio.fail_after(10):  # ~1 MB, far more than the pipe holds, and nobody reads yet
        for answer in answers:
            await writer.write(answer)
        await writer.flush()
    received = bytearray()
    while len(received) < sum(len(a) for a in answers):
        received += os.read(read_end, 1 << 16)
    assert received.decode() == "".join(answers)
    os.close(read_end)  # the client went away: a later write says so
    with pytest.raises(BrokenPipeError), anyio.fail_after(10):
        while True:
            await writer.write("lost\n")
            await anyio.sleep(0.01)
    writer.drain(10)
    os.close(write_end)


async def test_an_answer_to_an_emptied_pipe_is_written_without_the_thread() -> None:
    """A client that reads each answer before its next request (an empty pipe): the answer is
    in the pipe when ``write`` returns, no hand-off to the writer thread on its latency."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    writer = LineWriter(write_end)
    try:
        for i in range(20):
            answer = f'{{"id": {i}, "rows": "{"x" * 3000}"}}\n'
            await writer.write(answer)
            assert os.read(read_end, 1 << 16).decode() == answer  # BlockingIOError: not yet
    finally:
        writer.drain(10)
        os.close(read_end)
        os.close(write_end)


def test_a_client_that_writes_every_request_before_reading_gets_every_answer(
        tmp_path: Path) -> None:
    """Answers enough to fill their pipe, then 400 KB more requests (more than a pipe holds),
    all sent before any answer is read: the server keeps reading while its answers wait."""
    env = {**os.environ, "NL2SQL_WORKSPACE": str(tmp_path / "ws"),
           "NL2SQL_DATA_DIR": str(tmp_path / "data")}
    calls = 200
    requests = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    requests += [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
        "name": "db_execute_sql", "arguments": {
            "db_id": "bookstore", "query": f"SELECT * FROM books WHERE book_id > {i}",
            "nl_query": "n" * 2000}}} for i in range(1, calls + 1)]
    lines = [json.dumps(r).encode() + b"\n" for r in requests]
    first, rest = b"".join(lines[:62]), b"".join(lines[62:])
    assert len(rest) > 250_000
    server = subprocess.Popen([str(NL2SQL_MCP)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env=env, cwd=tmp_path)
    assert server.stdin is not None and server.stdout is not None

    def send() -> None:
        server.stdin.write(first)  # type: ignore[union-attr]
        server.stdin.flush()  # type: ignore[union-attr]
        time.sleep(3)  # their answers (90 KB) fill the pipe to the client, who reads nothing
        server.stdin.write(rest)  # type: ignore[union-attr]
        server.stdin.flush()  # type: ignore[union-attr]

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    sender.join(timeout=60)
    results: dict[int, dict[str, object]] = {}
    try:
        assert not sender.is_alive(), "the server stopped reading while its answers waited"
        for line in server.stdout:  # the end of stdin would cancel the calls still running
            answer = json.loads(line)
            if answer.get("id"):
                results[answer["id"]] = answer["result"]
            if len(results) == calls:
                break
    finally:
        server.kill()
        server.wait()
    assert sorted(results) == list(range(1, calls + 1))
    assert not any(result.get("isError") for result in results.values())
    assert all(" columns saved to " in result["content"][0]["text"] for result in results.values())
