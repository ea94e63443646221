"""Per-call cost of knowing the catalogue's user-defined functions exactly (issue 24 item 4).

Every query reads the catalogue's version (nl2sql/db/postgres.py and mysql.py,
``_CATALOGUE_VERSION``) and reads the catalogue again only when it moved. Builds a throwaway
PostgreSQL and MariaDB database with ``--functions`` user functions and as many views (each
calling one), then times on one warm connection, median of ``--repeat``:

- the version statement alone (on PostgreSQL it rides in the transaction's setup round trip;
  on MariaDB it is one more statement in the query's own transaction);
- the full read of the catalogue (what a moved version costs, once);
- a whole ``execute_select_query("SELECT id FROM t WHERE id = 1")`` through the backend;
- on MariaDB, the same through two levels of plain views (``pv2`` over ``pv1`` over ``t``),
  and with three built-in calls (``abs``, ``round``, ``concat``: bare names are looked up).

On MariaDB there is no version any more: each call looks up, by exact name, only what it
reaches (nl2sql/db/mysql_reach.py): one round trip per level of views.

Run it on this code and on the code before (``PYTHONPATH=<other checkout>``): the script uses
only what both have, and skips the version statement where there is none.

    PYTHONPATH=. .venv/bin/python bench/catalogue_version.py [--functions 1000] [--repeat 300]
        [--only postgres|mariadb]
"""

from __future__ import annotations

import argparse
import uuid

import MySQLdb
import psycopg

from nl2sql.config.registry import DatabaseType, DbConnectionConfig
from nl2sql.db import mysql as mysql_backend
from nl2sql.db import postgres as postgres_backend
from nl2sql.db.base import create_connection, create_operations
from nl2sql.schema.models import DbInfo
from timing import DiscardingSink, median_ms  # bench/ is on sys.path


def _measure(config: DbConnectionConfig, version_sql: str | None, repeat: int, *,
             views: bool = False) -> None:
    connection = create_connection(config)
    ops = create_operations(connection, DbInfo(db_id=config.db_id, db_type=config.type.value))
    try:
        with connection.connect() as conn:
            if version_sql:
                print(f"  version statement    {median_ms(lambda: conn.exec_driver_sql(version_sql).all(), repeat):8.3f} ms")
            print(f"  SELECT 1 (for scale) {median_ms(lambda: conn.exec_driver_sql('SELECT 1').all(), repeat):8.3f} ms")
        print(f"  full catalogue read  {median_ms(connection.read_user_functions, max(5, repeat // 20)):8.3f} ms")
        query = "SELECT id FROM t WHERE id = 1"
        print(f"  whole query          {median_ms(lambda: ops.execute_select_query(query, DiscardingSink()), repeat):8.3f} ms")
        if views:
            over = "SELECT id FROM pv2 WHERE id = 1"
            print(f"  whole query, 2 views {median_ms(lambda: ops.execute_select_query(over, DiscardingSink()), repeat):8.3f} ms")
            calls = "SELECT abs(id), round(id), concat(id, 'x') FROM t WHERE id = 1"
            print(f"  whole query, 3 calls {median_ms(lambda: ops.execute_select_query(calls, DiscardingSink()), repeat):8.3f} ms")
    finally:
        connection.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--only", choices=("postgres", "mariadb"))
    args = parser.parse_args()
    if args.only != "mariadb":
        _postgres(args.functions, args.repeat)
    if args.only != "postgres":
        _mariadb(args.functions, args.repeat)


def _postgres(n: int, repeat: int) -> None:
    dbname = f"nl2sql_bench_fresh_{uuid.uuid4().hex[:8]}"
    with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                         autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {dbname}")
    try:
        with psycopg.connect(f"host=127.0.0.1 port=5432 user=postgres dbname={dbname}",
                             autocommit=True) as pg:
            pg.execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)")
            pg.execute(f"""DO $$ BEGIN FOR i IN 1..{n} LOOP
              EXECUTE format('CREATE FUNCTION f%s(x int) RETURNS int LANGUAGE sql
                              AS $b$ SELECT x + %s $b$', i, i);
              EXECUTE format('CREATE VIEW v%s AS SELECT f%s(id) AS y FROM t', i, i);
            END LOOP; END $$""")
        print(f"PostgreSQL, {n} functions and {n} views:")
        _measure(DbConnectionConfig(db_id="pg", type=DatabaseType.POSTGRES, host="127.0.0.1",
                                    port=5432, user="postgres", dbname=dbname),
                 getattr(postgres_backend, "_CATALOGUE_VERSION", None), repeat)
    finally:
        with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                             autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {dbname}")


def _mariadb(n: int, repeat: int) -> None:
    dbname = f"nl2sql_bench_fresh_{uuid.uuid4().hex[:8]}"
    my = MySQLdb.connect(host="127.0.0.1", port=3306, user="root")
    try:
        with my.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE `{dbname}`")
            cursor.execute(f"USE `{dbname}`")
            cursor.execute("CREATE TABLE t (id int PRIMARY KEY)")
            cursor.execute("INSERT INTO t VALUES (1)")
            cursor.execute("CREATE VIEW pv1 AS SELECT id FROM t")
            cursor.execute("CREATE VIEW pv2 AS SELECT id FROM pv1")
            for i in range(1, n + 1):
                cursor.execute(f"CREATE FUNCTION f{i}(x int) RETURNS int DETERMINISTIC "
                               f"RETURN x + {i}")
                cursor.execute(f"CREATE VIEW v{i} AS SELECT f{i}(id) AS y FROM t")
        my.commit()
        print(f"MariaDB, {n} functions and {n} views:")
        version = getattr(mysql_backend, "_CATALOGUE_VERSION", None)
        _measure(DbConnectionConfig(db_id="my", type=DatabaseType.MYSQL, host="127.0.0.1",
                                    port=3306, user="root", dbname=dbname),
                 version, repeat, views=True)
    finally:
        with my.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{dbname}`")
        my.close()


if __name__ == "__main__":
    main()
