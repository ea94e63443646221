"""Implied foreign keys on a database that declares none (Chinook with its keys stripped, and a
small shop): inferred from names and types, confirmed by data, shown as comments, used for join
paths and db_get_row_by_id, and overridden by a per-database file that re-annotation keeps."""

from __future__ import annotations

import logging
import re
import sqlite3
from pathlib import Path

import pytest

import nl2sql
from nl2sql.schema.cache import load_db_info
from nl2sql.db.base import create_connection
from nl2sql.schema.formatting import format_schema
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.inspection.implied_keys import Link, infer_foreign_keys, overrides_path
from nl2sql.operations import OpsContext, db_get_row_by_id_op
from nl2sql.annotation.pipeline import annotate_database
from tests.conftest import SAMPLE_DATA, pg_config, sqlite_config
from tests.test_enums import captured_statements

_FK = re.compile(r",\s*FOREIGN KEY\s*\([^)]*\)\s*REFERENCES\s*\S+\s*\([^)]*\)"
                 r"(\s*ON (DELETE|UPDATE) NO ACTION)*", re.IGNORECASE)


def chinook_without_keys(path: Path) -> Path:
    source = sqlite3.connect(SAMPLE_DATA / "chinook" / "chinook.sqlite")
    statements = [sql for (sql,) in source.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL")]
    source.close()
    target = sqlite3.connect(path)
    for statement in statements:
        target.execute(_FK.sub("", statement))
    target.execute("ATTACH DATABASE ? AS src", (str(SAMPLE_DATA / "chinook" / "chinook.sqlite"),))
    for (name,) in target.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'"
                                  ).fetchall():
        target.execute(f'INSERT INTO main."{name}" SELECT * FROM src."{name}"')
    target.commit()
    target.execute("DETACH DATABASE src")
    target.close()
    return path


def test_chinook_without_declared_keys(tmp_path: Path, make_registry) -> None:  # noqa: ANN001
    config = sqlite_config("chinook", chinook_without_keys(tmp_path / "nofk.sqlite"))
    registry = make_registry(config)
    annotate_database(config, registry.data_dir)
    info = load_db_info(registry.data_dir, "chinook")
    implied = {(t.name, fk.columns[0], fk.referenced_table) for t in info.tables
               for fk in t.foreign_keys}
    assert {("Album", "ArtistId", "Artist"), ("Track", "AlbumId", "Album"),
            ("Track", "GenreId", "Genre"), ("InvoiceLine", "TrackId", "Track"),
            ("InvoiceLine", "InvoiceId", "Invoice"), ("Invoice", "CustomerId", "Customer"),
            ("PlaylistTrack", "PlaylistId", "Playlist")} <= implied
    fk = info.table("Album").foreign_keys[0]
    assert fk.model_extra["inferred"] is True and "sampled distinct values" in fk.model_extra[
        "evidence"]
    schema = format_schema(info)
    assert "-- implied FOREIGN KEY (ArtistId) REFERENCES Artist (ArtistId)" in schema
    assert "    FOREIGN KEY" not in schema  # not presented as declared DDL
    # the fingerprint ignores them: a re-run sees every table unchanged
    again = annotate_database(config, registry.data_dir)
    assert len(again.reused_tables) == len(info.tables)

    # join paths through implied keys
    ctx = nl2sql.context("List the songs by AC/DC", db_id="chinook", budget_tokens=700,
                         config=registry)
    kept = {t.name: t.reason for t in ctx.tables}
    assert {"Track", "Album", "Artist"} <= set(kept)
    assert "Employee" not in kept

    # db_get_row_by_id follows them
    row = db_get_row_by_id_op(OpsContext(registry), "chinook", "Album", 1)
    assert row.related["Artist"]["Name"] == "AC/DC"
    assert "implied" in row.related_via["Artist"]

    # overrides: remove one, confirm one the data cannot show; re-annotation keeps the file
    path = overrides_path(registry.data_dir, "chinook")
    assert "Album.ArtistId -> Artist.ArtistId" in path.read_text()
    path.write_text("confirm:\n  - Customer.SupportRepId -> Employee.EmployeeId\n"
                    "remove:\n  - Track.MediaTypeId -> MediaType.MediaTypeId\n")
    text = path.read_text()
    annotate_database(config, registry.data_dir)
    assert path.read_text() == text
    info = load_db_info(registry.data_dir, "chinook")
    pairs = {(t.name, fk.columns[0]) for t in info.tables for fk in t.foreign_keys}
    assert ("Track", "MediaTypeId") not in pairs and ("Customer", "SupportRepId") in pairs
    support = info.table("Customer").foreign_keys
    assert any("overrides file" in fk.model_extra["evidence"] for fk in support)


def test_names_alone_are_not_enough(tmp_path: Path) -> None:
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE stores (id INTEGER PRIMARY KEY, city TEXT);
            CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER,
                                 store_id INTEGER, region_id INTEGER, customer_name TEXT);
            CREATE TABLE audit_log (id INTEGER, note TEXT);  -- its own id, not declared
            INSERT INTO audit_log VALUES (1, 'created'), (2, 'paid');
            INSERT INTO customers VALUES (1, 'Ann'), (2, 'Bo'), (3, 'Cy');
            INSERT INTO stores VALUES (1, 'Oslo');
            INSERT INTO orders VALUES (1, 1, 7, 1, 'Ann'), (2, 3, 8, 2, 'Cy'),
                                      (3, 3, 9, 3, 'Cy'), (4, NULL, NULL, 4, NULL);
        """)
    conn.close()
    connection = create_connection(sqlite_config("shop", path))
    try:
        info = DbSchemaExtractor(connection).extract()
        with captured_statements(connection) as statements:
            links = infer_foreign_keys(connection, info)
    finally:
        connection.dispose()
    assert links == [Link("orders", "customer_id", "customers", "id")]
    # store_id names stores but its values are not there; region_id names no table;
    # audit_log.id is audit_log's own (its values 1, 2 are customers' ids too)
    assert len(statements) == 2 and all("LIMIT" in s for s in statements)


def test_a_view_calling_a_user_function_is_not_read_to_check_a_key(
        pg_database, caplog: pytest.LogCaptureFixture) -> None:  # noqa: ANN001
    """The check reads the view the way a sample or a query would, so it is refused the same
    way: the function (which could read files as its owner) never runs."""
    dbname = pg_database(script="""
        CREATE TABLE actor (actor_id integer PRIMARY KEY, name text);
        INSERT INTO actor SELECT g, 'a' || g FROM generate_series(1, 30) g;
        CREATE FUNCTION boom(i integer) RETURNS integer LANGUAGE plpgsql VOLATILE AS
            $$ BEGIN RAISE EXCEPTION 'boom ran on %', i; END $$;
        CREATE VIEW actor_boom AS SELECT actor_id, boom(actor_id) AS x FROM actor;
        CREATE TABLE film_actor (actor_id integer, film integer);
        INSERT INTO film_actor SELECT g, g FROM generate_series(1, 30) g;""")
    connection = create_connection(pg_config("cast", dbname))
    try:
        info = DbSchemaExtractor(connection).extract()
        with caplog.at_level(logging.WARNING, "nl2sql"):
            links = infer_foreign_keys(connection, info)
    finally:
        connection.dispose()
    assert links == [Link("film_actor", "actor_id", "actor", "actor_id")]
    assert "boom ran" not in caplog.text
    assert ("implied key actor_boom.actor_id -> actor.actor_id not checked: The query calls the "
            "user-defined function public.boom (through the view actor_boom)") in caplog.text


def test_an_implied_key_across_schemas_names_its_table_as_sql(pg_database,  # noqa: ANN001
                                                              make_registry) -> None:  # noqa: ANN001
    """With several schemas the referenced table is ``sales.customers``, each part quoted
    alone where it must be (the comment said ``"sales.customers"``: one name with a dot)."""
    dbname = pg_database(script="""
        CREATE SCHEMA sales; CREATE SCHEMA "Old Archive";
        CREATE TABLE sales.customers (id integer PRIMARY KEY, name text);
        INSERT INTO sales.customers SELECT g, 'c' || g FROM generate_series(1, 40) g;
        CREATE TABLE "Old Archive".orders (id integer PRIMARY KEY, customer_id integer);
        INSERT INTO "Old Archive".orders SELECT g, 1 + g % 40 FROM generate_series(1, 90) g;
        CREATE TABLE sales.refunds (id integer PRIMARY KEY, order_id integer);
        INSERT INTO sales.refunds SELECT g, g FROM generate_series(1, 20) g;""")
    registry = make_registry(pg_config("shop", dbname, schema=["sales", "Old Archive"]))
    annotate_database(registry.get("shop"), registry.data_dir)
    schema = format_schema(load_db_info(registry.data_dir, "shop"))
    assert ("-- implied FOREIGN KEY (customer_id) REFERENCES sales.customers (id)" in schema)
    assert ('-- implied FOREIGN KEY (order_id) REFERENCES "Old Archive".orders (id)' in schema)
