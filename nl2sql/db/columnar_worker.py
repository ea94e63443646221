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


class WorkerTimeout(Exception):
    """The export did not finish before the deadline; the child was killed."""


class ColumnarWorker:
    """One child process, one export at a time; a caller that finds it busy uses its row path."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def run(self, request: dict[str, Any], deadline: float) -> dict[str, Any] | None:
        """The child's reply to ``request``; ``None`` when another export is using the child.
        Raises ``WorkerTimeout`` at ``deadline`` (``time.monotonic()``), after killing it."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            process = self._ensure_started()
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
                process.stdin.flush()
            except OSError:  # the child died since the last export: start a new one
                self._stop()
                process = self._ensure_started()
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
                process.stdin.flush()
            line = self._read_reply(process, deadline)
            return json.loads(line)
        finally:
            self._lock.release()

    def _read_reply(self, process: subprocess.Popen[bytes], deadline: float) -> bytes:
        assert process.stdout is not None
        stdout = process.stdout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._stop()
                raise WorkerTimeout
            ready, _, _ = select.select([stdout], [], [], remaining)
            if ready:
                line = stdout.readline()
                if not line:  # the child died (killed by the OS, out of memory...)
                    code = process.poll()
                    self._stop()
                    raise RuntimeError(f"the columnar export process ended (exit code {code})")
                return line

    def _ensure_started(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
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
        process, self._process = self._process, None
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
    from nl2sql.db.sqlite_arrow_export import export

    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        reply = export(json.loads(line))
        protocol.write(json.dumps(reply).encode("utf-8") + b"\n")
        protocol.flush()


if __name__ == "__main__":
    _serve()
