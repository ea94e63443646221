"""A query nobody waits for any more stops at once, on every backend, in every face.

Beyond MCP (``tests/test_cancelled_queries.py``, whose probes and endless query these reuse),
a caller goes away when an asyncio task running ``nl2sql.ask_async`` is cancelled or times out
(``asyncio.wait_for``, anyio's ``move_on_after``), when the user presses Ctrl-C in
``nl2sql-ask``, or when Ctrl-C interrupts a synchronous call in the main thread (a notebook
cell, a CLI command running SQL itself). A scripted model (pydantic-ai ``FunctionModel``, or
the OpenAI-compatible stub for the CLI) has the NL2SQL agent run an endless recursive CTE
through its tool (or as its final answer); within 3 s of the cancel the engine is idle again.
The time limit is 30 s, so only the stop can explain it; the stop is logged.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from agent_scripts import Script, final, tool
from stub_openai import MODEL_STRING, StubOpenAI, tool_call
from test_cancelled_queries import BUSY, ENDLESS, MARK, _jvm_busy, _mysql_busy, _wait_until

import nl2sql
from conftest import (PG_HOST, PG_PORT, PG_USER, SPARK_ENDLESS, build_cache, spark_config,
                      write_dbs_yaml)
from nl2sql.evaluation import EvalSettings, evaluate
from nl2sql.evaluation.inputs import Question
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op

QUERY = f"/* {MARK} */ {ENDLESS}"
STOP_LOGGER = "nl2sql._call_stop"
NL2SQL_ASK = Path(sys.executable).parent / "nl2sql-ask"
#: A command as a person starts it in a terminal's foreground: Ctrl-C reaches it, even when this
#: suite runs as a background job (``make test &``, ``nohup``) whose children inherit SIGINT
#: ignored (and keep it so: docs/python-and-cli.md). ``exec`` keeps the default set here.
IN_THE_FOREGROUND = [sys.executable, "-c", "import os, signal, sys; "
                     "signal.signal(signal.SIGINT, signal.SIG_DFL); "
                     "os.execv(sys.argv[1], sys.argv[1:])"]


@pytest.fixture(autouse=True)
def _ctrl_c_reaches_this_process() -> Any:
    """The tests here press Ctrl-C (SIGINT to this process) as a person at the terminal would;
    a suite started with SIGINT ignored (a background job) keeps it ignored, so Python's
    handler is put back for each test."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def endless_db(request: pytest.FixtureRequest, make_db: Any, make_registry: Any,
               caplog: pytest.LogCaptureFixture) -> tuple[OpsContext, Callable[[], int]]:
    """An ``OpsContext`` over a fresh database of the test's backend (with its cache) and the
    probe saying whether the endless query still runs there; the stops are captured."""
    caplog.set_level(logging.WARNING, logger=STOP_LOGGER)
    backend = request.param
    db = make_db(backend, "cancelme", script="CREATE TABLE t (id INTEGER PRIMARY KEY)")
    registry = make_registry(db.config)
    build_cache(db.config, registry.data_dir)
    ops = OpsContext(registry)
    request.addfinalizer(ops.close)
    _warm_up(ops)
    dbname = db.config.dbname or ""
    return ops, lambda: BUSY[backend](dbname)


def _warm_up(ops: OpsContext) -> None:
    """The driver loaded, the first connection made and the context index built before the
    clock starts: a cancel that comes later finds the endless query running."""
    nl2sql.context("How many numbers are there?", db_id="cancelme", config=ops)
    db_execute_sql_op(ops, "cancelme", "SELECT 1 AS n")


def _ask(ops: OpsContext, script: Script, candidates: int = 1) -> Any:
    return nl2sql.ask_async("How many numbers are there?", db_id="cancelme",
                            model=script.model, config=ops, candidates=candidates, reuse=False)


def _stopped(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if "stopping its query on database 'cancelme'" in record.getMessage()]


@pytest.mark.parametrize("endless_db", list(BUSY), indirect=True)
async def test_a_cancelled_agent_task_stops_its_query(
        endless_db: tuple[OpsContext, Callable[[], int]],
        caplog: pytest.LogCaptureFixture) -> None:
    ops, busy = endless_db
    script = Script([tool("db_execute_sql", query=QUERY)])
    task = asyncio.create_task(_ask(ops, script))
    await _wait_until(lambda: int(bool(script.requests) and busy()), 1, within=10.0)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    ended_in = time.monotonic() - started  # the task ends with its query, not at 30 s
    stopped_in = await _wait_until(busy, 0, within=3.0)
    assert ended_in < 3.0 and stopped_in < 3.0
    assert _stopped(caplog) == [
        "db_execute_sql was cancelled: stopping its query on database 'cancelme'"]


@pytest.mark.parametrize("endless_db", list(BUSY), indirect=True)
async def test_an_agent_run_that_times_out_stops_its_query(
        endless_db: tuple[OpsContext, Callable[[], int]],
        caplog: pytest.LogCaptureFixture) -> None:
    """``asyncio.wait_for``: the final answer's SQL (run by the output validator) is stopped."""
    ops, busy = endless_db
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(_ask(ops, Script([final(QUERY)])), timeout=2.0)
    assert time.monotonic() - started < 5.0
    assert await _wait_until(busy, 0, within=3.0) < 3.0
    assert len(_stopped(caplog)) == 1, caplog.text


@pytest.mark.parametrize("endless_db", ["postgres"], indirect=True)
async def test_concurrent_candidates_stop_every_query(
        endless_db: tuple[OpsContext, Callable[[], int]],
        caplog: pytest.LogCaptureFixture) -> None:
    """Three candidates each run the endless query; anyio's ``move_on_after`` stops all three."""
    ops, busy = endless_db
    script = Script([tool("db_execute_sql", query=QUERY)] * 3)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_ask, ops, script, 3)
        await _wait_until(busy, 3, within=10.0)  # _pg_busy counts the marked queries
        with anyio.move_on_after(0.5):
            await anyio.sleep_forever()
        tasks.cancel_scope.cancel()
    assert await _wait_until(busy, 0, within=3.0) < 3.0
    assert len(_stopped(caplog)) == 3, caplog.text


async def test_a_cancelled_agent_task_stops_its_spark_job(spark_server: Any, make_registry: Any,
                                                          caplog: pytest.LogCaptureFixture
                                                          ) -> None:
    assert spark_server.process is not None
    config = spark_config("cancelme", spark_server.remote, "default")
    registry = make_registry(config)
    build_cache(config, registry.data_dir)
    ops = OpsContext(registry)
    _warm_up(ops)
    caplog.set_level(logging.WARNING, logger=STOP_LOGGER)
    try:
        script = Script([tool("db_execute_sql", query=SPARK_ENDLESS)])
        task = asyncio.create_task(_ask(ops, script))
        await _wait_until(lambda: int(bool(script.requests) and
                                      _jvm_busy(spark_server.process.pid)), 1, within=15.0)
        # Busy from the start is also the planning: a stop landing before the scan's stage is
        # submitted leaves that stage running for good (Spark's gap, docs/security.md).
        await asyncio.sleep(1.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Spark's task kill is cooperative: 3.5-6.5 s to an idle JVM here (the time limit is 30)
        await _wait_until(lambda: _jvm_busy(spark_server.process.pid), 0, within=10.0)
    finally:
        ops.close()
    assert len(_stopped(caplog)) == 1, caplog.text


# -- a synchronous call in the main thread: Ctrl-C ------------------------------------------

@pytest.mark.parametrize("endless_db", list(BUSY), indirect=True)
def test_ctrl_c_in_the_main_thread_stops_a_synchronous_query(
        endless_db: tuple[OpsContext, Callable[[], int]],
        caplog: pytest.LogCaptureFixture) -> None:
    """Without the stop, MySQL ignores Ctrl-C until the time limit, and SQLite and DuckDB turn
    it into a query error (the ``KeyboardInterrupt`` is lost); PostgreSQL's driver cancels."""
    ops, busy = endless_db
    assert threading.current_thread() is threading.main_thread()
    pressed = _ctrl_c_when(lambda: busy() == 1)
    with pytest.raises(KeyboardInterrupt):
        db_execute_sql_op(ops, "cancelme", QUERY)
    assert time.monotonic() - pressed[0] < 3.0
    _wait_sync(lambda: busy() == 0, within=3.0)
    assert _stopped(caplog) == [
        "the interrupted call was cancelled: stopping its query on database 'cancelme'"]


@pytest.mark.parametrize("endless_db", list(BUSY), indirect=True)
def test_interrupting_a_notebook_cell_stops_the_query_of_ask(
        endless_db: tuple[OpsContext, Callable[[], int]],
        caplog: pytest.LogCaptureFixture) -> None:
    """``nl2sql.ask()`` where a loop already runs (a Jupyter cell) runs on a private loop in a
    thread; Ctrl-C in the cell's thread cancels it there."""
    ops, busy = endless_db
    script = Script([tool("db_execute_sql", query=QUERY)])

    async def cell() -> Any:  # blocks its loop, as a cell does
        return nl2sql.ask("How many numbers are there?", db_id="cancelme", model=script.model,
                          config=ops, reuse=False)

    loop = asyncio.new_event_loop()
    pressed = _ctrl_c_when(lambda: len(script.requests) == 1 and busy() == 1)
    try:
        with pytest.raises(KeyboardInterrupt):
            loop.run_until_complete(cell())
    finally:
        loop.close()
    assert time.monotonic() - pressed[0] < 3.0
    _wait_sync(lambda: busy() == 0, within=3.0)
    assert _stopped(caplog) == [
        "db_execute_sql was cancelled: stopping its query on database 'cancelme'"]


@pytest.mark.parametrize("endless_db", ["postgres", "mysql"], indirect=True)
def test_ctrl_c_in_an_evaluation_stops_every_query(
        endless_db: tuple[OpsContext, Callable[[], int]],
        caplog: pytest.LogCaptureFixture) -> None:
    """``nl2sql-eval`` scores in a thread pool: Ctrl-C stops the two gold queries running and
    starts none of the two waiting (the pool would otherwise run them all before exiting)."""
    ops, _ = endless_db
    config = ops.config("cancelme")
    busy = functools.partial(ACTIVE[config.type.value], config.dbname)
    questions = [Question(id=f"q{i}", db_id="cancelme", question="How many?", golds=[QUERY])
                 for i in range(4)]
    pressed = _ctrl_c_when(lambda: busy() == 2)
    with pytest.raises(KeyboardInterrupt):
        evaluate(questions, {q.id: "SELECT 1 AS n" for q in questions}, ops,
                 EvalSettings(concurrency=2, context_recall=False))
    assert time.monotonic() - pressed[0] < 3.0
    _wait_sync(lambda: busy() == 0, within=3.0)
    assert _stopped(caplog) == [
        "scoring was cancelled: stopping its query on database 'cancelme'"] * 2


def _pg_active(dbname: str) -> int:
    """Queries running in ``dbname`` (the scorer's row path shows "FETCH FORWARD 1 FROM
    nl2sql_rows" in pg_stat_activity, not the query and its mark). Only the query itself
    counts: a call still in its transaction's setup or catalogue read is active too, but its
    stop is not registered yet (Ctrl-C then keeps it from starting instead)."""
    with psycopg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres",
                         autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND "
                           "state = 'active' AND pid <> pg_backend_pid() AND "
                           "(query LIKE 'FETCH FORWARD%%' OR query LIKE %s)",
                           (dbname, f"%{MARK}%")).fetchone()
    return int(row[0]) if row else 0


ACTIVE: dict[str, Callable[[str], int]] = {"postgres": _pg_active, "mysql": _mysql_busy}


def _ctrl_c_when(check: Callable[[], bool]) -> list[float]:
    """Ctrl-C (SIGINT to this process) as soon as ``check()``; the list gets the time."""
    pressed: list[float] = []

    def press() -> None:
        _wait_sync(check, within=20.0)
        pressed.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=press, daemon=True).start()
    return pressed


# -- nl2sql-ask: Ctrl-C -----------------------------------------------------------------------

@pytest.mark.parametrize("backend", list(BUSY))
def test_ctrl_c_in_nl2sql_ask_stops_its_query(backend: str, make_db: Any, tmp_path: Path,
                                              stub_openai: StubOpenAI) -> None:
    db = make_db(backend, "cancelme", script="CREATE TABLE t (id INTEGER PRIMARY KEY)")
    config = write_dbs_yaml(tmp_path, [db.config])
    ops = OpsContext.load(config)  # the cache and the context index, built beforehand
    try:
        build_cache(db.config, ops.data_dir)
        nl2sql.context("How many numbers are there?", db_id="cancelme", config=ops)
    finally:
        ops.close()
    stub_openai.add(tool_call("db_execute_sql", query=QUERY))
    env = {**os.environ, "NL2SQL_CONFIG": str(config), "NL2SQL_WORKSPACE": str(tmp_path / "ws")}
    child = subprocess.Popen([*IN_THE_FOREGROUND, str(NL2SQL_ASK), "How many numbers are there?",
                              "--db", "cancelme", "--model", MODEL_STRING, "--no-reuse"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dbname = db.config.dbname or ""
    # In-process engines: the child's CPU, busy over two windows in a row (a single window
    # could still be the child handling the model's answer before the query starts).
    busy = (lambda: BUSY[backend](dbname)) if backend in ("postgres", "mysql") \
        else (lambda: _jvm_busy(child.pid) and _jvm_busy(child.pid))
    try:
        _wait_sync(lambda: len(stub_openai.requests) == 1 and busy() == 1, within=30.0)
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=10)
        ended_in = time.monotonic() - started
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 130, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err == "interrupted; stopped the running query on database 'cancelme'\n", err
    assert out == "" and ended_in < 3.0
    if backend in ("postgres", "mysql"):  # the server, not only the client, is idle
        _wait_sync(lambda: busy() == 0, within=3.0)


def _wait_sync(check: Callable[[], bool], within: float) -> None:
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < within, f"not reached within {within} s"
        time.sleep(0.1)
