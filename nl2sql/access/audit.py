"""The audit trail: one record per tool call, ask and data request, written in the background so
that recording never blocks nor fails the call it records.

``AuditTrail.record`` puts the record on a bounded queue and returns; one writer thread per
trail appends the records in order to the store's audit log, as many as are waiting in one
write (``AuditLog.append_many``: one transaction, one round trip to a PostgreSQL store, however
many calls came meanwhile; it logs and drops records it cannot write). The writer lets a new
record wait ``LINGER_SECONDS`` first: the call that queued it is still answering its client
then, and a write at that moment would compete with the answer for the interpreter (a point
query over stdio waited for it), while the calls of those milliseconds go in the same write. When the queue is full
(the store is down or slower than the calls for a long while) a record is dropped and counted,
with a warning at most once a minute. ``flush`` waits for what is queued (a command at exit, a
server as it stops), and says how many records it could not wait for.

A record: ``ts, user, face, tool, db_id, sql, row_count, duration_ms, outcome (ok | refused |
error | cancelled), answer_id``.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from nl2sql.store.records import AuditRecord
from nl2sql.store.store import Store

logger = logging.getLogger(__name__)

#: Records waiting to be written at most; beyond, new ones are dropped (and counted).
CAPACITY = 50_000
#: How long the end of a process waits for the queued records.
EXIT_FLUSH_SECONDS = 20.0
#: Records written in one transaction at most.
BATCH = 500
#: How long a new record waits for its call to be answered and for more records (``flush``
#: ends the wait): the trail is that much behind the calls.
LINGER_SECONDS = 0.05

Append = Callable[[list[dict[str, Any]]], object]


class AuditTrail:
    """Records handed to ``append`` (a list: those waiting, up to ``BATCH``) by a writer thread
    of its own, in the order recorded."""

    def __init__(self, append: Append, *, capacity: int = CAPACITY) -> None:
        self._append = append
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=capacity)
        self._done = threading.Condition()
        self._waiting = 0  # recorded and not written (or given up) yet
        self._flushing = 0  # flush() calls waiting: the writer does not linger for them
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.dropped = 0
        self._warned_at = 0.0

    def record(self, **fields: Any) -> None:
        """Queue one record; never blocks, never raises."""
        try:
            self._start()
            with self._done:
                self._waiting += 1
            self._queue.put_nowait(fields)
        except queue.Full:
            with self._done:
                self._waiting -= 1
            self._drop()
        except Exception:  # noqa: BLE001 - recording never fails the call it records
            logger.warning("audit: a record could not be queued", exc_info=True)

    def flush(self, timeout: float = EXIT_FLUSH_SECONDS) -> bool:
        """Wait until every queued record is written (or given up); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._done:
            self._flushing += 1
            self._done.notify_all()  # a lingering writer writes now
            try:
                while self._waiting:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        logger.warning("audit: %d record(s) still waiting to be written after "
                                       "%.0f s; they are lost if the process ends now",
                                       self._waiting, timeout)
                        return False
                    self._done.wait(left)
            finally:
                self._flushing -= 1
        return True

    def _start(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._write, name="nl2sql-audit",
                                                daemon=True)
                self._thread.start()

    def _write(self) -> None:
        while True:
            batch = [self._queue.get()]
            with self._done:
                self._done.wait_for(lambda: self._flushing > 0, LINGER_SECONDS)
            while len(batch) < BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._append(batch)
            except Exception:  # noqa: BLE001 - the store logs its own failures; this is a bug
                logger.warning("audit: %d record(s) of %s were not written", len(batch),
                               batch[0].get("tool"), exc_info=True)
            finally:
                with self._done:
                    self._waiting -= len(batch)
                    self._done.notify_all()

    def _drop(self) -> None:
        self.dropped += 1
        now = time.monotonic()
        if now - self._warned_at >= 60:
            self._warned_at = now
            logger.warning("audit: %d record(s) dropped so far: the store does not keep up "
                           "(is it reachable?)", self.dropped)


def store_trail(store: Store) -> AuditTrail:
    """The trail that writes to ``store``'s audit log (one per store location and process)."""
    return trail_for((store.url, str(store.data_dir)), lambda batch: store.audit.append_many(
        [AuditRecord(**fields) for fields in batch]))


_TRAILS: dict[Hashable, AuditTrail] = {}
_TRAILS_LOCK = threading.Lock()


def trail_for(key: Hashable, append: Append) -> AuditTrail:
    """The one trail of this process for the store ``key`` names (flushed at exit)."""
    with _TRAILS_LOCK:
        trail = _TRAILS.get(key)
        if trail is None:
            trail = _TRAILS[key] = AuditTrail(append)
        return trail


def flush_all(timeout: float = EXIT_FLUSH_SECONDS) -> bool:
    """Wait for every trail of this process (at exit and at server shutdown)."""
    deadline = time.monotonic() + timeout
    with _TRAILS_LOCK:
        trails = list(_TRAILS.values())
    return all([trail.flush(max(0.0, deadline - time.monotonic())) for trail in trails])


atexit.register(flush_all)
