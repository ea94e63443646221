"""Progress of long-running commands on stderr: a transient bar on a terminal (its text keeps
the phase: ``chinook: enum classification: Track``); without a terminal (CI logs, an agent
reading stderr), one line every few seconds per phase and one when the phase ends, plus a debug
line per item with ``-v``. Implements ``nl2sql._helpers.ProgressReporter``."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console

log = logging.getLogger("nl2sql.progress")


class RichProgress:
    """A transient progress bar on stderr; ``label`` prefixes every description."""

    def __init__(self, label: str, console: Console) -> None:
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn)

        self.label = label
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console, transient=True)
        self.task = None
        self.phase = ""

    def start(self, phase: str, total: int) -> None:
        self.bar.start()
        self.phase = phase
        self.task = self.bar.add_task(f"{self.label}: {phase}", total=total)

    def advance(self, item: str) -> None:
        if self.task is not None:
            self.bar.update(self.task, description=f"{self.label}: {self.phase}: {item}")
            self.bar.advance(self.task)

    def finish(self) -> None:
        if self.task is not None:
            self.bar.stop()
            self.task = None


class LogProgress:
    """When stderr is not a terminal: ``label: phase i/n (item)`` on stderr at most every
    ``interval`` seconds, and ``label: phase n/n done`` when a phase that took that long ends
    (quick phases stay silent); one debug log line per item, shown with ``-v``."""

    def __init__(self, label: str, *, interval: float = 5.0, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.phase, self.total, self.done = label, "", 0, 0
        self.interval, self.stream, self.clock = interval, stream, clock
        self.started = self.last = 0.0

    def start(self, phase: str, total: int) -> None:
        self.phase, self.total, self.done = phase, total, 0
        self.started = self.last = self.clock()

    def advance(self, item: str) -> None:
        self.done += 1
        log.debug("%s: %s: %s (%d/%d)", self.label, self.phase, item, self.done, self.total)
        if self.clock() - self.last >= self.interval:
            self._line(f"{self.done}/{self.total} ({item})")

    def finish(self) -> None:
        if self.phase and self.clock() - self.started >= self.interval:
            self._line(f"{self.done}/{self.total} done")
        self.phase = ""

    def _line(self, text: str) -> None:
        self.last = self.clock()
        print(f"{self.label}: {self.phase} {text}", file=self.stream or sys.stderr, flush=True)


def _is_terminal(stream: TextIO | None) -> bool:
    """``stream.isatty()``, False for no stream, a closed one or one without the method (as
    rich's own check)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):
        return False


@contextmanager
def progress_reporter(label: str) -> Iterator[RichProgress | LogProgress]:
    """A bar on a terminal, lines otherwise. Rich is imported only for a bar (~15 ms of every
    command's start, which agents and CI run without a terminal)."""
    if not _is_terminal(sys.stderr):
        yield LogProgress(label)
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield LogProgress(label)
        return
    reporter = RichProgress(label, console)
    try:
        yield reporter
    finally:
        reporter.finish()  # stop the bar even when the work failed
