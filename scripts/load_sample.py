"""Load a SQLite sample database (Chinook, Northwind, bookstore) into MySQL/MariaDB or DuckDB.

The tables, keys, indexes and views are read from the SQLite file and translated with sqlglot;
rows are copied as they are. Names keep their SQLite spelling (``Album``, ``Order Details``),
so the same questions and catalog checks apply.

Examples:
    python scripts/load_sample.py chinook.sqlite --duckdb chinook.duckdb
    python scripts/load_sample.py chinook.sqlite --mysql chinook --host 127.0.0.1 --user root
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp


@dataclass
class SqliteSchema:
    """The objects of a SQLite database, tables in an order where every parent comes first."""

    tables: list[str] = field(default_factory=list)
    create: dict[str, str] = field(default_factory=dict)
    indexes: list[str] = field(default_factory=list)
    views: dict[str, str] = field(default_factory=dict)
    key_columns: set[tuple[str, str]] = field(default_factory=set)
    #: table -> (column, referenced column) of a foreign key to the table itself
    self_referencing: dict[str, tuple[str, str]] = field(default_factory=dict)


def read_schema(conn: sqlite3.Connection) -> SqliteSchema:
    schema = SqliteSchema()
    parents: dict[str, set[str]] = {}
    for kind, name, sql in conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"):
        if kind == "table":
            schema.create[name] = sql
            parents[name] = set()
            for column in conn.execute("SELECT name FROM pragma_table_info(?) WHERE pk > 0",
                                       (name,)):
                schema.key_columns.add((name, column[0]))
            for _id, _seq, table, source, target, *_ in conn.execute(
                    "SELECT * FROM pragma_foreign_key_list(?)", (name,)):
                parents[name].add(table)
                if table == name:
                    schema.self_referencing[name] = (source, target)
                schema.key_columns |= {(name, source), (table, target)}
            for (index,) in conn.execute("SELECT name FROM pragma_index_list(?)", (name,)):
                for (column,) in conn.execute("SELECT name FROM pragma_index_info(?)", (index,)):
                    schema.key_columns.add((name, column))
        elif kind == "index":
            schema.indexes.append(sql)
        elif kind == "view":
            schema.views[name] = sql
    done: set[str] = set()
    while len(done) < len(parents):  # parents first (self-references do not count)
        ready = sorted(t for t in parents if t not in done and parents[t] - {t} <= done)
        if not ready:  # a cycle: keep the remaining order
            ready = sorted(set(parents) - done)
        schema.tables += ready
        done |= set(ready)
    return schema


def translate(sql: str, dialect: str, table: str | None = None,
              key_columns: set[tuple[str, str]] | None = None) -> str:
    """One SQLite statement in ``dialect``; on MySQL, key columns typed TEXT get a length."""
    tree = sqlglot.parse_one(sql, read="sqlite")
    if dialect == "mysql" and table is not None:
        for definition in tree.find_all(exp.ColumnDef):
            kind = definition.args.get("kind")
            if kind is None:
                continue
            if (table, definition.name) in (key_columns or set()) \
                    and kind.this == exp.DataType.Type.TEXT:
                definition.set("kind", exp.DataType.build("VARCHAR(255)", dialect="mysql"))
            elif kind.this in (exp.DataType.Type.VARBINARY, exp.DataType.Type.BLOB) \
                    and not kind.expressions:
                definition.set("kind", exp.DataType.build("LONGBLOB", dialect="mysql"))
    if dialect == "duckdb":  # DuckDB has no AUTOINCREMENT: the copied ids are kept anyway
        for node in list(tree.find_all(exp.AutoIncrementColumnConstraint)):
            node.parent.pop()
        # ... and only NO ACTION/RESTRICT foreign keys (no CASCADE, SET NULL, SET DEFAULT).
        for reference in tree.find_all(exp.Reference):
            options = reference.args.get("options") or []
            reference.set("options", [o for o in options if o.upper().endswith(
                ("NO ACTION", "RESTRICT"))])
    return tree.sql(dialect=dialect)


def rows(conn: sqlite3.Connection, table: str, batch: int = 5000) -> Iterator[list[tuple]]:
    cursor = conn.execute(f'SELECT * FROM "{table}"')
    while chunk := cursor.fetchmany(batch):
        yield chunk


def _parents_first(frame: Any, column: str, referenced: str) -> list[Any]:
    parts, done = [], set()
    remaining = frame
    while not remaining.empty:
        ready = remaining[remaining[column].isna() | remaining[column].isin(done)]
        if ready.empty:  # a cycle or a dangling reference: let the database say so
            ready = remaining
        parts.append(ready)
        done |= set(ready[referenced])
        remaining = remaining.drop(ready.index)
    return parts


def create_views(execute: Any, views: list[str]) -> None:
    """Create views in an order where each comes after the views it reads."""
    pending = list(views)
    while pending:
        failed = []
        for sql in pending:
            try:
                execute(sql)
            except Exception:  # noqa: BLE001 - retried once its dependencies exist
                failed.append(sql)
        if len(failed) == len(pending):  # SQLite-only functions sqlglot cannot translate
            names = ", ".join(sql.split(" AS ", 1)[0].removeprefix("CREATE VIEW ")
                              for sql in failed)
            print(f"load_sample: skipped views that do not translate: {names}", file=sys.stderr)
            return
        pending = failed


def load_mysql(source: Path, target: Any) -> None:
    """Copy ``source`` into the (empty) database of the open PyMySQL connection ``target``."""
    conn = sqlite3.connect(source)
    schema = read_schema(conn)
    with target.cursor() as cursor:
        cursor.execute("SET SESSION FOREIGN_KEY_CHECKS = 0")
        cursor.execute("SET SESSION sql_mode = 'ANSI_QUOTES,NO_AUTO_VALUE_ON_ZERO'")
        for table in schema.tables:
            cursor.execute(translate(schema.create[table], "mysql", table, schema.key_columns))
        for sql in schema.indexes:
            cursor.execute(translate(sql, "mysql"))
        for table in schema.tables:
            for chunk in rows(conn, table):
                marks = ", ".join(["%s"] * len(chunk[0]))
                cursor.executemany(f'INSERT INTO "{table}" VALUES ({marks})', chunk)
        create_views(cursor.execute, [translate(sql, "mysql") for sql in schema.views.values()])
        cursor.execute("SET SESSION FOREIGN_KEY_CHECKS = 1")
    target.commit()
    conn.close()


def load_duckdb(source: Path, target: Any) -> None:
    """Copy ``source`` into the open DuckDB connection ``target`` (parents first: DuckDB
    checks foreign keys on insert)."""
    import pandas as pd

    conn = sqlite3.connect(source)
    schema = read_schema(conn)
    for table in schema.tables:
        target.execute(translate(schema.create[table], "duckdb"))
    for table in schema.tables:
        frame = pd.read_sql_query(f'SELECT * FROM "{table}"', conn)
        # A table referencing itself is checked against its rows before the statement:
        # insert it in rounds, each row after the row it references.
        parts = (_parents_first(frame, *schema.self_referencing[table])
                 if table in schema.self_referencing else [frame])
        for part in parts:
            if part.empty:
                continue
            target.register("nl2sql_rows", part)
            target.execute(f'INSERT INTO "{table}" SELECT * FROM nl2sql_rows')
            target.unregister("nl2sql_rows")
    for sql in schema.indexes:
        target.execute(translate(sql, "duckdb"))
    create_views(target.execute, [translate(sql, "duckdb") for sql in schema.views.values()])
    conn.close()


def main(argv: list[str] | None = None) -> int:
    """Copy a SQLite sample into a DuckDB file or a new MySQL/MariaDB database.

    Example: python scripts/load_sample.py chinook.sqlite --duckdb chinook.duckdb
    """
    parser = argparse.ArgumentParser(description=main.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="the SQLite file")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--duckdb", type=Path, help="DuckDB file to create")
    target.add_argument("--mysql", help="MySQL/MariaDB database to create")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3306)
    parser.add_argument("--user", default="root")
    parser.add_argument("--password", default="")
    args = parser.parse_args(argv)
    if args.duckdb:
        import duckdb

        with duckdb.connect(str(args.duckdb)) as db:
            load_duckdb(args.source, db)
    else:
        import pymysql

        server = pymysql.connect(host=args.host, port=args.port, user=args.user,
                                 password=args.password)
        with server.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE `{args.mysql}` CHARACTER SET utf8mb4")
        server.select_db(args.mysql)
        load_mysql(args.source, server)
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
