"""Benchmark: ``annotate-schema`` (no model) on SQLite must not grow with the row count.

Builds two throwaway SQLite files with the same one-table schema (an integer key, three text
columns, a real and a date-like text column), one with ``--small`` rows (default 100,000) and
one with ``--big`` rows (default 3,000,000), and times ``nl2sql.annotation.pipeline.annotate_database``
(extraction, row count, sample rows, enum screening, value index, cache and context index
written: everything the CLI runs without a model) on each, alternating, median of ``--runs``.
Also times the table-bounds query both ways on the big file: ``min(rowid), max(rowid)`` in one
SELECT (a full scan in SQLite) and each in its own scalar subquery (two b-tree lookups).

    .venv/bin/python bench/annotate_sqlite_rows.py [--small 100000] [--big 3000000] [--runs 7]

Exits 1 when the big table's median is more than 5% above the small one's.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from nl2sql.config.registry import DatabaseType, DbConnectionConfig
from nl2sql.annotation.pipeline import annotate_database

TARGET_RATIO = 1.05


def build(path: Path, rows: int) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(f"""
            CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, city TEXT,
                                 label TEXT, amount REAL, created_on TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
            INSERT INTO events
            SELECT i, CASE i % 3 WHEN 0 THEN 'red' WHEN 1 THEN 'green' ELSE 'blue' END,
                   'city ' || (i % 500), 'label ' || i, i * 0.25,
                   date('2020-01-01', '+' || (i % 1000) || ' days') FROM n;
        """)
    conn.close()


def annotate_seconds(path: Path, data_dir: Path) -> float:
    config = DbConnectionConfig(db_id=path.stem, type=DatabaseType.SQLITE, path=path)
    started = time.perf_counter()
    annotate_database(config, data_dir)
    return time.perf_counter() - started


def bounds_ms(path: Path, query: str, runs: int = 5) -> float:
    times = []
    with sqlite3.connect(path) as conn:
        for _ in range(runs):
            started = time.perf_counter()
            conn.execute(query).fetchall()
            times.append((time.perf_counter() - started) * 1000)
    conn.close()
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--big", type=int, default=3_000_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nl2sql-bench-") as tmp:
        root = Path(tmp)
        files = {"small": root / "small.db", "big": root / "big.db"}
        build(files["small"], args.small)
        build(files["big"], args.big)
        for path in files.values():  # warm-up: imports, page cache
            annotate_seconds(path, root / "data")
        times: dict[str, list[float]] = {"small": [], "big": []}
        for _ in range(args.runs):
            for name, path in files.items():
                times[name].append(annotate_seconds(path, root / "data"))
        one = bounds_ms(files["big"], "SELECT min(rowid), max(rowid) FROM events")
        each = bounds_ms(files["big"], "SELECT (SELECT min(rowid) FROM events), "
                                       "(SELECT max(rowid) FROM events)")
    small, big = statistics.median(times["small"]), statistics.median(times["big"])
    ratio = big / small
    print(f"annotate-schema (no model), median of {args.runs}:")
    print(f"  {args.small:>10,} rows: {small * 1000:8.1f} ms")
    print(f"  {args.big:>10,} rows: {big * 1000:8.1f} ms")
    print(f"  ratio big/small: {ratio:.3f} (target <= {TARGET_RATIO})")
    print(f"bounds on {args.big:,} rows: min+max in one SELECT {one:.1f} ms, "
          f"one subquery each {each:.2f} ms")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
