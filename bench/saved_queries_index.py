"""``saved_queries_list`` on a big workspace: the cost of keeping the search index current.

Writes N saved results' metadata files (default 100,000; the CSV files do not matter to the
index) into a temporary workspace, then times ``SavedQueryIndex.search`` (what the tool runs):

- the first call (builds the index from the files),
- a call with nothing new (median of ``--calls``),
- a call after one new result written by another process (temporary file + rename, as nl2sql
  writes; median of ``--calls``),
- a search by words after that.

Usage:
    .venv/bin/python bench/saved_queries_index.py [--results 100000] [--folders 1] [--calls 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--folders", type=int, default=1)
    parser.add_argument("--calls", type=int, default=20)
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
        print(f"after one new result: median {statistics.median(after):.1f} ms, "
              f"max {max(after):.1f} ms")
        found, total = index.search(f"order number {args.results}", limit=5)
        words = timed(lambda: index.search("customer order", limit=50))
        print(f"search by words: {words:.1f} ms (new result found: {total >= 1})")


if __name__ == "__main__":
    main()
