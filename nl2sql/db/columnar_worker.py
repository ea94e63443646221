"""A child process that runs columnar exports, so that the time limit can always stop them.

The ADBC SQLite driver cannot be interrupted (its ``cancel`` is not implemented and its SQLite
handle is private), and a query can spend minutes between two batches. Run in this server's
process, a runaway export could only be abandoned, still burning a core. In a child process it
is killed at the deadline like any other engine is interrupted, and the next export starts a new
child. The child also keeps Arrow's memory out of the server's.

Protocol: one JSON request per line on the child's stdin, one JSON reply per line on its stdout
(the child sends nothing else there: its ``sys.stdout`` is pointed at stderr). The child is
started with ``python -m`` (not ``multiprocessing``), so it never re-imports the caller's main
module (a notebook or a script without a ``__main__`` guard), and it exits when its stdin
closes, i.e. when this process ends.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


#: A child with no export for this long exits (its ~120 MB back to the system).
_IDLE_SECONDS = 600.0


class WorkerTimeout(Exception):
    """The export did not finish before the deadline; the child was killed."""


class ColumnarWorker:
    """One child process, one export at a time. A caller that finds it busy, or still
    starting, goes on with its row path and asks again at its next batch: a query never waits
    for the child to import Arrow (0.3 s, more on a busy machine), and a big result still moves
    to the child once it is up."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._ready = False
        self._lock = threading.Lock()
        #: The SQLite library version the child's driver runs (told when it is ready).
        self.sqlite_version: str | None = None
        self._cannot_start = False

    def run(self, request: dict[str, Any], deadline: float) -> dict[str, Any] | None:
        """The child's reply to ``request``; ``None`` when the child is busy with another export
        or still starting. Raises ``WorkerTimeout`` at ``deadline`` (``time.monotonic()``), after
        killing the child."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if not self._started_and_ready(0):
                return None
            process = self._process
            assert process is not None and process.stdin is not None
            try:
                process.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
                process.stdin.flush()
            except OSError:  # the child died since the last export: the next one starts anew
                self._stop()
                return None
            line = self._read_line(process, deadline)
            return json.loads(line)
        finally:
            self._lock.release()

    def ready(self, timeout: float) -> bool:
        """Start the child if needed and wait up to ``timeout`` s for it to be ready (and free:
        ``False`` while another export is using it)."""
        if not self._lock.acquire(timeout=timeout) if timeout > 0 else \
                not self._lock.acquire(blocking=False):
            return False
        try:
            return self._started_and_ready(timeout)
        finally:
            self._lock.release()

    def _started_and_ready(self, timeout: float) -> bool:
        if self._cannot_start:
            return False
        try:
            process = self._ensure_started()
        except OSError as exc:  # no usable interpreter (an embedded Python...): rows only
            self._cannot_start = True
            logger.warning("columnar export off: its worker process cannot start (%s)", exc)
            return False
        if not self._ready:
            try:  # the child says "ready <sqlite version>" once its imports are done
                words = self._read_line(process, time.monotonic() + timeout).split()
            except WorkerTimeout:
                return False
            self._ready = len(words) == 2 and words[0] == b"ready"
            self.sqlite_version = words[1].decode("ascii") if self._ready else None
        return self._ready

    def _read_line(self, process: subprocess.Popen[bytes], deadline: float) -> bytes:
        """The child's next line; at ``deadline`` the child is killed (``WorkerTimeout``),
        unless it is only starting (then it goes on starting)."""
        assert process.stdout is not None
        stdout = process.stdout
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([stdout], [], [], remaining)
            if ready:
                line = stdout.readline()
                if not line:  # the child died (killed by the OS, out of memory...)
                    code = process.poll()
                    self._stop()
                    raise RuntimeError(f"the columnar export process ended (exit code {code})")
                return line
            if time.monotonic() >= deadline:
                if self._ready:  # an export ran out of time; a starting child goes on
                    self._stop()
                raise WorkerTimeout

    def _ensure_started(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._stop()
        self._ready = False
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        self._process = subprocess.Popen(
            [sys.executable, "-m", "nl2sql.db.columnar_worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=None, env=env, close_fds=True)
        logger.debug("started columnar export process %d", self._process.pid)
        return self._process

    def _stop(self) -> None:
        process, self._process, self._ready = self._process, None, False
        if process is None:
            return
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def close(self) -> None:
        """End the child (at exit; a later ``run`` starts a new one)."""
        with self._lock:
            self._stop()


_worker: ColumnarWorker | None = None
_worker_lock = threading.Lock()


def shared_worker() -> ColumnarWorker:
    """This process's columnar worker (started on its first export)."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = ColumnarWorker()
            atexit.register(_worker.close)
        return _worker


def _serve() -> None:
    """The child: answer requests until stdin closes."""
    protocol = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but replies may reach the protocol stream
    from nl2sql.db.sqlite_arrow_export import export, warm_up

    version = warm_up()
    protocol.write(f"ready {version}\n".encode("ascii"))
    protocol.flush()
    requests = sys.stdin.buffer
    idle = float(os.environ.get("NL2SQL_COLUMNAR_IDLE_SECONDS", _IDLE_SECONDS))
    while True:
        # One request at a time, so nothing is left in the buffer between two: select sees all.
        if not select.select([requests], [], [], idle)[0]:
            return  # idle: give the memory back; the parent starts a new child when needed
        line = requests.readline()
        if not line:
            return  # the parent closed the pipe (it ended)
        if not line.strip():
            continue
        reply = export(json.loads(line))
        protocol.write(json.dumps(reply).encode("utf-8") + b"\n")
        protocol.flush()


if __name__ == "__main__":
    _serve()
