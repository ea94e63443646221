"""A chart of a big result stays within the row cap: time and peak memory flat in the file size.

Writes result CSVs of 50,000 / 300,000 / 3,000,000 rows (``day, region, amount``: a date, a
category, a number, as a "sales per day and region" query would give), then charts each in a
fresh process (``chart_csv(path).png()``: read at most ``NL2SQL_CHART_MAX_ROWS`` rows, choose,
draw) and reports the wall time of the chart and the process's peak RSS. A baseline process
that imports the same modules and draws nothing gives the RSS the libraries alone take.

Usage:
    .venv/bin/python bench/chart_big.py [--rows 50000,300000,3000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = """
import json, resource, sys, time
import nl2sql.charts.render  # matplotlib: counted in the baseline too
from nl2sql.charts import chart_csv
path = sys.argv[1]
start = time.perf_counter()
chart = None if path == "-" else chart_csv(path, total_rows=int(sys.argv[2]))
png = b"" if chart is None else chart.png()
elapsed = time.perf_counter() - start
print(json.dumps({"seconds": elapsed, "rss_mib": resource.getrusage(
    resource.RUSAGE_SELF).ru_maxrss / 1024, "png": len(png),
    "describe": "" if chart is None else chart.describe()}))
"""
REGIONS = ["north", "south", "east", "west", "centre"]


def write_csv(path: Path, rows: int) -> None:
    start = date(2015, 1, 1)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["day", "region", "amount"])
        for i in range(rows):
            writer.writerow([(start + timedelta(days=i // 5 % 3650)).isoformat(),
                             REGIONS[i % 5], f"{(i * 7919) % 10000 / 100:.2f}"])


def measure(path: str, rows: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CHILD, path, str(rows)], capture_output=True,
                          text=True, check=True, env=env)
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="50000,300000,3000000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(n) for n in args.rows.split(",")]
    print(f"load: {os.getloadavg()[0]:.2f}  cap: "
          f"{os.environ.get('NL2SQL_CHART_MAX_ROWS', '50000 (default)')}")
    with tempfile.TemporaryDirectory() as tmp:
        base = [measure("-", 0) for _ in range(args.runs)]
        print(f"{'baseline (imports only)':>24}: peak RSS "
              f"{statistics.median(r['rss_mib'] for r in base):.0f} MiB")
        for rows in sizes:
            path = Path(tmp) / f"r{rows}.csv"
            write_csv(path, rows)
            runs = [measure(str(path), rows) for _ in range(args.runs)]
            print(f"{rows:>14,} rows {path.stat().st_size / 2**20:6.0f} MiB: chart "
                  f"{statistics.median(r['seconds'] for r in runs):.2f} s (min "
                  f"{min(r['seconds'] for r in runs):.2f}), peak RSS "
                  f"{statistics.median(r['rss_mib'] for r in runs):.0f} MiB, PNG "
                  f"{runs[0]['png']:,} bytes")
            print(f"{'':>24}  {runs[0]['describe']}")
            path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
