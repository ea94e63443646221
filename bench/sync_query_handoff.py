"""Benchmark: what a synchronous query in the main thread pays for being stoppable by Ctrl-C.

``DbOperations.execute_select_query`` called in the main thread runs the query in a worker
thread (``nl2sql._worker.call_stoppably``) so that Ctrl-C reaches it; in any other thread (the
MCP tools' and the agents' workers, ``nl2sql-eval``'s scoring pool) it runs in place. This
times one-row SQLite queries (bundled bookstore, a sink that keeps nothing) from the main thread
and from a second thread, alternating rounds; the difference is the hand-off.

    .venv/bin/python bench/sync_query_handoff.py [--calls 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import operations_for_query

QUERY = "SELECT order_id FROM orders WHERE order_id = 1"


class NullSink:
    def begin(self, columns: Sequence[str]) -> None:
        return None

    def write_rows(self, rows: Sequence[Sequence[object]]) -> None:
        return None


def timed(ops: OpsContext, calls: int) -> list[float]:
    operations = operations_for_query(ops, "bookstore")
    sink = NullSink()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        operations.execute_select_query(QUERY, sink)
        times.append(time.perf_counter() - started)
    return times


def in_thread(ops: OpsContext, calls: int) -> list[float]:
    box: list[list[float]] = []
    thread = threading.Thread(target=lambda: box.append(timed(ops, calls)))
    thread.start()
    thread.join()
    return box[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        ops = OpsContext.load(None, data_dir=Path(folder) / "data",
                              workspace=Path(folder) / "ws")
        timed(ops, 200)  # warm: driver, guard cache, connection pool
        for _ in range(args.rounds):
            for label, run in (("main thread (handed off)", timed),
                               ("other thread (in place)", in_thread)):
                times = sorted(run(ops, args.calls))
                print(f"{label:26} p50 {statistics.median(times) * 1e6:7.1f} us  "
                      f"p95 {times[int(len(times) * 0.95)] * 1e6:7.1f} us")
        ops.close()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
