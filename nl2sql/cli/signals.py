"""How a command is told to stop: Ctrl-C (SIGINT), SIGTERM (a supervisor, ``timeout``, ``kill``)
and SIGHUP (the terminal closed) all take the Ctrl-C path.

Python turns SIGINT into ``KeyboardInterrupt`` (inside ``asyncio.run``: a cancel of the main
task, then ``KeyboardInterrupt``), and every running query is stopped on that path
(``nl2sql._worker``: a cancelled hand-off stops its query). SIGTERM and SIGHUP, left to the
system, end the process at once, and a PostgreSQL or MySQL server goes on running the query
until its time limit. ``stopping_signals`` has them do what SIGINT's handler does at that moment,
so the query is stopped, the command says so in one line and exits ``128 + signal``.

A signal ignored when the command starts stays ignored, as POSIX asks of background jobs: a
command started with ``nohup`` keeps ignoring SIGHUP, and one started in the background of a
non-interactive shell (``make test &``: SIGINT and SIGQUIT ignored) keeps ignoring Ctrl-C meant
for the foreground job; SIGTERM still stops it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

#: The signals that stop a command like Ctrl-C, and what its line says.
STOPPING = {signal.SIGTERM: "terminated (SIGTERM)", signal.SIGHUP: "hung up (SIGHUP)"}


class Received:
    """Which stopping signal came (None: Ctrl-C, or none)."""

    def __init__(self) -> None:
        self.signum: int | None = None

    @property
    def words(self) -> str:
        return STOPPING.get(signal.Signals(self.signum), "stopped") if self.signum \
            else "interrupted"

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)


@contextmanager
def stopping_signals() -> Iterator[Received]:
    """SIGTERM and SIGHUP handled as Ctrl-C while the block runs (in the main thread; a signal
    ignored at start is left ignored), the previous handlers restored after."""
    received = Received()
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def as_ctrl_c(signum: int, frame: FrameType | None) -> None:
        if received.signum is None:
            received.signum = signum
        handler = signal.getsignal(signal.SIGINT)  # asyncio.run's, Python's, or ignored
        if callable(handler):
            handler(signal.SIGINT, frame)
            return
        raise KeyboardInterrupt

    previous = {signum: signal.getsignal(signum) for signum in STOPPING}
    for signum, handler in previous.items():
        if handler is signal.SIG_DFL:
            signal.signal(signum, as_ctrl_c)
    try:
        yield received
    finally:
        for signum, handler in previous.items():
            if handler is signal.SIG_DFL:
                signal.signal(signum, handler)
