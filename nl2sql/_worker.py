"""Run a blocking operation in a worker thread, stoppably, with a cheaper hand-off than anyio's.

Every MCP tool call and every blocking step of the agents runs in a thread (database and file
work must not block the event loop, so concurrent calls overlap): one way to hand work to a
thread. Each hand-off has a ``CallStop`` of its own (``nl2sql._call_stop``): when the awaiting
task is cancelled while the thread runs (an MCP client cancels, an ``asyncio`` task running
``ask_async`` is cancelled or times out, Ctrl-C in ``nl2sql-ask`` cancels ``asyncio.run``'s
task), the query the thread runs is stopped and logged, the thread's end is awaited, and the
cancellation goes on. ``call_stoppably`` is the same for a synchronous caller in the main
thread, where Ctrl-C arrives as ``KeyboardInterrupt`` (a driver blocked in C would not see it).

``anyio.to_thread.run_sync`` costs 55-200 us per call on this project's 2-core machine (a
quarter of a point query's MCP overhead): each call acquires a capacity limiter, enters cancel
scopes, and wakes its worker through a ``queue.Queue`` (a ``Condition`` built of several
Python-level locks). Here the workers are persistent threads blocked on a ``queue.SimpleQueue``
(implemented in C: one futex wake), and the result comes back with one
``loop.call_soon_threadsafe``: 35-45 us per call under load, 87-140 us on an idle machine,
whose sleeping virtual CPUs are slow to wake (``bench/worker_handoff.py``; ``bench/README.md``,
"Point query through MCP").

Semantics kept from ``anyio.to_thread.run_sync``:
- calls overlap: a new thread starts whenever every worker is busy, up to ``MAX_WORKERS``
  (anyio's default limit, 40); beyond that calls wait for a free worker;
- a cancelled call still waits for its thread to finish (by anyio's scopes or a plain
  ``Task.cancel()``: a second plain cancel does not end the wait early either), so a cancelled
  ``db_execute_sql`` never returns while its files are still being written; then the
  cancellation is raised (the thread's result or error is dropped: nobody waits for it), and a
  thread not started yet when the call is cancelled does not run the function;
- the function runs in a copy of the caller's ``contextvars`` context;
- idle workers exit after ``IDLE_SECONDS``; all are daemon threads.
Outside asyncio (anyio on trio) it falls back to ``anyio.to_thread.run_sync``, whose
cancellation waits for the thread without stopping its query.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from nl2sql._call_stop import CallStop

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
            del job  # not kept while idle: its outcome may hold a driver's objects


_POOL = WorkerPool()


class _Waiter:
    """The awaiting side of one hand-off, touched on the event loop only: the future the
    thread's outcome settles (a new one once a cancel has cancelled it) and whether the outcome
    has come."""

    __slots__ = ("future", "came")

    def __init__(self, future: asyncio.Future[Any]) -> None:
        self.future = future
        self.came = False


async def run_in_worker(function: Callable[..., T], *args: Any, name: str | None = None) -> T:
    """``function(*args)`` in a worker thread; its result or its exception. Cancelled meanwhile:
    its query is stopped (logged as ``name``'s, default the function's name), the thread's end
    awaited, and the cancellation raised."""
    switch = CallStop(name or _name_of(function))
    context = contextvars.copy_context()
    context.run(switch.make_current)  # the function runs in this copy: its query registers here
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio (trio): anyio's own hand-off
        return await anyio.to_thread.run_sync(context.run, function, *args)
    waiter = _Waiter(loop.create_future())

    def job() -> None:
        try:  # cancelled before this thread took it: not run, nobody waits for it
            outcome = (True, None if switch.stopped else context.run(function, *args))
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting call
            outcome = (False, exc)
        try:
            loop.call_soon_threadsafe(_settle, waiter, outcome)
        except RuntimeError:  # the loop closed meanwhile: nobody waits for the answer
            pass

    _POOL.submit(job)
    try:
        return await waiter.future
    except asyncio.CancelledError:  # anyio's scope or a plain Task.cancel(): nobody waits
        await _stop_and_wait(switch, waiter, loop)
        raise


async def _stop_and_wait(switch: CallStop, waiter: _Waiter,
                         loop: asyncio.AbstractEventLoop) -> None:
    """The thread's query stopped and its end awaited, whatever cancels this wait again."""
    if waiter.came:  # the thread had finished: nothing to stop, its outcome is dropped
        if waiter.future.done() and not waiter.future.cancelled():
            waiter.future.exception()  # not logged as "never retrieved"
        return
    switch.stop()
    waiter.future = loop.create_future()  # what the thread settles now (the first was cancelled)
    with anyio.CancelScope(shield=True):  # anyio does not cancel this wait again
        while not waiter.future.done():
            try:
                await asyncio.wait([waiter.future])  # never cancels the future it waits for
            except asyncio.CancelledError:
                continue  # cancelled again by a plain Task.cancel(): the thread still ends first
    waiter.future.exception()


def _settle(waiter: _Waiter, outcome: tuple[bool, Any]) -> None:
    waiter.came = True
    future = waiter.future
    if future.done():  # cancelled, and nobody waits for the thread any more
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


def call_stoppably(function: Callable[..., T], *args: Any, name: str | None = None) -> T:
    """``function(*args)`` for a synchronous caller. In the main thread, where Ctrl-C arrives as
    ``KeyboardInterrupt`` (but not while a driver blocks in C: MySQL ignores it until the time
    limit, SQLite and DuckDB turn it into a query error), it runs in a worker thread while this
    one waits: Ctrl-C stops its query (logged as ``name``'s), waits for the worker and raises
    ``KeyboardInterrupt``. In any other thread it simply runs there."""
    if threading.current_thread() is not threading.main_thread():
        return function(*args)
    switch = CallStop(name or _name_of(function))
    context = contextvars.copy_context()
    context.run(switch.make_current)
    done = threading.Event()
    outcome: list[tuple[bool, Any]] = []

    def job() -> None:
        try:
            outcome.append((True, context.run(function, *args)))
        except BaseException as exc:  # noqa: BLE001 - raised in the waiting thread
            outcome.append((False, exc))
        finally:
            done.set()

    _POOL.submit(job)
    try:
        done.wait()
    except BaseException:  # Ctrl-C (or a signal handler's error) while the worker runs
        switch.stop()
        done.wait()  # a second Ctrl-C ends this wait
        raise
    ok, value = outcome[0]
    if ok:
        return value
    raise value


def _name_of(function: Callable[..., Any]) -> str:
    """What a stop is logged as by default: the function's name (a partial's function's)."""
    while isinstance(function, functools.partial):
        function = function.func
    return getattr(function, "__name__", "a call")
