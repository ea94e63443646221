"""A single huge value must not take the server down: time, peak RSS, and the next call.

Spawns ``nl2sql-mcp`` (stdio, one process per case) with a 3 s time limit and the default
limits (``max_value_bytes`` 16 MiB, ``max_result_bytes`` 1 GiB, DuckDB ``memory_limit`` 1GB,
``NL2SQL_MAX_MEMORY`` 4GB), sends the query through ``db_execute_sql`` as raw JSON-RPC lines,
then a small query, and reads the server's peak RSS (``VmHWM`` in /proc/<pid>/status) before
it exits. Cases: SQLite ``randomblob(3e8)``; PostgreSQL and MariaDB ``repeat('x', 2e8)`` (servers
at 127.0.0.1, users postgres / root); DuckDB ``repeat('x', 2e8)`` and the list built whole
``unnest(generate_series(1, 3e8))``; with ``--spark``, a Spark Connect server started here
(local[2], 1g driver) with ``repeat('x', 2e8)`` and the same count computed from the data.
Targets: each ends within the time limit + 1 s, the peak RSS grows less than 200 MB over the
warmed-up server (which, with every backend configured, has imported all their drivers: about
300 MB, 350 with pyspark), and the next call works (on Spark: the server is still up).

Usage:
    .venv/bin/python bench/resource_limits.py [--timeout 3] [--skip-postgres] [--skip-mysql]
                                              [--spark]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
from mcp_cold_start import _answer, _send, handshake  # bench/ is on sys.path

PG_DSN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
PG_DB = "nl2sql_bench_limits"
MY_DB = "nl2sql_bench_limits"
CASES = [
    ("sqlite", "SELECT randomblob(300000000) AS b"),
    ("postgres", "SELECT repeat('x', 200000000) AS b"),
    ("mysql", "SELECT repeat('x', 200000000) AS b"),
    ("duckdb", "SELECT repeat('x', 200000000) AS b"),
    ("duckdb", "SELECT count(*) FROM (SELECT unnest(generate_series(1, 300000000)))"),
    ("spark", "SELECT repeat('x', 200000000) AS b"),
    ("spark", "SELECT repeat('x', id * 200000000) AS b FROM range(1, 2) AS t(id)"),
    ("spark", "SELECT size(sequence(1, id * 300000000)) AS n FROM range(1, 2) AS t(id)"),
]


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _call(process: subprocess.Popen[bytes], request_id: int, db_id: str,
          query: str) -> tuple[float, bool, str]:
    started = time.monotonic()
    _send(process, {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
        "name": "db_execute_sql", "arguments": {"db_id": db_id, "query": query}}})
    result = _answer(process, request_id)["result"]
    text = result["content"][0]["text"]  # type: ignore[index]
    return time.monotonic() - started, bool(result.get("isError")), text  # type: ignore[union-attr]


def run_case(command: str, folder: Path, db_id: str, query: str) -> dict[str, object]:
    env = {**os.environ, "NL2SQL_CONFIG": str(folder / "dbs.yaml"),
           "NL2SQL_WORKSPACE": str(folder / "workspace"), "NL2SQL_DATA_DIR": str(folder / "data")}
    process = subprocess.Popen([command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=env)
    try:
        handshake(process, 0)
        _call(process, 1, db_id, "SELECT 1 AS warm")  # imports and the first connection
        baseline = _peak_rss_mb(process.pid)
        elapsed, is_error, text = _call(process, 2, db_id, query)
        peak = _peak_rss_mb(process.pid)
        _, next_error, next_text = _call(process, 3, db_id, "SELECT 42 AS answer")
        return {"elapsed": elapsed, "error": is_error, "text": text.splitlines()[0][:160],
                "baseline_mb": baseline, "peak_mb": peak,
                "next_ok": not next_error and "42" in next_text}
    finally:
        process.stdin.close()  # type: ignore[union-attr]
        process.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=3.0, help="query_timeout_seconds")
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--skip-mysql", action="store_true")
    parser.add_argument("--spark", action="store_true", help="start a Spark Connect server too")
    parser.add_argument("--command", default=str(Path(sys.executable).with_name("nl2sql-mcp")))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sqlite3.connect(folder / "lim.db").execute("CREATE TABLE t (id INTEGER)").connection.close()
        databases = {"lim_sqlite": {"type": "sqlite", "path": str(folder / "lim.db"),
                                    "query_timeout_seconds": args.timeout}}
        backends = ["sqlite"]
        if not args.skip_postgres:
            with psycopg.connect(PG_DSN, autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {PG_DB}")
                admin.execute(f"CREATE DATABASE {PG_DB}")
            databases["lim_postgres"] = {"type": "postgres", "host": "127.0.0.1",
                                         "user": "postgres", "dbname": PG_DB,
                                         "query_timeout_seconds": args.timeout}
            backends.append("postgres")
        if not args.skip_mysql:
            import pymysql

            admin = pymysql.connect(host="127.0.0.1", user="root", autocommit=True)
            with admin.cursor() as cursor:
                cursor.execute(f"DROP DATABASE IF EXISTS {MY_DB}")
                cursor.execute(f"CREATE DATABASE {MY_DB}")
            admin.close()
            databases["lim_mysql"] = {"type": "mysql", "host": "127.0.0.1", "user": "root",
                                      "dbname": MY_DB, "query_timeout_seconds": args.timeout}
            backends.append("mysql")
        import duckdb

        duckdb.connect(str(folder / "lim.duckdb")).execute("CREATE TABLE t (id INTEGER)").close()
        databases["lim_duckdb"] = {"type": "duckdb", "path": str(folder / "lim.duckdb"),
                                   "query_timeout_seconds": args.timeout}
        backends.append("duckdb")
        spark = None
        if args.spark:
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
            from spark_server import SparkConnectServer

            spark = SparkConnectServer(folder / "spark", memory="1g")
            spark.start()
            databases["lim_spark"] = {"type": "spark", "remote": spark.remote,
                                      "database": "default",
                                      "query_timeout_seconds": args.timeout}
            backends.append("spark")
        import yaml

        (folder / "dbs.yaml").write_text(yaml.safe_dump({"databases": databases,
                                                         "include_sample": False}))
        ok = True
        print(f"time limit {args.timeout:g} s; targets: <= {args.timeout + 1:g} s, "
              f"peak RSS < 200 MB over the warmed-up server, next call works")
        try:
            for backend, query in CASES:
                if backend not in backends:
                    continue
                r = run_case(args.command, folder, f"lim_{backend}", query)
                growth = r["peak_mb"] - r["baseline_mb"]  # type: ignore[operator]
                passed = (r["elapsed"] <= args.timeout + 1  # type: ignore[operator]
                          and growth < 200 and r["next_ok"])
                ok &= bool(passed)
                print(f"{backend:9} {query[:60]:60} {r['elapsed']:6.2f} s  peak RSS "
                      f"{r['peak_mb']:6.1f} MB (after warm-up {r['baseline_mb']:.1f} MB, "
                      f"+{growth:.1f})  "
                      f"next call {'ok' if r['next_ok'] else 'FAILED'}  "
                      f"{'PASS' if passed else 'MISS'}")
                print(f"          answer: {r['text']}")
        finally:
            if spark is not None:
                spark.stop()
            if not args.skip_mysql:
                import pymysql

                admin = pymysql.connect(host="127.0.0.1", user="root", autocommit=True)
                with admin.cursor() as cursor:
                    cursor.execute(f"DROP DATABASE IF EXISTS {MY_DB}")
                admin.close()
            if not args.skip_postgres:
                with psycopg.connect(PG_DSN, autocommit=True) as admin:
                    admin.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
