"""Cost of the Postgres page-write after-check (nl2sql/db/postgres_pages.py) per query.

Builds a throwaway database with ``--tables`` tables (each with a primary-key index, so the
catalogue holds about four relations per table), then times, on one connection:

- ``SELECT 1``: a round trip, for scale;
- the readings statement every call appends to its setup (max(pg_class.oid), the WAL insert
  position, no at-risk index): the price a login that owns no GIN/BRIN index pays;
- the at-risk list query (a pg_class scan), run once per pooled session and then only when a
  relation was created or after AT_RISK_TTL_SECONDS;
- a whole ``execute_select_query("SELECT 1")`` through the Postgres backend.

    .venv/bin/python bench/guard_page_check.py [--dsn "host=127.0.0.1 user=postgres"]
        [--tables 3000] [--repeat 300]
"""

from __future__ import annotations

import argparse
import uuid

import psycopg

from nl2sql.config.registry import DatabaseType, DbConnectionConfig
from nl2sql.db import postgres_pages
from nl2sql.db.base import create_connection, create_operations
from nl2sql.inspection import DbSchemaExtractor
from timing import DiscardingSink, median_ms  # bench/ is on sys.path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", default="host=127.0.0.1 port=5432 user=postgres")
    parser.add_argument("--tables", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    dbname = f"nl2sql_bench_pages_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{args.dsn} dbname=postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{dbname}"')
    try:
        with psycopg.connect(f"{args.dsn} dbname={dbname}", autocommit=True) as conn:
            for start in range(0, args.tables, 500):  # batches: lock table size
                conn.execute("".join(f"CREATE TABLE t{i} (a int PRIMARY KEY, b text);"
                                     for i in range(start, min(start + 500, args.tables))))
            relations = conn.execute("SELECT count(*) FROM pg_class").fetchone()[0]  # type: ignore[index]
            readings = postgres_pages.readings_statement({})
            rows = {
                "SELECT 1": median_ms(lambda: conn.execute("SELECT 1").fetchall(),
                                       args.repeat),
                "readings (every call)": median_ms(
                    lambda: conn.execute(readings).fetchall(), args.repeat),
                "at-risk list (per session, on change)": median_ms(
                    lambda: conn.execute(postgres_pages._AT_RISK).fetchall(), args.repeat),
            }
        params = dict(args.dsn.replace("=", " ").split()[i:i + 2]
                      for i in range(0, len(args.dsn.replace("=", " ").split()), 2))
        config = DbConnectionConfig(db_id="bench", type=DatabaseType.POSTGRES,
                                    host=params.get("host", "127.0.0.1"),
                                    port=int(params.get("port", 5432)),
                                    user=params.get("user", "postgres"), dbname=dbname)
        with create_connection(config) as connection:
            ops = create_operations(connection, DbSchemaExtractor(connection).extract("bench"))
            rows["execute_select_query('SELECT 1')"] = median_ms(
                lambda: ops.execute_select_query("SELECT 1", DiscardingSink()), args.repeat)
    finally:
        with psycopg.connect(f"{args.dsn} dbname=postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
    print(f"{relations} relations in pg_class; median of {args.repeat} runs")
    for name, ms in rows.items():
        print(f"  {name:<40} {ms:7.3f} ms")


if __name__ == "__main__":
    main()
