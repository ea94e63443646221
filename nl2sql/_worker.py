"""Run a blocking operation in a worker thread, with a cheaper hand-off than anyio's.

Every MCP tool call and every blocking step of the agents runs in a thread (database and file
work must not block the event loop, so concurrent calls overlap): one way to hand work to a
thread. ``anyio.to_thread.run_sync`` costs 55-200 us per call
on this project's 2-core machine (a quarter of a point query's MCP overhead): each call
acquires a capacity limiter, enters cancel scopes, and wakes its worker through a
``queue.Queue`` (a ``Condition`` built of several Python-level locks). Here the workers are
persistent threads blocked on a ``queue.SimpleQueue`` (implemented in C: one futex wake), and
the result comes back with one ``loop.call_soon_threadsafe``: 35-45 us per call under load,
87-140 us on an idle machine, whose sleeping virtual CPUs are slow to wake
(``bench/worker_handoff.py``; ``bench/README.md``, "Point query through MCP").

Semantics kept from ``anyio.to_thread.run_sync``:
- calls overlap: a new thread starts whenever every worker is busy, up to ``MAX_WORKERS``
  (anyio's default limit, 40); beyond that calls wait for a free worker;
- a cancelled call still waits for its thread to finish (the await is shielded), so a
  cancelled ``db_execute_sql`` never returns while its files are still being written;
- the function runs in a copy of the caller's ``contextvars`` context;
- idle workers exit after ``IDLE_SECONDS``; all are daemon threads.
Outside asyncio (anyio on trio) it falls back to ``anyio.to_thread.run_sync``.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

T = TypeVar("T")

#: Threads at most (anyio's default capacity limiter has the same number of tokens).
MAX_WORKERS = 40
#: A worker that gets no job for this long exits (anyio retires idle workers after 10 s too).
IDLE_SECONDS = 10.0


class WorkerPool:
    """Persistent daemon worker threads fed through one ``SimpleQueue``."""

    def __init__(self, max_workers: int = MAX_WORKERS, idle_seconds: float = IDLE_SECONDS,
                 name: str = "nl2sql-worker") -> None:
        self.max_workers = max_workers
        self.idle_seconds = idle_seconds
        self.name = name
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0  # alive
        self._waiting = 0  # blocked in get(), free for a job
        self._pending = 0  # put and not taken yet

    @property
    def threads(self) -> int:
        return self._threads

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job()`` (which must not raise) in a worker thread."""
        with self._lock:
            self._pending += 1
            spawn = self._pending > self._waiting and self._threads < self.max_workers
            if spawn:
                self._threads += 1
        self._jobs.put(job)
        if spawn:
            try:
                threading.Thread(target=self._work, name=f"{self.name}-{self._threads}",
                                 daemon=True).start()
            except BaseException:
                with self._lock:
                    self._threads -= 1
                raise

    def _work(self) -> None:
        jobs, lock = self._jobs, self._lock
        while True:
            with lock:
                self._waiting += 1
            try:
                job = jobs.get(timeout=self.idle_seconds)
            except queue.Empty:
                with lock:
                    self._waiting -= 1
                    if self._pending <= self._waiting:  # no job put that needs this thread
                        self._threads -= 1
                        return
                continue
            with lock:
                self._waiting -= 1
                self._pending -= 1
            job()


_POOL = WorkerPool()


async def run_in_worker(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` in a worker thread; its result or its exception."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio): anyio's own hand-off
        return await anyio.to_thread.run_sync(function, *args)
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def job() -> None:
        try:
            outcome = (True, context.run(function, *args))
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting call
            outcome = (False, exc)
        try:
            loop.call_soon_threadsafe(_settle, future, outcome)
        except RuntimeError:  # the loop closed meanwhile: nobody waits for the answer
            pass

    _POOL.submit(job)
    with anyio.CancelScope(shield=True):  # like anyio.to_thread.run_sync: finish, then cancel
        return await future


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():  # cancelled by a plain asyncio cancel (not an anyio scope)
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
