"""DbOperations and the row ops on real databases: primary keys (composite too), foreign keys
followed one level, identifiers checked against the cached schema before any SQL runs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy import event

from nl2sql.schema.cache import save_db_info
from nl2sql.errors import QueryExecutionError, QueryRejectedError, UnknownTableError
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_get_row_by_id_op


class ListSink:
    """Collects rows, remembering each batch's size (tests only; results here are small)."""

    def __init__(self) -> None:
        self.rows: list[Sequence[Any]] = []
        self.batches: list[int] = []

    def begin(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.batches.append(len(rows))
        self.rows.extend(rows)


def _ctx(make_registry, *configs, db_ids=()) -> OpsContext:
    ctx = OpsContext(make_registry(*configs))
    for db_id in [c.db_id for c in configs] + list(db_ids):
        save_db_info(DbSchemaExtractor(ctx.connection(db_id)).extract(db_id), ctx.data_dir)
    return ctx


@pytest.fixture
def chinook_ctx(chinook, make_registry) -> OpsContext:
    return _ctx(make_registry, chinook.config)


def test_single_column_key_as_number_or_string(chinook, chinook_ctx) -> None:
    ops = chinook_ctx.operations("chinook")
    first = ops.fetch_row_by_id(chinook.table("track"), 1)
    assert first is not None and first[_col(ops, "track", "name")] == \
        "For Those About To Rock (We Salute You)"
    assert ops.fetch_row_by_id(chinook.table("track"), "1") == first
    assert ops.fetch_row_by_id(chinook.table("track"), 999999) is None


def _col(ops, table: str, logical: str) -> str:
    """The backend's spelling of a column (Chinook: PascalCase on SQLite, snake on Postgres)."""
    names = {c.name.lower().replace("_", ""): c.name for t in ops.db_info.tables
             for c in t.columns if t.name.lower().replace("_", "") == table.replace("_", "")}
    return names[logical.replace("_", "")]


def test_composite_key_in_every_accepted_form(chinook, chinook_ctx) -> None:
    ops = chinook_ctx.operations("chinook")
    table = chinook.table("playlist_track")
    pk = ops.db_info.table(table).primary_key
    assert len(pk) == 2
    as_dict = {pk[0]: 1, pk[1]: 3402}
    expected = ops.fetch_row_by_id(table, as_dict)
    assert expected == as_dict
    for form in ([1, 3402], json.dumps(as_dict), json.dumps([1, 3402]),
                 {pk[1]: 3402, pk[0]: "1"}):
        assert ops.fetch_row_by_id(table, form) == expected


@pytest.mark.parametrize("row_id", [1, [1], [1, 2, 3], "[1]", {"nope": 1, "other": 2}])
def test_wrong_key_shape_names_the_key_columns(chinook, chinook_ctx, row_id) -> None:
    ops = chinook_ctx.operations("chinook")
    table = chinook.table("playlist_track")
    pk = ops.db_info.table(table).primary_key
    with pytest.raises(UnknownTableError) as raised:
        ops.fetch_row_by_id(table, row_id)
    message = str(raised.value)
    assert "\n" not in message
    assert pk[0] in message and pk[1] in message or "nope" in message


def test_unknown_names_are_refused_before_any_sql(chinook, chinook_ctx) -> None:
    ops = chinook_ctx.operations("chinook")
    statements: list[str] = []
    event.listen(ops.connection.engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *args: statements.append(statement))
    track = chinook.table("track")
    attempts = [
        lambda: ops.fetch_row_by_id("Trak", 1),
        lambda: ops.fetch_row_by_id(f'{track}"; DROP TABLE x; --', 1),
        lambda: ops.fetch_related_row(track, "nope", 1),
        lambda: ops.fetch_related_row(track, 'name" = 1 OR "1', 1),
        lambda: db_get_row_by_id_op(chinook_ctx, "chinook", "nosuch", 1),
    ]
    for attempt in attempts:
        with pytest.raises(UnknownTableError) as raised:
            attempt()
        assert "\n" not in str(raised.value)
    with pytest.raises(UnknownTableError, match="did you mean"):
        ops.fetch_row_by_id("Trak" if chinook.backend == "sqlite" else "trak", 1)
    assert statements == []
    ops.fetch_row_by_id(track, 1)
    assert len(statements) >= 1  # the listener does see real lookups


def test_row_op_follows_outbound_foreign_keys(chinook, chinook_ctx) -> None:
    result = db_get_row_by_id_op(chinook_ctx, "chinook", chinook.table("track"), 1)
    assert result.found and result.row is not None
    assert set(result.related) == {chinook.table(t) for t in ("album", "media_type", "genre")}
    album = result.related[chinook.table("album")]
    assert album is not None and "For Those About To Rock We Salute You" in album.values()
    text = result.render()
    assert "Related rows" in text and "For Those About To Rock We Salute You" in text
    bare = db_get_row_by_id_op(chinook_ctx, "chinook", chinook.table("track"), 1,
                               follow_foreign_keys=False)
    assert bare.related == {} and bare.row == result.row
    missing = db_get_row_by_id_op(chinook_ctx, "chinook", chinook.table("track"), 999999)
    assert not missing.found and missing.render().startswith("No row in")


def test_bookstore_composite_keys_and_composite_foreign_key(make_registry) -> None:
    ctx = _ctx(make_registry, db_ids=["bookstore"])
    item = db_get_row_by_id_op(ctx, "bookstore", "order_items", '{"order_id": 1, "line_no": 1}')
    assert item.found and item.row_id == {"order_id": 1, "line_no": 1}
    assert set(item.related) == {"orders", "books"}
    assert item.related["orders"]["order_id"] == 1  # type: ignore[index]
    assert item.related["books"]["book_id"] == item.row["book_id"]  # type: ignore[index]
    with sqlite3.connect(ctx.config("bookstore").path) as conn:  # type: ignore[arg-type]
        return_id, order_id, line_no = conn.execute(
            "SELECT return_id, order_id, line_no FROM returns ORDER BY return_id").fetchone()
    conn.close()
    returned = db_get_row_by_id_op(ctx, "bookstore", "returns", return_id)
    line = returned.related["order_items"]
    assert line is not None and (line["order_id"], line["line_no"]) == (order_id, line_no)
    with pytest.raises(UnknownTableError, match=r"\(order_id, line_no\)"):
        db_get_row_by_id_op(ctx, "bookstore", "order_items", 1)


def test_northwind_text_key_and_table_name_with_space(northwind, make_registry) -> None:
    ctx = _ctx(make_registry, northwind.config)
    ops = ctx.operations("northwind")
    customer = ops.fetch_row_by_id(northwind.table("customers"), "ALFKI")
    assert customer is not None and "Alfreds Futterkiste" in customer.values()
    details = db_get_row_by_id_op(ctx, "northwind", northwind.table("order_details"),
                                  [10248, 11])
    assert details.found
    assert {northwind.table("orders"), northwind.table("products")} <= set(details.related)


def test_rows_stream_in_batches_with_the_row_cap(chinook, chinook_ctx) -> None:
    ops = chinook_ctx.operations("chinook")
    query = f'SELECT * FROM "{chinook.table("track")}"'
    sink = ListSink()
    stats = ops.execute_select_query(query, sink, max_rows=5000)
    assert stats.row_count == len(sink.rows) == 3503 and not stats.truncated
    assert max(sink.batches) <= ops.batch_size and len(stats.columns) == 9
    capped = ListSink()
    stats = ops.execute_select_query(query, capped, max_rows=100)
    assert stats.truncated and stats.row_count == len(capped.rows) == 100
    empty = ListSink()
    stats = ops.execute_select_query(query + " WHERE 1 = 0", empty)
    assert stats.row_count == 0 and len(empty.columns) == 9


def test_strings_go_through_the_parser_guard_by_default(chinook, chinook_ctx) -> None:
    ops = chinook_ctx.operations("chinook")
    with pytest.raises(QueryRejectedError):
        ops.execute_select_query(f'DELETE FROM "{chinook.table("track")}"', ListSink())


def test_database_errors_are_one_line_with_the_line_number(chinook, chinook_ctx) -> None:
    ops = chinook_ctx.operations("chinook")
    with pytest.raises(QueryExecutionError) as raised:
        ops.execute_select_query(f'SELECT 1\nFROM "{chinook.table("track")}"\nWHERE nosuch = 1',
                                 ListSink())
    message = str(raised.value)
    assert "nosuch" in message and "\n" not in message
    if chinook.backend == "postgres":
        assert "(line 3)" in message


@pytest.mark.parametrize("sink", [ListSink, lambda: CountingCsvSink()])
def test_database_errors_keep_the_engines_hint(chinook, chinook_ctx, sink) -> None:
    """Postgres' HINT names the fix ("Perhaps you meant ... genre.name"); SQLite gives none."""
    ops = chinook_ctx.operations("chinook")
    genre = chinook.table("genre")
    with pytest.raises(QueryExecutionError) as raised:
        ops.execute_select_query(f'SELECT "{genre}".nme FROM "{genre}"', sink())
    message = str(raised.value)
    assert "\n" not in message and message.endswith("fix the SQL and try again.")
    if chinook.backend == "postgres":
        assert f'hint: Perhaps you meant to reference the column "{genre}.name"' in message
    else:
        assert "hint" not in message.lower()


class CountingCsvSink(ListSink):
    """Takes ready CSV records too (the Postgres COPY branch); keeps counts only."""

    def write_csv_records(self, records: Sequence[bytes]) -> None:
        self.batches.append(len(records))
        assert all(bytes(r).endswith(b"\n") for r in records)


@pytest.mark.parametrize("max_rows", [1, 1999, 2000, 2001, 3502, 3503, 3504])
def test_row_cap_at_batch_boundaries(chinook, chinook_ctx, max_rows) -> None:
    ops = chinook_ctx.operations("chinook")
    sink = CountingCsvSink()
    stats = ops.execute_select_query(f'SELECT * FROM "{chinook.table("track")}"', sink,
                                     max_rows=max_rows)
    assert stats.row_count == sum(sink.batches) == min(max_rows, 3503)
    assert stats.truncated == (max_rows < 3503)


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)  # the pool choice is SQLite's
def test_many_threads_share_one_sqlite_database(chinook, chinook_ctx) -> None:
    """16 threads at once: each query gets a connection of its own (SQLAlchemy's default pool
    for a creator-made SQLite engine closed connections in use by other threads: segfault)."""
    import threading

    ops = chinook_ctx.operations("chinook")
    errors: list[BaseException] = []
    counts: list[int] = []

    def client(i: int) -> None:
        try:
            for j in range(20):
                sink = ListSink()
                stats = ops.execute_select_query(
                    f'SELECT * FROM "Track" WHERE "TrackId" <= {i * 20 + j + 1}', sink)
                counts.append(stats.row_count - (i * 20 + j + 1))
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(counts) == 320 and set(counts) == {0}


@pytest.mark.postgres
def test_a_row_by_id_shows_values_as_a_result_does(make_db: Any, make_registry: Any) -> None:
    """A numeric with its scale, an array and a JSON value read as in a query's preview and CSV
    (``7.5``, ``["a", "b"]``, ``{"k": 5}``), not as Python writes them (``7.50``, ``['a',
    'b']``, ``{'k': 5}``)."""
    from conftest import build_cache

    db = make_db("postgres", "rowvalues", script=(
        "CREATE TABLE item (id int PRIMARY KEY, amount numeric(12,2), tags text[], data jsonb,"
        " note text, seen boolean, raw bytea, big bytea);"
        "INSERT INTO item VALUES (5, 7.50, ARRAY['a','b'], '{\"k\": 5}', 'two\nlines', NULL,"
        " '\\xaa00', decode(repeat('ff', 40), 'hex'));"))
    registry = make_registry(db.config)
    build_cache(db.config, registry.data_dir)
    ops = OpsContext(registry)
    try:
        text = db_get_row_by_id_op(ops, "rowvalues", "item", 5).render()
    finally:
        ops.close()
    assert text.splitlines()[1:] == ["  id: 5", "  amount: 7.5", '  tags: ["a", "b"]',
                                     '  data: {"k": 5}', "  note: two\\nlines", "  seen: NULL",
                                     "  raw: \\xaa00", f"  big: \\x{'ff' * 32}… (40 bytes)"]
