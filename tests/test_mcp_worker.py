"""The MCP tools' worker threads (``nl2sql._worker``): results, errors, overlap, cancel."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from nl2sql.mcp import build_server, tools
from nl2sql._worker import WorkerPool, run_in_worker

REQUEST = contextvars.ContextVar("REQUEST", default="none")


async def test_result_exception_and_context_come_back() -> None:
    REQUEST.set("call 7")
    assert await run_in_worker(lambda a, b: (a + b, REQUEST.get()), 2, 3) == (5, "call 7")
    assert await run_in_worker(threading.current_thread) is not threading.current_thread()

    def fail() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await run_in_worker(fail)


async def test_concurrent_calls_run_at_the_same_time() -> None:
    """Each call waits at a barrier for the others: it passes only if all run at once."""
    calls = 6
    barrier = threading.Barrier(calls, timeout=10)
    results: list[int] = []

    async def one(i: int) -> None:
        results.append(await run_in_worker(lambda: (barrier.wait(), i)[1]))

    async with anyio.create_task_group() as group:
        for i in range(calls):
            group.start_soon(one, i)
    assert sorted(results) == list(range(calls))


async def test_a_cancelled_call_returns_only_after_its_thread_finished() -> None:
    finished = threading.Event()
    returned: list[str] = []

    def slow() -> str:
        time.sleep(0.3)
        finished.set()
        return "done"

    with anyio.move_on_after(0.05) as scope:
        returned.append(await run_in_worker(slow))
    # As with anyio.to_thread.run_sync, the cancel waits for the thread (no half-done operation
    # left behind); then the cancellation goes on and the result is dropped (nobody waits).
    assert finished.is_set() and scope.cancelled_caught and returned == []


async def test_a_plain_asyncio_cancel_waits_for_the_thread_too() -> None:
    finished = threading.Event()

    def slow() -> None:
        time.sleep(0.3)
        finished.set()

    with pytest.raises(TimeoutError):
        await asyncio.wait_for(run_in_worker(slow), timeout=0.05)
    assert finished.is_set()


def test_a_cancel_that_crosses_the_threads_answer_does_not_hang() -> None:
    """The thread's answer is queued on the loop before the cancel, and handled after it (the
    cancelled future drops it): the cancelled call must still end, not wait for it again. (On
    a loop of its own in a daemon thread, so that a hang fails the test, not the session.)"""
    running, release = threading.Event(), threading.Event()
    ended: list[str] = []

    def quick() -> str:
        running.set()
        release.wait(5)
        return "done"

    async def scenario() -> None:
        task = asyncio.create_task(run_in_worker(quick))
        while not running.is_set():
            await asyncio.sleep(0.01)
        release.set()
        time.sleep(0.2)  # the loop blocked: the thread's answer is queued, not handled yet
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            ended.append("cancelled")

    thread = threading.Thread(target=asyncio.run, args=(scenario(),), daemon=True)
    thread.start()
    thread.join(10)
    assert ended == ["cancelled"]


def test_idle_workers_exit_and_busy_ones_are_replaced() -> None:
    pool = WorkerPool(max_workers=3, idle_seconds=0.05)
    release = threading.Event()
    started = threading.Semaphore(0)

    def job() -> None:
        started.release()
        release.wait(10)

    for _ in range(5):  # more jobs than workers: two wait for a free worker
        pool.submit(job)
    for _ in range(3):
        assert started.acquire(timeout=10)
    assert pool.threads == 3
    assert not started.acquire(timeout=0.1)  # the limit holds
    release.set()
    for _ in range(2):
        assert started.acquire(timeout=10)
    deadline = time.monotonic() + 10
    while pool.threads and time.monotonic() < deadline:
        time.sleep(0.02)
    assert pool.threads == 0


async def test_mcp_tool_calls_overlap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three db_list calls through the MCP client, each held at a barrier in its worker
    thread until all three are running: they answer only if the server runs them at once."""
    barrier = threading.Barrier(3, timeout=10)
    original = tools._run

    def held(*args: object) -> str:
        barrier.wait()
        return original(*args)

    monkeypatch.setattr(tools, "_run", held)
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    answers: list[bool] = []
    async with Client(server) as client:

        async def call() -> None:
            answers.append((await client.call_tool("db_list", {})).is_error)

        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(call)
    assert answers == [False, False, False]
