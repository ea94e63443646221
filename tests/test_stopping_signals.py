"""SIGTERM (a supervisor, ``timeout``, ``kill``) and SIGHUP (a closed terminal) stop a command as
Ctrl-C does: its PostgreSQL query is stopped on the server (``pg_stat_activity`` idle within
seconds, the time limit being 30 s), and it exits ``128 + signal`` with one line, in
``nl2sql-ask``, ``nl2sql-eval``, ``annotate-schema`` and ``nl2sql-mcp`` (stdio).

Every command here starts with SIGINT ignored, as a background job of a non-interactive shell
does (``make test &``, ``nohup``): it keeps ignoring Ctrl-C (POSIX's rule for background jobs,
docs/python-and-cli.md), and SIGTERM still stops it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from stub_openai import MODEL_STRING, StubOpenAI, tool_call
from test_cancelled_queries import ENDLESS, MARK

import nl2sql
from conftest import (MY_HOST, MY_PORT, MY_USER, PG_HOST, PG_PORT, PG_USER, build_cache,
                      write_dbs_yaml)
from nl2sql.operations.ops_context import OpsContext

BIN = Path(sys.executable).parent
QUERY = f"/* {MARK} */ {ENDLESS}"
#: The command as a background job of a terminal starts it: SIGINT ignored (``exec`` keeps
#: that), SIGTERM and SIGHUP not, whatever this suite inherited (under ``nohup`` SIGHUP is
#: ignored, and a command keeps a signal ignored at start: nl2sql/cli/signals.py).
IGNORING_SIGINT = [sys.executable, "-c", "import os, signal, sys; "
                   "signal.signal(signal.SIGINT, signal.SIG_IGN); "
                   "signal.signal(signal.SIGTERM, signal.SIG_DFL); "
                   "signal.signal(signal.SIGHUP, signal.SIG_DFL); "
                   "os.execv(sys.argv[1], sys.argv[1:])"]


def _pg_running(dbname: str, like: str = "%") -> int:
    """Queries running in ``dbname`` (any client's but this probe's) whose text is ``like``."""
    with psycopg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres",
                         autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND "
                           "state = 'active' AND pid <> pg_backend_pid() AND query LIKE %s",
                           (dbname, like)).fetchone()
    return int(row[0]) if row else 0


def _mysql_running(dbname: str, like: str = "%") -> int:
    """The same in MariaDB/MySQL's process list."""
    import MySQLdb

    conn = MySQLdb.connect(host=MY_HOST, port=MY_PORT, user=MY_USER)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM information_schema.PROCESSLIST WHERE DB = %s "
                           "AND COMMAND = 'Query' AND INFO LIKE %s AND ID <> CONNECTION_ID()",
                           (dbname, like))
            return int(cursor.fetchone()[0])
    finally:
        conn.close()


RUNNING = {"postgres": _pg_running, "mysql": _mysql_running}


def _endless_running(dbname: str, backend: str = "postgres") -> bool:
    """The endless query itself runs (not a call's setup): marked, reading the view, or read
    through the scorer's cursor (``pg_stat_activity`` then shows its FETCH)."""
    return any(RUNNING[backend](dbname, like)
               for like in (f"%{MARK}%", "%endless%", "FETCH FORWARD%"))


def _wait(check: Callable[[], bool], within: float) -> float:
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < within, f"not reached within {within} s"
        time.sleep(0.1)
    return time.monotonic() - started


@pytest.fixture
def endless_pg(make_db: Any, tmp_path: Path) -> tuple[Path, str]:
    return _endless(make_db, tmp_path, "postgres")


def _endless(make_db: Any, tmp_path: Path, backend: str) -> tuple[Path, str]:
    """A database with a view whose reading never ends, its dbs.yaml (the bundled sample left
    out) and its cache and context index, built beforehand."""
    db = make_db(backend, "cancelme", script=f"CREATE TABLE t (id INTEGER PRIMARY KEY); "
                                             f"CREATE VIEW endless AS {ENDLESS}")
    config = write_dbs_yaml(tmp_path, [db.config], include_sample=False)
    ops = OpsContext.load(config)
    try:
        build_cache(db.config, ops.data_dir)
        nl2sql.context("How many numbers are there?", db_id="cancelme", config=ops)
    finally:
        ops.close()
    return config, db.config.dbname or ""


def _stop(argv: list[str], dbname: str, signum: int, env: dict[str, str],
          stdin: str | None = None, ready: Callable[[], bool] = lambda: True,
          backend: str = "postgres") -> tuple[int, str, str, float]:
    """Run ``argv`` (SIGINT ignored), send ``signum`` once its query runs; (exit code, stdout,
    stderr, seconds from the signal until the server ran nothing more: the time limit is
    30 s). The process must have exited within 10 s (its interpreter's shutdown included)."""
    child = subprocess.Popen([*IGNORING_SIGINT, *argv], env={**os.environ, **env},
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        if stdin is not None:
            assert child.stdin is not None
            child.stdin.write(stdin)
            child.stdin.flush()
        _wait(lambda: ready() and _endless_running(dbname, backend), within=60.0)
        child.send_signal(signal.SIGINT)  # ignored: a background job's Ctrl-C is not its own
        time.sleep(0.5)
        assert child.poll() is None and _endless_running(dbname, backend)
        sent = time.monotonic()
        child.send_signal(signum)
        try:
            idle = sent + _wait(lambda: RUNNING[backend](dbname) == 0, within=5.0)
        except AssertionError as exc:  # what the command said, for the failure's report
            child.kill()
            raise AssertionError(f"{exc}; the command's stderr: {child.communicate()[1]!r}") \
                from None
        out, err = child.communicate(timeout=10)
        return child.returncode, out, err, idle - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_nl2sql_ask(endless_pg: tuple[Path, str], stub_openai: StubOpenAI, tmp_path: Path,
                    signum: int) -> None:
    config, dbname = endless_pg
    stub_openai.add(tool_call("db_execute_sql", query=QUERY))
    code, out, err, idle_in = _stop(
        [str(BIN / "nl2sql-ask"), "How many numbers are there?", "--db", "cancelme", "--model",
         MODEL_STRING, "--no-reuse"], dbname, signum,
        {"NL2SQL_CONFIG": str(config), "NL2SQL_WORKSPACE": str(tmp_path / "ws")},
        ready=lambda: len(stub_openai.requests) == 1)
    words = "terminated (SIGTERM)" if signum == signal.SIGTERM else "hung up (SIGHUP)"
    assert (code, out) == (128 + signum, "") and idle_in < 5.0, err
    assert err == f"{words}; stopped the running query on database 'cancelme'\n"


def test_nl2sql_eval(endless_pg: tuple[Path, str], tmp_path: Path) -> None:
    config, dbname = endless_pg
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"id": "q1", "db_id": "cancelme", "question": "How many?",
                                     "query": QUERY}) + "\n")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"id": "q1", "sql": "SELECT 1 AS n"}) + "\n")
    code, out, err, idle_in = _stop(
        [str(BIN / "nl2sql-eval"), str(questions), "--predictions", str(predictions),
         "--config", str(config), "--out", str(tmp_path / "eval"), "--no-context"], dbname,
        signal.SIGTERM, {})
    assert code == 143 and idle_in < 5.0, err
    assert err.splitlines()[-1] == ("terminated (SIGTERM); stopped the running query on "
                                    "database 'cancelme'"), err
    assert "Traceback" not in err and not (tmp_path / "eval" / "report.json").exists()


@pytest.mark.parametrize("backend", ["postgres", "mysql"])
def test_annotate_schema(make_db: Any, tmp_path: Path, backend: str) -> None:
    """The view's sample rows never come: the annotation's reading of them is stopped on the
    server (MySQL's driver blocks in C and would see no signal: KILL QUERY does it)."""
    config, dbname = _endless(make_db, tmp_path, backend)
    code, out, err, idle_in = _stop([str(BIN / "annotate-schema"), "cancelme", "--config",
                                  str(config)], dbname, signal.SIGTERM, {}, backend=backend)
    assert code == 143 and idle_in < 5.0, err
    assert err.splitlines()[-1] == ("terminated (SIGTERM); stopped the running query on "
                                    "database 'cancelme'"), err
    assert "Traceback" not in err


def test_nl2sql_mcp_over_stdio(endless_pg: tuple[Path, str], tmp_path: Path) -> None:
    """A client's supervisor stops the server while a tool call runs its query."""
    config, dbname = endless_pg
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "db_execute_sql", "arguments": {"db_id": "cancelme",
                                                            "query": QUERY}}}]
    code, out, err, idle_in = _stop(
        [str(BIN / "nl2sql-mcp"), "--config", str(config), "--workspace", str(tmp_path / "ws")],
        dbname, signal.SIGTERM, {}, stdin="".join(json.dumps(m) + "\n" for m in messages))
    assert code == 143 and idle_in < 5.0, err
    assert err.splitlines()[-1] == ("terminated (SIGTERM); stopped the running query on "
                                    "database 'cancelme'"), err
    assert "Traceback" not in err
    assert [json.loads(line)["id"] for line in out.splitlines()] == [1]  # stdout: JSON-RPC only
