"""``nl2sql-mcp --transport http`` as a real subprocess, probed with a real HTTP client: the URL
on stderr at start, the bearer token on every request, the DNS-rebinding protection, and the
refusal of a non-loopback --host without a token."""

from __future__ import annotations

import http.client
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


@pytest.mark.parametrize(("args", "token", "expected"), [
    (["--host", "192.0.2.10"], None, "pass --auth-token-file"),
    (["--host", "0.0.0.0"], TOKEN, "--allowed-host"),
    ([], "short", "shorter than 16 characters"),
    (["--allowed-host", "nl2sql.example:8000"], None, "is not a host name"),
    (["--allowed-host", "http://nl2sql.example"], None, "is not a host name"),
])
def test_unsafe_http_settings_are_refused(tmp_path: Path, args: list[str], token: str | None,
                                          expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NL2SQL_MCP_AUTH_TOKEN"}
    if token is not None:
        env["NL2SQL_MCP_AUTH_TOKEN"] = token
    done = subprocess.run([str(NL2SQL_MCP), "--transport", "http", "--port", "0", *args],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2
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


def _raw(url: str, headers: list[tuple[str, str]]) -> int:
    """POST initialize with exactly these headers (none added: no Host unless given, repeats
    kept), through http.client."""
    netloc = url.split("/")[2]
    host, port = netloc.rsplit(":", 1)
    connection = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=10)
    try:
        connection.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        for name, value in [("Content-Type", "application/json"),
                            ("Accept", "application/json, text/event-stream"),
                            ("Content-Length", str(len(INITIALIZE))), *headers]:
            connection.putheader(name, value)
        connection.endheaders(INITIALIZE)
        return connection.getresponse().status
    finally:
        connection.close()


@pytest.fixture(scope="module")
def loopback_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process, url = _start(tmp_path_factory.mktemp("loopback"))
    try:
        yield url
    finally:
        stop_process(process)


def test_loopback_names_with_and_without_a_port_are_accepted(loopback_server: str) -> None:
    """``Host: localhost`` (no port) answered 421: the SDK's check wanted ``localhost:*``."""
    port = loopback_server.split("/")[2].rsplit(":", 1)[1]
    for name in ("localhost", "LOCALHOST", "LocalHost", "localhost.", "127.0.0.1", "[::1]",
                 "[0:0:0:0:0:0:0:1]", "[0::1]"):
        for host in (name, f"{name}:{port}"):
            assert _raw(loopback_server, [("Host", host)]) == 200, host
    for origin in ("http://localhost", f"http://LOCALHOST:{port}", f"http://localhost.:{port}",
                   f"https://[::1]:{port}", "http://127.0.0.1", f"HTTP://127.0.0.1:{port}"):
        assert _raw(loopback_server, [("Host", "localhost"), ("Origin", origin)]) == 200, origin


def test_rebinding_hosts_and_origins_are_still_refused(loopback_server: str) -> None:
    port = loopback_server.split("/")[2].rsplit(":", 1)[1]
    netloc = f"127.0.0.1:{port}"
    for host in (f"{netloc}@evil.example", f"{netloc}.evil.example", "localhost.evil.example",
                 "evil.example", f"evil.example:{port}", "localhost..", "localhost.:", ".localhost",
                 f"localhost:{port}:80", "[::1", "::1", "[::1]]", f"[::1]:{port}@evil.example",
                 "localhost:999999", "127.0.0.1.", "127.1", "2130706433", "[::ffff:127.0.0.1]",
                 "xn--localhost", "local%68ost", "localhost evil.example", "local\thost",
                 f"user@localhost:{port}", ""):
        assert _raw(loopback_server, [("Host", host)]) == 421, host
    # no Host, or two (HTTP/1.1 requires exactly one: uvicorn's parser may answer 400 first)
    for hosts in ([], ["localhost", "evil.example"], ["evil.example", "localhost"]):
        assert _raw(loopback_server, [("Host", host) for host in hosts]) in (400, 421), hosts
    for origin in ("http://evil.example", f"http://{netloc}.evil.example", "null",
                   f"http://{netloc}@evil.example", f"ftp://{netloc}", "http://localhost.evil",
                   "http://", f"http://localhost:{port}/path", "http://[::1"):
        assert _raw(loopback_server, [("Host", "localhost"), ("Origin", origin)]) == 403, origin
    assert _raw(loopback_server, [("Host", "localhost"), ("Origin", "http://localhost"),
                                  ("Origin", "http://evil.example")]) == 403


def test_an_ipv6_loopback_bind_answers_its_names(tmp_path: Path) -> None:
    process, url = _start(tmp_path, "--host", "::1")
    try:
        assert url.startswith("http://[::1]:")
        port = url.split("/")[2].rsplit(":", 1)[1]
        for host in ("[::1]", f"[::1]:{port}", "[0:0:0:0:0:0:0:1]", "localhost"):
            assert _raw(url, [("Host", host)]) == 200, host
        assert _raw(url, [("Host", f"[::2]:{port}")]) == 421
    finally:
        stop_process(process)


def test_an_allowed_host_is_matched_as_the_loopback_names_are(tmp_path: Path) -> None:
    """``--allowed-host`` names (a Docker service name has an underscore) compare in any case
    and with a trailing dot; a name beside them is refused."""
    process, url = _start(tmp_path, "--allowed-host", "NL2SQL_mcp", "--allowed-host",
                          "nl2sql.example.")
    try:
        port = url.split("/")[2].rsplit(":", 1)[1]
        for host in ("nl2sql_mcp", f"nl2sql_MCP:{port}", "nl2sql_mcp.", "NL2SQL.example",
                     f"nl2sql.example.:{port}"):
            assert _raw(url, [("Host", host)]) == 200, host
        for host in ("nl2sql_mcp.evil.example", "evil.nl2sql.example", "nl2sql-mcp"):
            assert _raw(url, [("Host", host)]) == 421, host
    finally:
        stop_process(process)


# -- where the token comes from ---------------------------------------------------------------


def _token_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "token"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_token_from_a_file_is_required_and_never_shown(tmp_path: Path) -> None:
    path = _token_file(tmp_path, TOKEN + "\n")
    process, url = _start(tmp_path, "--host", "127.0.0.2", "--auth-token-file", str(path))
    try:
        assert _post(url, {}) == 401
        assert _post(url, {"Authorization": f"Bearer {TOKEN}"}) == 200
        assert TOKEN not in " ".join(process.args)  # what ps shows
    finally:
        stop_process(process)


def test_a_token_on_the_command_line_works_and_is_warned_about(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NL2SQL_MCP_AUTH_TOKEN"}
    lines = _start_lines(tmp_path, env, "--auth-token", TOKEN)
    warnings = [line for line in lines if "--auth-token" in line]
    assert len(warnings) == 1 and "process list" in warnings[0] and "--auth-token-file" in \
        warnings[0]
    assert TOKEN not in "".join(lines)
    # from the environment: no warning
    lines = _start_lines(tmp_path, {**env, "NL2SQL_MCP_AUTH_TOKEN": TOKEN})
    assert not [line for line in lines if "process list" in line]


def _start_lines(tmp_path: Path, env: dict[str, str], *args: str) -> list[str]:
    """What the server prints on stderr up to its URL line (it is stopped then)."""
    process = subprocess.Popen([str(NL2SQL_MCP), "--transport", "http", "--port", "0", *args],
                               env={**env, "NL2SQL_WORKSPACE": str(tmp_path / "ws"),
                                    "NL2SQL_DATA_DIR": str(tmp_path / "data")},
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    lines = []
    try:
        for line in process.stderr:  # type: ignore[union-attr]
            lines.append(line)
            if "MCP over streamable HTTP at " in line:
                break
    finally:
        stop_process(process)
    return lines


@pytest.mark.parametrize(("text", "mode", "expected"), [
    (TOKEN, 0o644, "readable by group/others (mode 0644); run: chmod 600"),
    ("", 0o600, "must hold the token alone on one line"),
    (f"{TOKEN}\n{TOKEN}\n", 0o600, "must hold the token alone on one line"),
    ("short", 0o600, "shorter than 16 characters"),
    (None, 0o600, "Cannot read the auth token file"),
])
def test_a_bad_token_file_is_one_sentence(tmp_path: Path, text: str | None, mode: int,
                                          expected: str) -> None:
    path = _token_file(tmp_path, text, mode) if text is not None else tmp_path / "missing"
    done = subprocess.run([str(NL2SQL_MCP), "--transport", "http", "--port", "0",
                           "--auth-token-file", str(path)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, stdin=subprocess.DEVNULL)
    lines = done.stderr.strip().splitlines()
    assert done.returncode in (1, 2) and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and expected in lines[0], lines[0]
    assert TOKEN not in done.stderr
