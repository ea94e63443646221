"""Progress of long-running commands on stderr: a transient bar on a terminal, debug log lines
otherwise (``-v``). Implements ``nl2sql.progress.ProgressReporter``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

log = logging.getLogger("nl2sql.progress")


class RichProgress:
    """A transient progress bar on stderr; ``label`` prefixes every description."""

    def __init__(self, label: str, console: Console) -> None:
        self.label = label
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console, transient=True)
        self.task = None

    def start(self, phase: str, total: int) -> None:
        self.bar.start()
        self.task = self.bar.add_task(f"{self.label}: {phase}", total=total)

    def advance(self, item: str) -> None:
        if self.task is not None:
            self.bar.update(self.task, description=f"{self.label}: {item}")
            self.bar.advance(self.task)

    def finish(self) -> None:
        if self.task is not None:
            self.bar.stop()
            self.task = None


class LogProgress:
    """When stderr is not a terminal: one debug log line per item, shown with ``-v``."""

    def __init__(self, label: str) -> None:
        self.label, self.total, self.done = label, 0, 0

    def start(self, phase: str, total: int) -> None:
        self.total, self.done = total, 0

    def advance(self, item: str) -> None:
        self.done += 1
        log.debug("%s: %s (%d/%d)", self.label, item, self.done, self.total)

    def finish(self) -> None:
        pass


@contextmanager
def progress_reporter(label: str) -> Iterator[RichProgress | LogProgress]:
    console = Console(stderr=True)
    if not console.is_terminal:
        yield LogProgress(label)
        return
    reporter = RichProgress(label, console)
    try:
        yield reporter
    finally:
        reporter.finish()  # stop the bar even when the work failed
