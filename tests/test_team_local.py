"""Users and the local faces: ``nl2sql-secrets add-user/list-users/remove-user`` (the token shown
once, only its hash kept), a user's token over HTTP, and the local faces (Python, the CLI, MCP
over stdio) acting as the OS account: full access, unless that account's name is a configured
user, whose groups then apply. The audit log records each face's calls, and a failing audit
write never fails the call."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import SAMPLE_DATA, build_cache
from mcp import Client
from team_servers import call, start_server, status, stop_server

import nl2sql
from nl2sql.access.caller import os_user_name
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.mcp import build_server

BIN = Path(sys.executable).parent


def secrets(config: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "nl2sql-secrets"), *args, "--config", str(config)],
                          capture_output=True, text=True, timeout=60, check=check)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    shutil.copyfile(SAMPLE_DATA / "chinook" / "chinook.sqlite", tmp_path / "chinook.sqlite")
    path = tmp_path / "dbs.yaml"
    path.write_text(yaml.safe_dump({
        "databases": {"chinook": {"type": "sqlite", "path": "chinook.sqlite"}},
        "server": {"groups": {"analysts": {"databases": ["chinook"]},
                              "curators": {"databases": ["*"], "curator": True}}}}))
    registry = DbConnectionConfigs.load(path)
    for one in registry:
        build_cache(one, registry.data_dir)
    return path


def test_users_are_added_listed_and_removed_and_only_the_hash_is_kept(config: Path,
                                                                      tmp_path: Path) -> None:
    added = secrets(config, "add-user", "ana", "--group", "analysts")
    token = added.stdout.strip().splitlines()[-1]
    assert token.startswith("nl2sql_") and len(token) > 40
    users_file = tmp_path / "data" / "users.sqlite"
    assert token.encode() not in users_file.read_bytes()
    with sqlite3.connect(users_file) as db:
        assert db.execute("SELECT name FROM users").fetchall() == [("ana",)]
    db.close()
    listed = secrets(config, "list-users").stdout
    assert "ana" in listed and "analysts" in listed and token not in listed

    again = secrets(config, "add-user", "ana", "--group", "analysts", check=False)
    assert again.returncode == 2 and "already exists" in again.stderr
    unknown = secrets(config, "add-user", "bob", "--group", "analyst", check=False)
    assert unknown.returncode == 2 and "No group 'analyst'" in unknown.stderr \
        and "known groups: analysts, curators" in unknown.stderr

    process, url = start_server(config, tmp_path / "ws")
    try:
        assert status(url, token) == 200
        assert status(url, token[:-1] + ("A" if token[-1] != "A" else "B")) == 401
        secrets(config, "remove-user", "ana")
        assert status(url, token) == 401  # removed: the next request is refused
    finally:
        stop_server(process)
    missing = secrets(config, "remove-user", "ana", check=False)
    assert missing.returncode == 2 and "No user 'ana'" in missing.stderr


async def test_local_faces_act_as_the_os_account(config: Path, tmp_path: Path) -> None:
    question = "How many tracks are there?"
    # Not a configured user: full access (chinook and the bundled bookstore).
    assert {c.db_id for c in nl2sql.context(question, config=config).candidates} == \
        {"chinook", "bookstore"}
    secrets(config, "add-user", os_user_name(), "--group", "analysts")
    assert [c.db_id for c in nl2sql.context(question, config=config).candidates] == ["chinook"]
    with pytest.raises(nl2sql.errors.AccessDeniedError):
        nl2sql.context(question, db_id="bookstore", config=config)
    shown = subprocess.run([str(BIN / "nl2sql-ask"), question, "--show-context", "--json",
                            "--config", str(config)], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert [c["db_id"] for c in json.loads(shown.stdout)["candidates"]] == ["chinook"]
    server = build_server(config, workspace=tmp_path / "ws")  # stdio
    async with Client(server) as client:
        listed = (await client.call_tool("db_list", {})).content[0].text
        assert "chinook" in listed and "bookstore" not in listed


async def test_a_failing_audit_write_never_fails_the_call(config: Path, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "data" / "audit.sqlite").mkdir(parents=True)  # the store cannot write there
    server = build_server(config, workspace=tmp_path / "ws")
    async with Client(server) as client:
        result = await client.call_tool("db_execute_sql", {"db_id": "chinook",
                                                           "query": "SELECT 1 AS one"})
    assert not result.is_error and "1 row x 1 column" in result.content[0].text
    from nl2sql.access.audit import flush_all

    assert flush_all(timeout=30)
    assert "audit: a record of db_execute_sql by" in caplog.text


async def test_http_calls_are_recorded_and_read_back(config: Path, tmp_path: Path) -> None:
    token = secrets(config, "add-user", "ana", "--group", "analysts").stdout.split()[-1]
    process, url = start_server(config, tmp_path / "ws")
    try:
        await call(url, token, "db_execute_sql", db_id="chinook", query="SELECT 42 AS n")
        await call(url, token, "db_execute_sql", db_id="bookstore", query="SELECT 1")
        await call(url, token, "db_execute_sql", db_id="chinook", query="DELETE FROM Track")
    finally:
        stop_server(process)
    done = subprocess.run([str(BIN / "nl2sql-audit"), "--config", str(config), "--json",
                           "--user", "ana"], capture_output=True, text=True, timeout=60, check=True)
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["tool"], r["db_id"], r["sql"], r["outcome"]) for r in records] == [
        ("db_execute_sql", "chinook", "SELECT 42 AS n", "ok"),
        ("db_execute_sql", "bookstore", "SELECT 1", "refused"),
        ("db_execute_sql", "chinook", "DELETE FROM Track", "refused")]
    assert records[0]["row_count"] == 1 and records[0]["face"] == "mcp-http"
    plain = subprocess.run([str(BIN / "nl2sql-audit"), "--config", str(config), "--db", "nope"],
                           capture_output=True, text=True, timeout=60)
    assert plain.returncode == 2 and "Unknown database 'nope'" in plain.stderr
    since = subprocess.run([str(BIN / "nl2sql-audit"), "--config", str(config), "--since",
                            "2999-01-01"], capture_output=True, text=True, timeout=60)
    assert since.returncode == 0 and since.stdout == "" and "No audit records" in since.stderr


async def test_spans_are_exported_when_otel_is_configured(config: Path, tmp_path: Path) -> None:
    token = secrets(config, "add-user", "ana", "--group", "analysts").stdout.split()[-1]
    process, url = start_server(config, tmp_path / "ws",
                                env={"OTEL_TRACES_EXPORTER": "console",
                                     "OTEL_SERVICE_NAME": "nl2sql-test"})
    try:
        await call(url, token, "db_execute_sql", db_id="chinook", query="SELECT 7 AS n")
    finally:
        log = stop_server(process)
    assert '"name": "nl2sql.tool db_execute_sql"' in log and '"name": "nl2sql.query"' in log
    assert '"nl2sql.user": "ana"' in log and '"db.query.text": "SELECT 7 AS n"' in log
    assert '"service.name": "nl2sql-test"' in log



def test_without_a_tracer_provider_a_span_is_nothing() -> None:
    """No OTel SDK configured (this test process): a call's spans switch no context and build
    no span (they were the API's no-op spans, ~7 us each, on every call)."""
    from opentelemetry import context, trace

    from nl2sql._tracing import span, tracing_enabled

    assert not tracing_enabled()
    before = context.get_current()
    with span("nl2sql.tool x", nl2sql__user="me", db__namespace=None) as current:
        assert current is trace.INVALID_SPAN and context.get_current() is before
        current.set_attribute("nl2sql.outcome", "ok")  # what ``recorded`` does: harmless

async def test_the_audit_log_prints_a_models_sql_without_terminal_escapes(
        config: Path, tmp_path: Path) -> None:
    """An outside probe: the SQL a model sends is recorded as written (refused or not), and
    ``nl2sql-audit`` printed it to the administrator's terminal: escapes in a string or a
    comment cleared the screen or rewrote earlier lines. Printed without control or format
    characters, one line per record; --json keeps the SQL as it was sent."""
    escapes = "\x1b[2J\x1b[1A\x1b]0;title\x07\u202e"
    server = build_server(config, workspace=tmp_path / "ws")
    async with Client(server) as client:
        for sql in (f"SELECT '{escapes}' AS x", f"SELECT 1 AS x -- {escapes}\n",
                    f"DELETE FROM Track /* {escapes} */"):
            await client.call_tool("db_execute_sql", {"db_id": "chinook", "query": sql})
    from nl2sql.access.audit import flush_all

    assert flush_all(timeout=30)
    plain = subprocess.run([str(BIN / "nl2sql-audit"), "--config", str(config)],
                           capture_output=True, text=True, timeout=60, check=True)
    lines = plain.stdout.splitlines()
    assert len(lines) == 3 and not any(c in plain.stdout for c in "\x1b\x07\u202e"), \
        plain.stdout
    dumped = subprocess.run([str(BIN / "nl2sql-audit"), "--config", str(config), "--json"],
                            capture_output=True, text=True, timeout=60, check=True)
    assert escapes in json.loads(dumped.stdout.splitlines()[0])["sql"]
