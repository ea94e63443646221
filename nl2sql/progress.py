"""How long-running work (annotation) reports progress; the CLI draws a bar or logs lines."""

from __future__ import annotations

from typing import Protocol


class ProgressReporter(Protocol):
    def start(self, phase: str, total: int) -> None: ...
    def advance(self, item: str) -> None: ...
    def finish(self) -> None: ...


class NullProgress:
    """Reports nothing: the default for library callers."""

    def start(self, phase: str, total: int) -> None:
        pass

    def advance(self, item: str) -> None:
        pass

    def finish(self) -> None:
        pass
