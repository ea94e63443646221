"""Cost of PostgreSQL's user-function catalogue read and of the check of one query against it.

Builds a throwaway database with ``--tables`` tables of 10 columns and a view over every 10th,
plus (``--traps``) a user enum with a user cast and a user ``=`` operator, used by a column of
every 10th table; then times, median of ``--repeat``:

- ``read_user_functions()`` (the catalogue read, one round trip; run again in the background
  every minute);
- the check of one query against that read (``query_admission``: after the guard, before
  the query runs; the read at an unchanged catalogue version is served from memory).

Run it with ``PYTHONPATH`` on another checkout to compare code versions.

    .venv/bin/python bench/pg_user_functions_read.py [--tables 1000] [--repeat 20] [--traps]
"""

from __future__ import annotations

import argparse
import uuid

import psycopg

from nl2sql.config.registry import DatabaseType, DbConnectionConfig
from nl2sql.db.base import create_connection
from nl2sql.errors import QueryRejectedError
from nl2sql.sql_guard import validate_read_only
from timing import median_ms  # bench/ is on sys.path

DSN = "host=127.0.0.1 port=5432 user=postgres"
TRAPS = """
CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE FUNCTION mood_text(m mood) RETURNS text LANGUAGE sql AS $$ SELECT 'x' $$;
CREATE CAST (mood AS text) WITH FUNCTION mood_text(mood);
CREATE FUNCTION mood_eq(a mood, b mood) RETURNS bool LANGUAGE sql AS $$ SELECT true $$;
CREATE OPERATOR public.= (leftarg = mood, rightarg = mood, function = mood_eq);
"""
QUERY = ("SELECT a.c1, b.c2 FROM t1 a JOIN t2 b ON a.c1 = b.c1 WHERE a.c3 LIKE 'x%' "
         "AND b.c4 IN ('a', 'b') ORDER BY 1 LIMIT 10")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--traps", action="store_true")
    args = parser.parse_args()
    dbname = f"nl2sql_bench_ufn_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{DSN} dbname=postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{dbname}"')
    try:
        with psycopg.connect(f"{DSN} dbname={dbname}", autocommit=True) as conn:
            if args.traps:
                conn.execute(TRAPS)
            columns = ", ".join(f"c{j} text" for j in range(1, 10))
            for start in range(0, args.tables, 200):  # batches: lock table size
                conn.execute("".join(
                    f"CREATE TABLE t{i} (id int PRIMARY KEY, {columns}"
                    f"{', m mood' if args.traps and i % 10 == 0 else ''});"
                    + (f"CREATE VIEW v{i} AS SELECT * FROM t{i};" if i % 10 == 0 else "")
                    for i in range(start, min(start + 200, args.tables))))
        config = DbConnectionConfig(db_id="bench", type=DatabaseType.POSTGRES, host="127.0.0.1",
                                    port=5432, user="postgres", dbname=dbname)
        connection = create_connection(config)
        try:
            read = median_ms(connection.read_user_functions, args.repeat, warm_up=1)
            query = validate_read_only(QUERY, "postgres")
            functions = connection.user_functions()
            verdict = []

            def check_query() -> None:
                try:
                    connection.query_admission(query)(functions)
                    verdict.append("allowed")
                except QueryRejectedError:
                    verdict.append("refused")

            check = median_ms(check_query, args.repeat * 50, warm_up=1)
        finally:
            connection.dispose()
        print(f"tables {args.tables}, traps {args.traps}: catalogue read {read:.1f} ms, "
              f"check of one query {check * 1000:.0f} us ({verdict[-1]})")
    finally:
        with psycopg.connect(f"{DSN} dbname=postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{dbname}" WITH (FORCE)')


if __name__ == "__main__":
    main()
