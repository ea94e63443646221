"""Stop a running query when nobody waits for its answer any more.

Every hand-off of blocking work to a thread (``nl2sql._worker``) runs it with a ``CallStop`` of
its own as the current one (``CallStop.current``), and stops it when the awaiting task is
cancelled (an MCP client cancels or its session ends, an ``asyncio`` task running
``ask_async`` is cancelled or times out, Ctrl-C in ``nl2sql-ask``) or, in a synchronous caller,
when Ctrl-C interrupts the wait. Each backend registers how to stop its query for as long as
the query runs (``stop_with``): SQLite and DuckDB ``interrupt()``, PostgreSQL a cancel request,
MySQL/MariaDB ``KILL QUERY`` from a second connection, Spark ``interruptTag``.
``CallStop.stop`` runs them (in a thread of its own, since ``KILL QUERY`` opens a connection)
and logs it (the record's ``stopped``: what was stopped), so the engine is free again within
about a second instead of at the time limit. Without a current ``CallStop`` nothing changes.

Every engine's stop acts only on what the engine runs at that moment: a cancel request to a
PostgreSQL session that is still idle, an ``interrupt()`` with no statement running, an
``interruptTag`` before the tagged request arrives are lost, and a stop that lands between the
moment the block is entered and the moment the engine starts the query (a loaded machine, one
of five candidates) would leave that query running to the time limit. So the stop is repeated,
more and more rarely, until the block is left; leaving waits for a stop in flight, so none
reaches a pooled connection's next query.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from nl2sql.errors import QueryExecutionError

logger = logging.getLogger(__name__)


class CallStop:
    """The stop switch of one call: ``stop()`` once, from any thread."""

    _current: contextvars.ContextVar[CallStop | None] = contextvars.ContextVar(
        "nl2sql_call_stop", default=None)

    def __init__(self, name: str = "call") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._stopped = False
        self._actions: dict[int, tuple[str, Callable[[], object]]] = {}

    @classmethod
    def current(cls) -> CallStop | None:
        return cls._current.get()

    def make_current(self) -> None:
        """Make this the current stop switch of the running context (a hand-off's copy)."""
        self._current.set(self)

    @contextmanager
    def active(self) -> Iterator[CallStop]:
        """Make this the current stop switch (for the code run, and threads started, in it)."""
        token = self._current.set(self)
        try:
            yield self
        finally:
            self._current.reset(token)

    @property
    def stopped(self) -> bool:
        return self._stopped

    def stop(self) -> None:
        """Stop every query of the call that still runs (and any that starts later)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            actions = list(self._actions.values())
        for what, action in actions:
            logger.warning("%s was cancelled: stopping its query on %s", self.name, what,
                           extra={"stopped": what})
            threading.Thread(target=_run, args=(action, what), daemon=True,
                             name="nl2sql-call-stop").start()

    def _add(self, what: str, action: Callable[[], object]) -> int | None:
        with self._lock:
            if self._stopped:
                return None
            key = id(action)
            self._actions[key] = (what, action)
            return key

    def _remove(self, key: int) -> None:
        with self._lock:
            self._actions.pop(key, None)


def _run(action: Callable[[], object], what: str) -> None:
    try:
        action()
    except Exception as exc:  # noqa: BLE001 (best effort: the time limit still holds)
        logger.warning("could not stop the query on %s: %s", what, exc)


class _UntilLeft:
    """A block's stop action, run again and again until the block is left (module doc)."""

    FIRST_PAUSE = 0.1  # seconds before the stop is repeated; doubled up to LONGEST_PAUSE
    LONGEST_PAUSE = 2.0

    def __init__(self, action: Callable[[], object]) -> None:
        self._action = action
        self._lock = threading.Lock()  # held while the action runs: leave() waits for it
        self._left = threading.Event()

    def __call__(self) -> None:
        pause = self.FIRST_PAUSE
        while True:
            with self._lock:
                if self._left.is_set():
                    return
                self._action()
            if self._left.wait(pause):
                return
            pause = min(pause * 2, self.LONGEST_PAUSE)

    def leave(self) -> None:
        with self._lock:
            self._left.set()


@contextmanager
def stop_with(what: str, action: Callable[[], object],
              switch: CallStop | None = None) -> Iterator[None]:
    """While the block runs, ``stop()`` of ``switch`` (default: the current call's) calls
    ``action`` (``what``: the database, for the log), and again until the block is left. A
    call already stopped does not start the block."""
    switch = switch or CallStop.current()
    if switch is None:
        yield
        return
    until_left = _UntilLeft(action)
    key = switch._add(what, until_left)
    if key is None:  # stopped before the query began: do not begin it
        logger.warning("%s was cancelled before its query on %s began: not run", switch.name,
                       what, extra={"not_run": what})
        raise QueryExecutionError(f"The call was cancelled before its query ran on {what}.")
    try:
        yield
    finally:
        switch._remove(key)
        until_left.leave()
