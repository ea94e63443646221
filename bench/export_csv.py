"""Benchmark: export a large result to CSV through ``db_execute_sql_op`` against the native
tools (``sqlite3 -csv`` and ``psql \\copy``), plus the peak memory of the export.

Builds a table of N rows (a SQLite file and a throwaway PostgreSQL database; integer, text with
commas and quotes, real/numeric, date), then for each backend alternates the native export and
ours (best of ``--repeat``). Each of ours runs in a child process that exports twice, like a
server's life: the first export starts the columnar worker process and, not waiting for it,
goes on on the row path until the worker is up, then hands over (reported as "1st"); the
second, the one compared, finds it ready. The child reports its peak RSS (``VmHWM``), the worker's, and
its RSS after imports and set-up (the baseline).

    .venv/bin/python bench/export_csv.py [--rows 1000000 3000000] [--rss-rows 5000000] [--repeat 3]

Targets: <= 1.0x sqlite3 and psql, peak RSS of the server and its worker <= 150 MB together,
flat in N. Exit 1 when a target is missed."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

PG_HOST = os.environ.get("NL2SQL_TEST_PG_HOST", "127.0.0.1")
PG_PORT = os.environ.get("NL2SQL_TEST_PG_PORT", "5432")
PG_USER = os.environ.get("NL2SQL_TEST_PG_USER", "postgres")
QUERY = "SELECT * FROM bench ORDER BY id"
NOTE = ("CASE WHEN i % 3 = 0 THEN 'has, a comma' WHEN i % 3 = 1 THEN 'has \"quotes\" inside' "
        "ELSE 'plain text ' || i END")


def _admin(dbname: str = "postgres") -> str:
    return f"host={PG_HOST} port={PG_PORT} user={PG_USER} dbname={dbname}"


def build_sqlite(path: Path, rows: int) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE bench (id INTEGER PRIMARY KEY, name TEXT, amount REAL, "
                     "qty INTEGER, created TEXT, note TEXT)")
        conn.execute(f"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
                     f"WHERE i < {rows}) INSERT INTO bench SELECT i, 'name ' || i, i * 0.25, "
                     f"i % 100, date('2020-01-01', '+' || (i % 1000) || ' days'), {NOTE} "
                     f"FROM c")
    conn.close()


def build_postgres(dbname: str, rows: int) -> None:
    with psycopg.connect(_admin(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{dbname}"')
    with psycopg.connect(_admin(dbname), autocommit=True) as conn:
        conn.execute(f"CREATE TABLE bench AS SELECT i AS id, 'name ' || i AS name, "
                     f"(i * 0.25)::numeric(14, 2) AS amount, i % 100 AS qty, "
                     f"date '2020-01-01' + (i % 1000) AS created, {NOTE} AS note "
                     f"FROM generate_series(1, {rows}) AS i")
        conn.execute("ALTER TABLE bench ADD PRIMARY KEY (id)")
        conn.execute("VACUUM ANALYZE bench")


def drop_postgres(dbname: str) -> None:
    with psycopg.connect(_admin(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


def write_config(folder: Path, sqlite_path: Path, dbname: str) -> Path:
    config = folder / "dbs.yaml"
    config.write_text(json.dumps({"databases": {
        "bench_sqlite": {"type": "sqlite", "path": str(sqlite_path), "max_rows": 100_000_000,
                         "query_timeout_seconds": 3600},
        "bench_postgres": {"type": "postgres", "host": PG_HOST, "port": int(PG_PORT),
                           "user": PG_USER, "dbname": dbname, "max_rows": 100_000_000,
                           "query_timeout_seconds": 3600}}}))
    return config


def _vm(field: str, pid: int | str = "self") -> int:
    """A /proc/<pid>/status memory field in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(field)


def child_export(config: Path, db_id: str) -> None:
    """Run the export twice in this process (a server's life: the first one also starts the
    columnar worker process) and print JSON: seconds of both, rows, RSS numbers (kB) of this
    process and of the worker."""
    from nl2sql.db.columnar_worker import shared_worker
    from nl2sql.operations.ops_context import OpsContext
    from nl2sql.operations.queries import db_execute_sql_op

    ctx = OpsContext.load(config, workspace=config.parent / "workspace")
    ctx.connection(db_id).engine  # noqa: B018 - set-up cost is not export cost
    baseline = _vm("VmRSS")
    seconds = []
    for attempt in range(2):
        if attempt and db_id == "bench_sqlite":  # later exports find the worker started
            shared_worker().ready(timeout=60)
        started = time.perf_counter()
        result = db_execute_sql_op(ctx, db_id, QUERY, output_file=f"ours_{db_id}", overwrite=True)
        seconds.append(time.perf_counter() - started)
    worker = shared_worker()._process
    worker_peak = _vm("VmHWM", worker.pid) if worker is not None and worker.poll() is None else 0
    print(json.dumps({"seconds": seconds[1], "first_seconds": seconds[0],
                      "rows": result.row_count, "baseline_kb": baseline,
                      "peak_kb": _vm("VmHWM"), "worker_peak_kb": worker_peak}))


def run_child(config: Path, db_id: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", db_id, "--config", str(config)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_native(command: list[str], stdout: Path | None = None) -> float:
    started = time.perf_counter()
    if stdout:
        with stdout.open("wb") as handle:
            subprocess.run(command, check=True, stdout=handle)
    else:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[1_000_000, 3_000_000],
                        help="timed against the native tools")
    parser.add_argument("--rss-rows", type=int, nargs="*", default=[],
                        help="memory only (one export, no native run)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child")
    parser.add_argument("--config", type=Path)
    args = parser.parse_args()
    if args.child:
        child_export(args.config, args.child)
        return 0

    ok = True
    with tempfile.TemporaryDirectory(prefix="nl2sql_bench_") as tmp:
        folder = Path(tmp)
        print(f"{'rows':>10} {'backend':<9} {'native (s)':>10} {'ours (s)':>9} {'ratio':>6} "
              f"{'target':>6} {'1st (s)':>8} {'peak RSS MB':>11} {'worker MB':>9} "
              f"{'RSS growth MB':>13}")
        for rows in sorted({*args.rows, *args.rss_rows}):
            sqlite_path = folder / f"bench_{rows}.db"
            dbname = f"nl2sql_bench_{uuid.uuid4().hex[:8]}"
            build_sqlite(sqlite_path, rows)
            build_postgres(dbname, rows)
            try:
                config = write_config(folder, sqlite_path, dbname)
                natives = {
                    "bench_sqlite": (["sqlite3", "-csv", "-header", str(sqlite_path), QUERY],
                                     folder / "native_sqlite.csv", 1.0),
                    "bench_postgres": (["psql", "-X", "-q", "-h", PG_HOST, "-p", PG_PORT, "-U",
                                        PG_USER, "-d", dbname, "-c",
                                        f"\\copy ({QUERY}) TO '{folder}/native_pg.csv' "
                                        f"CSV HEADER"], None, 1.0),
                }
                for db_id, (command, stdout, target) in natives.items():
                    native, ours, first, peak, worker, growth = [], [], [], 0, 0, 0
                    timed = rows in args.rows
                    for _ in range(args.repeat if timed else 1):
                        if timed:
                            native.append(run_native(command, stdout))
                        child = run_child(config, db_id)
                        assert child["rows"] == rows, child
                        ours.append(child["seconds"])
                        first.append(child["first_seconds"])
                        peak = max(peak, child["peak_kb"])
                        worker = max(worker, child["worker_peak_kb"])
                        growth = max(growth, child["peak_kb"] - child["baseline_kb"])
                    ratio = min(ours) / min(native) if native else float("nan")
                    ok &= (not native or ratio <= target) and peak + worker <= 150 * 1024
                    print(f"{rows:>10,} {db_id.removeprefix('bench_'):<9} "
                          f"{min(native) if native else float('nan'):>10.2f} {min(ours):>9.2f} "
                          f"{ratio:>6.2f} {target:>6.1f} {min(first):>8.2f} "
                          f"{peak / 1024:>11.1f} {worker / 1024:>9.1f} "
                          f"{growth / 1024:>13.1f}", flush=True)
            finally:
                drop_postgres(dbname)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
