"""Benchmark: the hand-off of one MCP tool call to a worker thread and back.

Round trips of a function that does nothing, awaited from the asyncio event loop, through
``anyio.to_thread.run_sync`` (what the tools used before) and ``nl2sql._worker.run_in_worker``
(what they use now), alternating; p50/p95 of each. On a virtual machine, compare with the
process pinned to one CPU (``taskset -c 0 ...``): waking a thread on an idle virtual CPU is
what a quiet machine pays on each hop.

    .venv/bin/python bench/worker_handoff.py [--calls 2000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable

import anyio.to_thread

from nl2sql._worker import run_in_worker


def nothing() -> int:
    return 1


async def timed(call: Callable[[], Awaitable[object]], calls: int) -> tuple[float, float]:
    for _ in range(50):
        await call()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6, statistics.quantiles(times, n=100)[94] * 1e6


async def main(calls: int, rounds: int) -> None:
    ways = {"anyio.to_thread.run_sync": lambda: anyio.to_thread.run_sync(nothing),
            "nl2sql run_in_worker": lambda: run_in_worker(nothing)}
    for _ in range(rounds):
        for name, call in ways.items():
            p50, p95 = await timed(call, calls)
            print(f"{name:26s} p50 {p50:6.1f} us  p95 {p95:6.1f} us")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs, "
          f"this process allowed on CPUs {sorted(os.sched_getaffinity(0))}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
