"""Benchmark: the Nth run of one query costs what the first did.

Runs ``SELECT count(*) AS n FROM orders`` on the bundled bookstore ``--runs`` times through
``db_execute_sql_op`` (no ``output_file``, no ``overwrite``: each run adds a result pair under
the derived name, numbered ``_2``, ``_3``...), then prints the p50 of each window of
``--window`` calls. Exits 1 when the last window's p50 is more than 1.5x the first's.

    .venv/bin/python bench/repeated_query.py [--runs 3000] [--window 100]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from timing import percentiles

from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op

QUERY = "SELECT count(*) AS n FROM orders"
LIMIT = 1.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3000)
    parser.add_argument("--window", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ctx = OpsContext.load(None, data_dir=Path(tmp) / "data", workspace=Path(tmp) / "ws")
        try:
            times = []
            for _ in range(args.runs):
                started = time.perf_counter()
                last = db_execute_sql_op(ctx, "bookstore", QUERY)
                times.append(time.perf_counter() - started)
        finally:
            ctx.close()
    windows = [times[i:i + args.window] for i in range(0, args.runs, args.window)]
    print(f"{args.runs} runs of one query, the last saved as {last.csv_filename}; "
          f"load average {os.getloadavg()[0]:.1f}")
    for i in sorted({0, len(windows) // 3, 2 * len(windows) // 3, len(windows) - 1}):
        p50, p95 = percentiles(windows[i])
        print(f"  runs {i * args.window + 1}-{i * args.window + len(windows[i])}: "
              f"p50 {p50:.2f} ms  p95 {p95:.2f} ms")
    first, last_p50 = percentiles(windows[0])[0], percentiles(windows[-1])[0]
    verdict = "met" if last_p50 <= LIMIT * first else "NOT met"
    print(f"last window / first: {last_p50 / first:.2f}x (target <= {LIMIT}x: {verdict})")
    return 0 if verdict == "met" else 1


if __name__ == "__main__":
    raise SystemExit(main())
