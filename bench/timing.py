"""What the micro-benchmarks share: a median of repeated calls, p50 and p95 of timings, and a
sink that keeps no rows.

Imported by the scripts beside it (``bench/`` is on ``sys.path`` when one of them runs).
"""

from __future__ import annotations

import compileall
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import nl2sql


class DiscardingSink:
    """A result sink that takes the rows and keeps nothing (the query's cost alone)."""

    def begin(self, columns: Sequence[str]) -> None:
        pass

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        pass


def median_ms(action: Callable[[], object], repeat: int, *, warm_up: int = 20) -> float:
    """The median of ``repeat`` timed calls of ``action``, in milliseconds, after
    ``min(warm_up, repeat)`` untimed ones."""
    for _ in range(min(warm_up, repeat)):
        action()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def percentiles(times: list[float]) -> tuple[float, float]:
    """p50 and p95 of ``times`` (seconds), in milliseconds."""
    cuts = statistics.quantiles(times, n=100, method="inclusive")
    return statistics.median(times) * 1000, cuts[94] * 1000


def fresh_bytecode() -> None:
    """Write nl2sql's missing or stale bytecode before timing whole processes: an editable
    install writes none, and where ``PYTHONDONTWRITEBYTECODE`` is set no process ever does, so
    every console script started would compile each changed module again (``make bytecode``;
    measured: 0.3 s of annotate-schema's imports when none is written)."""
    compileall.compile_dir(Path(nl2sql.__file__).parent, quiet=1)
