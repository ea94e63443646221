"""Benchmark: a point query on Spark SQL through ``db_execute_sql_op`` (guard, catalogue check,
the value-size wrapper, the run, the result files), and the requests it sends the server.

Starts a private Spark Connect server from the installed pyspark (tests/spark_server.py), or
uses ``--remote`` (a server that has the table already: ``--keep`` prints the remote of the
one this run starts and keeps it until Ctrl-C or SIGTERM, so two checkouts can be timed against one
warm server), builds a 10,000-row table, then times ``--calls`` queries ``SELECT * FROM
bench WHERE id = k`` (each a different k) after ``--warmup`` untimed ones.

    .venv/bin/python bench/spark_point_query.py [--calls 60] [--remote sc://127.0.0.1:PORT]

Reported: p50 / p95 of the whole operation and the server requests of one query by kind.
"""

from __future__ import annotations

import argparse
import collections
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from spark_server import (SparkConnectServer, requests_sent,  # noqa: E402
                          spark_unavailable_reason)
from timing import percentiles  # noqa: E402  (bench/ is on sys.path)

DATABASE = "bench_point"


def _make_table(remote: str) -> None:
    from pyspark.sql.connect.session import SparkSession

    session = SparkSession.builder.remote(remote).create()
    try:
        session.sql(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
        session.sql(f"CREATE TABLE IF NOT EXISTS {DATABASE}.bench USING parquet AS "
                    "SELECT id, concat('name ', id) AS name, id * 1.5 AS amount "
                    "FROM range(1, 10001)")
    finally:
        session.stop()


def run(remote: str, calls: int, warmup: int) -> None:
    from conftest import spark_config, write_dbs_yaml
    from nl2sql.operations.ops_context import OpsContext
    from nl2sql.operations.queries import db_execute_sql_op

    folder = Path(tempfile.mkdtemp(prefix="spark_point_"))
    config = write_dbs_yaml(folder, [spark_config("lake", remote, DATABASE)])
    ctx = OpsContext.load(config, workspace=folder / "workspace")
    try:
        times = []
        for i in range(warmup + calls):
            started = time.perf_counter()
            db_execute_sql_op(ctx, "lake", f"SELECT * FROM bench WHERE id = {i + 1}",
                              overwrite=True)
            if i >= warmup:
                times.append(time.perf_counter() - started)
        p50, p95 = percentiles(times)
        print(f"Spark point query through db_execute_sql_op, {calls} calls after {warmup} "
              f"warm-up: p50 {p50:.0f} ms, p95 {p95:.0f} ms, min {min(times) * 1000:.0f} ms")
        with requests_sent() as sent:
            db_execute_sql_op(ctx, "lake", "SELECT * FROM bench WHERE id = 1", overwrite=True)
        kinds = collections.Counter(sent)
        print(f"requests of one query: {len(sent)} "
              f"({', '.join(f'{k} x{v}' for k, v in sorted(kinds.items()))})")
    finally:
        ctx.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--remote", help="an existing Spark Connect server (sc://host:port)")
    parser.add_argument("--keep", action="store_true",
                        help="start a server, make the table, print its remote, wait for Ctrl-C")
    args = parser.parse_args()
    if args.remote:
        _make_table(args.remote)
        run(args.remote, args.calls, args.warmup)
        return 0
    if reason := spark_unavailable_reason():
        print(f"error: {reason}", file=sys.stderr)
        return 2
    server = SparkConnectServer(Path(tempfile.mkdtemp(prefix="spark_point_server_")))
    server.start()
    try:
        _make_table(server.remote)
        if args.keep:
            signal.signal(signal.SIGTERM, signal.default_int_handler)  # kill: stop it too
            print(server.remote, flush=True)
            while True:
                time.sleep(3600)
        run(server.remote, args.calls, args.warmup)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
