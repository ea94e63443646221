"""``saved_queries_list`` on a big workspace: the cost of keeping the search index current.

Writes N saved results' metadata files (default 100,000; the CSV files do not matter to the
index) into a temporary workspace, then times ``SavedQueryIndex.search`` (what the tool runs):

- the first call (builds the index from the files),
- a call with nothing new (median of ``--calls``),
- a call after one new result written by another process (temporary file + rename, as nl2sql
  writes; median of ``--calls``),
- a call after one new result saved by this server (``db_execute_sql_op`` on the bundled
  bookstore, which records the result in the index as it saves it; median of ``--calls``),
  and what that save itself took,
- a search by words after that,
- what recording costs a save: ``--saves`` point-query saves into that workspace, alternately
  with and without ``SavedQueryIndex.record`` (p50/p95).

Run it with ``PYTHONPATH`` on another checkout to measure that code (e.g. before a change).

Usage:
    .venv/bin/python bench/saved_queries_index.py [--results 100000] [--folders 1] [--calls 20]
        [--saves 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from unittest import mock

from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.operations import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.workspace.saved_query_index import SavedQueryIndex


def write_result(folder: Path, k: int) -> None:
    metadata = {"sql_query": f"SELECT * FROM orders WHERE id = {k}",
                "timestamp": f"2026-01-01T00:00:{k % 60:02d}+00:00", "row_count": 1,
                "column_count": 3, "csv_filename": f"result_{k}.csv", "db_id": "bookstore",
                "natural_language_query": f"order number {k} and its customer"}
    tmp = folder / f".result_{k}.tmp"
    tmp.write_text(json.dumps(metadata), encoding="utf-8")
    os.replace(tmp, folder / f"result_{k}.metadata.json")


def timed(call: object) -> float:
    started = time.perf_counter()
    call()  # type: ignore[operator]
    return (time.perf_counter() - started) * 1000


def percentile(values: list[float], pct: int) -> float:
    return sorted(values)[min(len(values) - 1, len(values) * pct // 100)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--folders", type=int, default=1)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--saves", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        folders = [workspace] + [workspace / f"f{i}" for i in range(1, args.folders)]
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        for k in range(args.results):
            write_result(folders[k % len(folders)], k)
        print(f"{args.results:,} results in {len(folders)} folder(s) written in "
              f"{time.perf_counter() - started:.1f} s; load {os.getloadavg()[0]:.1f}")
        index = SavedQueryIndex(workspace)
        print(f"first call (builds the index): {timed(lambda: index.search(limit=50)):,.0f} ms")
        time.sleep(2.1)  # past the racy window of the folder mtimes
        index.search(limit=50)
        quiet = [timed(lambda: index.search(limit=50)) for _ in range(args.calls)]
        print(f"nothing new: median {statistics.median(quiet):.1f} ms, max {max(quiet):.1f} ms")
        after = []
        for n in range(args.calls):
            write_result(workspace, args.results + n)
            after.append(timed(lambda: index.search(limit=50)))
        print(f"after one new result (another process): median {statistics.median(after):.1f} "
              f"ms, max {max(after):.1f} ms")
        ops = OpsContext(DbConnectionConfigs.load(None, data_dir=Path(tmp) / "data",
                                                  workspace=workspace))
        db_execute_sql_op(ops, "bookstore", "SELECT 1")  # opens the database once
        time.sleep(2.1)  # past the racy window again
        index.search(limit=50)
        saves, own = [], []
        for n in range(args.calls):
            saves.append(timed(lambda: db_execute_sql_op(
                ops, "bookstore", f"SELECT title FROM books LIMIT {n + 1}",
                nl_query=f"server question {n}")))
            own.append(timed(lambda: index.search(limit=50)))
        print(f"after one new result (this server): median {statistics.median(own):.1f} ms, "
              f"max {max(own):.1f} ms; the save itself: median "
              f"{statistics.median(saves):.1f} ms")
        found = (index.search(f"order number {args.results}", limit=5)[1] >= 1
                 and index.search(f"server question {args.calls - 1}", limit=5)[1] >= 1)
        words = timed(lambda: index.search("customer order", limit=50))
        print(f"search by words: {words:.1f} ms (new results found: {found})")
        if hasattr(SavedQueryIndex, "record"):  # not in the code before it existed
            with_record: list[float] = []
            without: list[float] = []
            for n in range(args.saves):
                query = f"SELECT * FROM orders WHERE order_id = {n}"
                with_record.append(timed(lambda: db_execute_sql_op(ops, "bookstore", query)))
                with mock.patch.object(SavedQueryIndex, "record"):
                    without.append(timed(lambda: db_execute_sql_op(
                        ops, "bookstore", f"{query} AND 1 = 1")))
            print(f"a point-query save, {args.saves} each, alternating: with record p50 "
                  f"{percentile(with_record, 50):.2f} ms, p95 {percentile(with_record, 95):.2f}"
                  f" ms; without p50 {percentile(without, 50):.2f} ms, p95 "
                  f"{percentile(without, 95):.2f} ms")
        ops.close()


if __name__ == "__main__":
    main()
