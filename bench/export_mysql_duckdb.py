"""Benchmark: export 1M rows to CSV through ``db_execute_sql_op`` on MariaDB/MySQL and DuckDB,
against the native tools: ``mariadb --batch`` (tab-separated to a file) and DuckDB's own
``COPY ... TO`` in the ``duckdb`` CLI (``pip install duckdb-cli``), plus the ``sqlite3 -csv``
floor on the same rows. Same table shape as ``export_csv.py``; best of ``--repeat``.

    .venv/bin/python bench/export_mysql_duckdb.py [--rows 1000000] [--repeat 3]

Target: <= 1.5x the native tool. Exit 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pymysql
from export_csv import QUERY, build_sqlite, run_child, run_native

MY_HOST, MY_PORT, MY_USER = "127.0.0.1", 3306, "root"
MY_NOTE = ("CASE WHEN seq % 3 = 0 THEN 'has, a comma' WHEN seq % 3 = 1 THEN "
           "'has \"quotes\" inside' ELSE CONCAT('plain text ', seq) END")
DUCK_NOTE = ("CASE WHEN i % 3 = 0 THEN 'has, a comma' WHEN i % 3 = 1 THEN "
             "'has \"quotes\" inside' ELSE 'plain text ' || i END")


def build_mysql(dbname: str, rows: int) -> None:
    conn = pymysql.connect(host=MY_HOST, port=MY_PORT, user=MY_USER, autocommit=True)
    with conn.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE `{dbname}`")
        cursor.execute(f"USE `{dbname}`")  # seq_1_to_N lives in the current database
        cursor.execute(
            f"CREATE TABLE bench (id INT PRIMARY KEY, name VARCHAR(40), "
            f"amount DECIMAL(14, 2), qty INT, created DATE, note VARCHAR(40)) "
            f"SELECT seq AS id, CONCAT('name ', seq) AS name, seq * 0.25 AS amount, "
            f"seq % 100 AS qty, DATE '2020-01-01' + INTERVAL (seq % 1000) DAY AS created, "
            f"{MY_NOTE} AS note FROM seq_1_to_{rows}")
    conn.close()


def drop_mysql(dbname: str) -> None:
    conn = pymysql.connect(host=MY_HOST, port=MY_PORT, user=MY_USER, autocommit=True)
    with conn.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS `{dbname}`")
    conn.close()


def build_duckdb(cli: str, path: Path, rows: int) -> None:
    subprocess.run([cli, str(path), "-c",
                    f"CREATE TABLE bench AS SELECT i AS id, 'name ' || i AS name, "
                    f"(i * 0.25)::DECIMAL(14, 2) AS amount, i % 100 AS qty, "
                    f"DATE '2020-01-01' + (i % 1000)::INT AS created, {DUCK_NOTE} AS note "
                    f"FROM range(1, {rows + 1}) AS t(i)"], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cli = shutil.which("duckdb") or str(Path(sys.executable).parent / "duckdb")
    ok = True
    with tempfile.TemporaryDirectory(prefix="nl2sql_bench_") as tmp:
        folder = Path(tmp)
        dbname = f"nl2sql_bench_{uuid.uuid4().hex[:8]}"
        duck_path, sqlite_path = folder / "bench.duckdb", folder / "bench.db"
        build_mysql(dbname, args.rows)
        build_duckdb(cli, duck_path, args.rows)
        build_sqlite(sqlite_path, args.rows)
        config = folder / "dbs.yaml"
        bounds = {"max_rows": 100_000_000, "query_timeout_seconds": 3600}
        config.write_text(json.dumps({"databases": {
            "bench_mysql": {"type": "mysql", "host": MY_HOST, "port": MY_PORT, "user": MY_USER,
                            "dbname": dbname, **bounds},
            "bench_duckdb": {"type": "duckdb", "path": str(duck_path), **bounds}}}))
        natives = {
            "bench_mysql": ("mariadb --batch", ["mariadb", "--batch", "-h", MY_HOST, "-P",
                                                str(MY_PORT), "-u", MY_USER, dbname, "-e", QUERY],
                            folder / "native_mysql.tsv"),
            "bench_duckdb": ("duckdb COPY", [cli, "-readonly", str(duck_path), "-c",
                                             f"COPY ({QUERY}) TO '{folder}/native_duck.csv' "
                                             f"(HEADER)"], None),
        }
        floor = [run_native(["sqlite3", "-csv", "-header", str(sqlite_path), QUERY],
                            folder / "floor.csv") for _ in range(args.repeat)]
        try:
            print(f"{'backend':<7} {'native':<16} {'native (s)':>10} {'ours (s)':>9} "
                  f"{'ratio':>6} {'vs sqlite3 -csv':>15}")
            for db_id, (label, command, stdout) in natives.items():
                native, ours = [], []
                for _ in range(args.repeat):
                    native.append(run_native(command, stdout))
                    child = run_child(config, db_id)
                    assert child["rows"] == args.rows, child
                    ours.append(child["seconds"])
                ratio = min(ours) / min(native)
                ok &= ratio <= 1.5
                print(f"{db_id.removeprefix('bench_'):<7} {label:<16} {min(native):>10.2f} "
                      f"{min(ours):>9.2f} {ratio:>6.2f} {min(ours) / min(floor):>15.2f}",
                      flush=True)
            print(f"sqlite3 -csv floor: {min(floor):.2f} s")
        finally:
            drop_mysql(dbname)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
