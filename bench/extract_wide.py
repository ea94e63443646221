"""Benchmark: schema extraction on a wide Postgres schema against ``pg_dump --schema-only``.

Creates a throwaway database with N tables (10 columns, a foreign key, an index, a table
comment and a column comment each), times ``DbSchemaExtractor.extract`` and
``pg_dump --schema-only`` on it in the same run (best of ``--repeat``, the two alternating),
prints both and the ratio, and drops the database.

    .venv/bin/python bench/extract_wide.py [--tables 1000] [--repeat 5] [--profile]

Connection: NL2SQL_TEST_PG_HOST / _PORT / _USER (default 127.0.0.1:5432, postgres), the
same variables the test suite uses; the user must be allowed to create databases.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql

from nl2sql.config.registry import DatabaseType, DbConnectionConfig
from nl2sql.db.base import create_connection
from nl2sql.inspection import DbSchemaExtractor

HOST = os.environ.get("NL2SQL_TEST_PG_HOST", "127.0.0.1")
PORT = int(os.environ.get("NL2SQL_TEST_PG_PORT", "5432"))
USER = os.environ.get("NL2SQL_TEST_PG_USER", "postgres")
TARGET_RATIO = 1.0  # issue 14: extraction keeps pace with pg_dump (measured at 5,000 tables)
SETUP_BATCH = 250


def admin(dbname: str = "postgres") -> psycopg.Connection:
    return psycopg.connect(host=HOST, port=PORT, user=USER, dbname=dbname, autocommit=True)


def wide_schema_script(tables: int, first: int = 0, count: int | None = None) -> str:
    """DDL for tables ``first`` .. ``first + count - 1`` of ``tables``; table i references
    table i-1 (table 0 references itself)."""
    statements = []
    for i in range(first, min(tables, first + (count or tables))):
        name, parent = f"t{i:04d}", f"t{max(i - 1, 0):04d}"
        statements.append(f"""
CREATE TABLE {name} (
    id bigserial PRIMARY KEY,
    parent_id bigint REFERENCES {parent} (id) ON DELETE CASCADE,
    code varchar(32) NOT NULL,
    title varchar(200),
    amount numeric(12, 2) DEFAULT 0,
    quantity integer,
    created_at timestamptz NOT NULL DEFAULT now(),
    is_active boolean DEFAULT true,
    notes text,
    ratio double precision
);
CREATE INDEX {name}_code_idx ON {name} (code);
COMMENT ON TABLE {name} IS 'Wide benchmark table {i}';
COMMENT ON COLUMN {name}.code IS 'Business code of row in table {i}';""")
    return "\n".join(statements)


def times_interleaved(repeat: int, *runs: Callable[[], object]) -> list[list[float]]:
    """All times of each run; runs alternate, so a change in machine load hits all alike."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeat):
        for i, run in enumerate(runs):
            start = time.perf_counter()
            run()
            times[i].append(time.perf_counter() - start)
    return times


def best_of_interleaved(repeat: int, *runs: Callable[[], object]) -> list[float]:
    """Best time of each run (``times_interleaved``)."""
    return [min(times) for times in times_interleaved(repeat, *runs)]


@contextmanager
def wide_database(tables: int, *, extra: str | None = None,
                  analyze: bool = True) -> Iterator[tuple[str, float]]:
    """A throwaway database holding the wide schema (plus ``extra`` SQL, e.g. rows), as
    ``(name, set-up seconds)``; dropped on exit."""
    dbname = f"nl2sql_bench_{uuid.uuid4().hex[:8]}"
    with admin() as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    try:
        start = time.perf_counter()
        with admin(dbname) as conn:
            # Batches: one transaction for thousands of tables runs out of lock slots.
            for first in range(0, tables, SETUP_BATCH):
                conn.execute(wide_schema_script(tables, first, SETUP_BATCH))
            if extra:
                conn.execute(extra)
            if analyze:
                conn.execute("ANALYZE")
        yield dbname, time.perf_counter() - start
    finally:
        with admin() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(dbname)))


def extract(dbname: str) -> int:
    config = DbConnectionConfig(db_id="wide", type=DatabaseType.POSTGRES, host=HOST, port=PORT,
                                user=USER, dbname=dbname)
    with create_connection(config) as connection:  # a fresh engine: pg_dump connects too
        info = DbSchemaExtractor(connection).extract()
    return len(info.tables)


def pg_dump(dbname: str) -> None:
    subprocess.run(["pg_dump", "--schema-only", "-h", HOST, "-p", str(PORT), "-U", USER,
                    "-d", dbname], check=True, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true",
                        help="print the top cProfile entries of one extraction")
    parser.add_argument("--target", type=float, default=TARGET_RATIO,
                        help=f"exit 1 above this ratio (default {TARGET_RATIO})")
    args = parser.parse_args(argv)
    if shutil.which("pg_dump") is None:
        print("pg_dump is not on PATH; install the PostgreSQL client tools.", file=sys.stderr)
        return 2

    with wide_database(args.tables) as (dbname, setup):
        found = extract(dbname)  # warm-up (imports, server caches) and a sanity check
        assert found == args.tables, f"extracted {found} tables, expected {args.tables}"
        extract_s, dump_s = best_of_interleaved(
            args.repeat, lambda: extract(dbname), lambda: pg_dump(dbname))
        if args.profile:
            profiler = cProfile.Profile()
            profiler.runcall(extract, dbname)
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(25)

    ratio = extract_s / dump_s
    print(f"wide schema: {args.tables} tables x 10 columns (setup {setup:.1f}s), "
          f"best of {args.repeat}")
    print(f"{'what':<32}{'seconds':>10}")
    print(f"{'DbSchemaExtractor.extract':<32}{extract_s:>10.3f}")
    print(f"{'pg_dump --schema-only':<32}{dump_s:>10.3f}")
    verdict = "OK" if ratio <= args.target else "TOO SLOW"
    load = os.getloadavg()
    print(f"{'ratio extract / pg_dump':<32}{ratio:>10.2f}  (target <= {args.target}: {verdict}); "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0 if ratio <= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
