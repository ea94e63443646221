"""``nl2sql-mcp --transport http`` as a real subprocess, probed with a real HTTP client: the URL
on stderr at start, the bearer token on every request, the DNS-rebinding protection, and the
refusal of a non-loopback --host without a token."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import stop_process

NL2SQL_MCP = Path(sys.executable).parent / "nl2sql-mcp"
TOKEN = "t0ken-for-tests-0123456789"
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "1"}}}).encode()


def _start(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Start the server on a free port; returns it and the URL it printed on stderr."""
    env = {**os.environ, "NL2SQL_WORKSPACE": str(tmp_path / "ws"),
           "NL2SQL_DATA_DIR": str(tmp_path / "data")}
    process = subprocess.Popen([str(NL2SQL_MCP), "--transport", "http", "--port", "0", *args],
                               env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stderr],  # type: ignore[union-attr]
                     daemon=True).start()
    try:
        while True:
            line = lines.get(timeout=30)
            if "MCP over streamable HTTP at " in line:
                return process, line.split(" at ", 1)[1].split()[0]
    except queue.Empty:
        process.kill()
        raise AssertionError("the server printed no URL within 30 s") from None


@pytest.fixture
def token_server(tmp_path: Path) -> Iterator[str]:
    process, url = _start(tmp_path, "--auth-token", TOKEN)
    try:
        yield url
    finally:
        stop_process(process)


def _post(url: str, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, data=INITIALIZE, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_bearer_token_is_checked_on_every_request(token_server: str) -> None:
    url = token_server
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    assert _post(url, {}) == 401
    assert _post(url, {"Authorization": "Bearer wrong-token-0123456789"}) == 401
    assert _post(url, {"Authorization": TOKEN}) == 401  # the scheme is part of it
    assert _post(url, {"Authorization": f"Bearer {TOKEN}"}) == 200
    # DNS rebinding: a page on another name pointing at this address is refused by Host.
    assert _post(url, {"Authorization": f"Bearer {TOKEN}", "Host": "evil.example:80"}) in (
        403, 421)


def test_loopback_without_token_prints_its_url_and_answers(tmp_path: Path) -> None:
    process, url = _start(tmp_path)
    try:
        assert _post(url, {}) == 200
    finally:
        stop_process(process)


@pytest.mark.parametrize(("args", "expected"), [
    (["--host", "192.0.2.10"], "pass --auth-token"),
    (["--host", "0.0.0.0", "--auth-token", TOKEN], "--allowed-host"),
    (["--auth-token", "short"], "shorter than 16 characters"),
])
def test_unsafe_http_settings_are_refused(tmp_path: Path, args: list[str], expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NL2SQL_MCP_AUTH_TOKEN"}
    done = subprocess.run([str(NL2SQL_MCP), "--transport", "http", "--port", "0", *args],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0]


def test_a_busy_port_is_one_sentence_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([str(NL2SQL_MCP), "--transport", "http", "--port", str(port)],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path,
                              stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: Port {port} on 127.0.0.1 is already in use; choose another with --port N (or "
        f"--port 0 for any free port)."]


def test_the_bearer_scheme_name_is_case_insensitive(token_server: str) -> None:
    for scheme in ("bearer", "BEARER", "bEaReR"):
        assert _post(token_server, {"Authorization": f"{scheme} {TOKEN}"}) == 200, scheme
    assert _post(token_server, {"Authorization": "bearer wrong-token-0123456789"}) == 401
    assert _post(token_server, {"Authorization": f"Basic {TOKEN}"}) == 401


def test_the_host_and_origin_headers_must_match_exactly(token_server: str) -> None:
    """The SDK's ``127.0.0.1:*`` pattern matched by prefix; these all passed it."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    netloc = token_server.split("/")[2]  # 127.0.0.1:PORT
    for host in (f"{netloc}@evil.example", f"{netloc}.evil.example", f"{netloc}/x",
                 f"{netloc}:80", "127.0.0.1.evil.example", f"{netloc} evil.example"):
        assert _post(token_server, {**auth, "Host": host}) == 421, host
    for origin in (f"http://{netloc}.evil.example", f"http://{netloc}@evil.example",
                   "http://evil.example", f"ftp://{netloc}"):
        assert _post(token_server, {**auth, "Origin": origin}) == 403, origin
    assert _post(token_server, {**auth, "Host": netloc, "Origin": f"http://{netloc}"}) == 200
    assert _post(token_server, {**auth, "Host": netloc.replace("127.0.0.1", "localhost")}) == 200


def test_another_loopback_address_with_a_token_answers(tmp_path: Path) -> None:
    """``--host 127.0.0.2`` used to answer 421 to every request (its name was not allowed)."""
    process, url = _start(tmp_path, "--host", "127.0.0.2", "--auth-token", TOKEN)
    try:
        assert url.startswith("http://127.0.0.2:")
        assert _post(url, {"Authorization": f"Bearer {TOKEN}"}) == 200
        assert _post(url, {}) == 401
    finally:
        stop_process(process)
