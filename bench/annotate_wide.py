"""Benchmark: ``annotate-schema`` without a model on a wide Postgres schema against
``pg_dump --schema-only``.

Creates a throwaway database with N tables (the ``extract_wide.py`` schema: 10 columns, a
foreign key, an index, a table comment and a column comment each; every ``--filled``-th table
gets ``--rows`` rows), then times ``nl2sql.annotation.pipeline.annotate_database`` with no model (the
offline steps: extraction, row counts, sample rows, enum screening, value index, cache and
context index written; a fresh engine and an empty data dir each run) and
``pg_dump --schema-only`` on the same database, alternating, and prints best and median of
``--repeat`` and their ratios. Drops the database; exits 1 when the best ratio is above the
target (2.0).

    .venv/bin/python bench/annotate_wide.py [--tables 1000] [--repeat 5] [--profile]

``--process``: the ``annotate-schema`` command instead, as a whole process (interpreter start,
imports, dbs.yaml, the same offline steps, no model), against ``pg_dump`` as a whole process;
the target is then 3.0 on the median (issue 29). ``--json FILE`` writes the ratios.

Connection: NL2SQL_TEST_PG_HOST / _PORT / _USER (default 127.0.0.1:5432, postgres).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from extract_wide import HOST, PORT, USER, pg_dump, times_interleaved, wide_database  # noqa: E402
from timing import fresh_bytecode  # noqa: E402

from nl2sql.config.registry import DatabaseType, DbConnectionConfig  # noqa: E402
from nl2sql.annotation.pipeline import annotate_database  # noqa: E402

TARGET_RATIO = 2.0
PROCESS_TARGET_RATIO = 3.0  # issue 29: annotate-schema as a whole process, median
STATUSES = ("new", "paid", "shipped", "cancelled")


def fill_script(tables: int, every: int, rows: int) -> str:
    """Rows for every ``every``-th table: a code with few values (an enum), a title with many."""
    statements = []
    for i in range(0, tables, every):
        name = f"t{i:04d}"
        statements.append(
            f"INSERT INTO {name} (code, title, amount, quantity, notes) "
            f"SELECT (ARRAY{list(STATUSES)!r})[1 + g % {len(STATUSES)}], "
            f"'Item ' || g, g * 1.5, g, CASE WHEN g % 3 = 0 THEN NULL ELSE 'note ' || g END "
            f"FROM generate_series(1, {rows}) AS g;")
    return "\n".join(statements)


def annotate(dbname: str) -> int:
    config = DbConnectionConfig(db_id="wide", type=DatabaseType.POSTGRES, host=HOST, port=PORT,
                                user=USER, dbname=dbname)
    with tempfile.TemporaryDirectory(prefix="nl2sql_bench_") as data_dir:
        result = annotate_database(config, Path(data_dir))  # its own engine: pg_dump connects too
    return len(result.db_info.tables)


def annotate_process(dbname: str, folder: Path) -> None:
    """``annotate-schema wide`` (no model) as its own process, into an empty data dir."""
    (folder / "dbs.yaml").write_text(
        f"databases:\n  wide:\n    type: postgres\n    host: {HOST}\n    port: {PORT}\n"
        f"    user: {USER}\n    dbname: {dbname}\n")
    shutil.rmtree(folder / "data", ignore_errors=True)
    env = {**os.environ, "NL2SQL_CONFIG": str(folder / "dbs.yaml"),
           "NL2SQL_DATA_DIR": str(folder / "data")}
    env.pop("NL2SQL_MODEL", None)
    subprocess.run([str(Path(sys.executable).parent / "annotate-schema"), "wide"], env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--filled", type=int, default=10,
                        help="every N-th table gets rows (default 10)")
    parser.add_argument("--rows", type=int, default=200, help="rows per filled table")
    parser.add_argument("--no-analyze", action="store_true",
                        help="leave the tables never analyzed (reltuples -1)")
    parser.add_argument("--profile", action="store_true",
                        help="print the top cProfile entries of one annotation")
    parser.add_argument("--process", action="store_true",
                        help="time the annotate-schema command as a whole process")
    parser.add_argument("--json", type=Path, help="write the ratios to this JSON file")
    args = parser.parse_args(argv)
    fresh_bytecode()
    if shutil.which("pg_dump") is None:
        print("pg_dump is not on PATH; install the PostgreSQL client tools.", file=sys.stderr)
        return 2

    fill = fill_script(args.tables, args.filled, args.rows) if args.filled else None
    with wide_database(args.tables, extra=fill, analyze=not args.no_analyze) as (dbname, setup):
        found = annotate(dbname)  # warm-up (imports, server caches) and a sanity check
        assert found == args.tables, f"annotated {found} tables, expected {args.tables}"
        if args.process:
            with tempfile.TemporaryDirectory(prefix="nl2sql_bench_") as folder:
                annotate_process(dbname, Path(folder))  # warm the OS file cache, not counted
                annotate_s, dump_s = times_interleaved(
                    args.repeat, lambda: annotate_process(dbname, Path(folder)),
                    lambda: pg_dump(dbname))
        else:
            annotate_s, dump_s = times_interleaved(
                args.repeat, lambda: annotate(dbname), lambda: pg_dump(dbname))
        if args.profile:
            profiler = cProfile.Profile()
            profiler.runcall(annotate, dbname)
            stats = pstats.Stats(profiler, stream=sys.stderr)
            stats.sort_stats("cumulative").print_stats(40)
            stats.sort_stats("tottime").print_stats(25)

    best = min(annotate_s) / min(dump_s)
    median = statistics.median(annotate_s) / statistics.median(dump_s)
    load = os.getloadavg()
    print(f"wide schema: {args.tables} tables x 10 columns, every {args.filled}th with "
          f"{args.rows} rows (setup {setup:.1f}s), {args.repeat} runs; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'what':<34}{'best s':>9}{'median s':>10}")
    what = "annotate-schema process" if args.process else "annotate (no model)"
    print(f"{what:<34}{min(annotate_s):>9.3f}"
          f"{statistics.median(annotate_s):>10.3f}")
    print(f"{'pg_dump --schema-only':<34}{min(dump_s):>9.3f}{statistics.median(dump_s):>10.3f}")
    ok = median <= PROCESS_TARGET_RATIO if args.process else best <= TARGET_RATIO
    target = (f"target <= {PROCESS_TARGET_RATIO} on median" if args.process
              else f"target <= {TARGET_RATIO} on best")
    print(f"{'ratio annotate / pg_dump':<34}{best:>9.2f}{median:>10.2f}  "
          f"({target}: {'OK' if ok else 'TOO SLOW'})")
    if args.json:
        key = "annotate_process_ratio" if args.process else "annotate_ratio"
        args.json.write_text(json.dumps({key: median, f"{key}_best": best,
                                         "load_average": load[0]}, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
