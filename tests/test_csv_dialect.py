"""One CSV dialect for every backend (nl2sql.workspace.csv_dialect): the same edge-case values give the same
bytes from SQLite (Python rows through csv.writer) and PostgreSQL (the server's COPY), long
values round-trip, and previews cut long cells visibly."""

from __future__ import annotations

import csv
import json
import math
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal

import psycopg
import pytest

from nl2sql.schema.cache import save_db_info
from nl2sql.workspace.csv_dialect import CsvRowFormatter, float_text, format_record, format_value
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.csv_files import csv_head_op, csv_tail_op
from nl2sql.operations.queries import db_execute_sql_op

LONG = "long " * 40_000  # 200,000 characters: over the csv module's default field limit
EDGE_ROWS = [  # id, txt, num (float), bin (bytes), doc (JSON text), day (date text)
    (1, None, None, None, None, None),
    (2, "", 1.0, b"", '{"a": [1, null], "b": "x"}', "2024-01-31"),
    (3, "a,b", 0.25, b"\x00\xff\x10", "[]", "1999-12-31"),
    (4, 'quote " here', 1e15, b"plain", '{"k": "line\\nbreak"}', None),
    (5, "new\nline", 1.5e-07, None, None, "2024-02-29"),
    (6, "carriage\rreturn", 123456789012345.6, b"'", None, None),
    (7, " spaced ", -3.5, None, None, None),
    (8, "\\.", float("inf"), None, None, None),
    (9, "unicode ✓ café 日本 🎵", 1234567890123456.8, None, None, None),
    (10, LONG, 1e100, None, None, None),
    (11, "b'not bytes'", 100000000000000.0, None, None, None),
]
EDGE_QUERY = "SELECT id, txt, num, bin, doc, day FROM edge ORDER BY id"


EDGE_TABLE = {
    "sqlite": "CREATE TABLE edge (id INTEGER PRIMARY KEY, txt TEXT, num REAL, bin BLOB, "
              "doc TEXT, day TEXT)",
    "postgres": "CREATE TABLE edge (id integer PRIMARY KEY, txt text, num float8, bin bytea, "
                "doc json, day date)",
}


@pytest.fixture(params=list(EDGE_TABLE))
def edge(request: pytest.FixtureRequest, make_db, make_registry) -> OpsContext:
    db = make_db(request.param, "edge", script=EDGE_TABLE[request.param])
    db.insert("edge", EDGE_ROWS)
    ctx = OpsContext(make_registry(db.config))
    save_db_info(DbSchemaExtractor(ctx.connection("edge")).extract("edge"), ctx.data_dir)
    return ctx


EXPECTED_EDGE_CSV = "".join([
    "id,txt,num,bin,doc,day\n",
    "1,,,,,\n",
    '2,"",1,\\x,"{""a"": [1, null], ""b"": ""x""}",2024-01-31\n',
    '3,"a,b",0.25,\\x00ff10,[],1999-12-31\n',
    '4,"quote "" here",1e+15,\\x706c61696e,"{""k"": ""line\\nbreak""}",\n',
    '5,"new\nline",1.5e-07,,,2024-02-29\n',
    '6,"carriage\rreturn",123456789012345.6,\\x27,,\n',
    "7, spaced ,-3.5,,,\n",
    "8,\\.,Infinity,,,\n",
    "9,unicode ✓ café 日本 🎵,1.2345678901234568e+15,,,\n",
    f"10,{LONG},1e+100,,,\n",
    "11,b'not bytes',100000000000000,,,\n",
])


def test_every_backend_writes_the_documented_dialect(edge: OpsContext) -> None:
    """NULL empty, '' quoted, bytes as \\x hex, JSON as JSON, floats as Postgres writes them,
    quotes only where needed: byte for byte the same file from SQLite and from COPY."""
    result = db_execute_sql_op(edge, "edge", EDGE_QUERY, output_file="edge.csv")
    data = (edge.workspace / "edge.csv").read_bytes()
    assert data.decode("utf-8") == EXPECTED_EDGE_CSV
    assert result.row_count == len(EDGE_ROWS) and not result.truncated


def test_one_column_null_empty_and_end_marker(edge: OpsContext) -> None:
    db_execute_sql_op(edge, "edge", "SELECT txt FROM edge WHERE id IN (1, 2, 8) ORDER BY id",
                      output_file="one.csv")
    assert (edge.workspace / "one.csv").read_text() == 'txt\n\n""\n"\\."\n'


def test_long_values_round_trip_and_are_cut_visibly(edge: OpsContext) -> None:
    result = db_execute_sql_op(edge, "edge", "SELECT id, txt FROM edge WHERE id >= 9 ORDER BY id",
                               output_file="long.csv")
    with (edge.workspace / "long.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[2] == ["10", LONG]  # over 131,072 characters: read back whole
    assert "cut (marked …)" in result.render() and LONG not in result.render()
    for op in (csv_head_op, csv_tail_op):
        shown = op(edge, "long.csv", n=5)
        assert shown.rows[-1] == ["11", "b'not bytes'"] and shown.rows[-2][1] == LONG
        text = shown.render()
        assert f"…[{len(LONG):,} characters]" in text and LONG not in text
        assert "1 cell(s) longer than" in text


@pytest.mark.parametrize("edge", ["postgres"], indirect=True)
def test_explain_json_is_written_as_json(edge: OpsContext) -> None:
    db_execute_sql_op(edge, "edge", "EXPLAIN (FORMAT JSON) SELECT * FROM edge",
                      output_file="plan.csv")
    with (edge.workspace / "plan.csv").open(newline="", encoding="utf-8") as handle:
        header, (cell,) = next(csv.reader(handle)), next(csv.reader(handle))[0:1]
    plan = json.loads(cell)  # a Python repr (single quotes, False) would not parse
    assert header == ["QUERY PLAN"] and plan[0]["Plan"]["Relation Name"] == "edge"


# -- the formatter on its own --------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    (None, None), ("", ""), (True, "t"), (False, "f"), (7, "7"), (1.0, "1"), (-0.0, "-0"),
    (0.1, "0.1"), (1e15, "1e+15"), (1e-05, "1e-05"), (float("nan"), "NaN"),
    (float("-inf"), "-Infinity"), (Decimal("1E+2"), "100"), (Decimal("1.50"), "1.50"),
    (b"\x00\xab", "\\x00ab"), (memoryview(b"a"), "\\x61"), ({"a": [1, None, True]},
                                                            '{"a": [1, null, true]}'),
    ([1, "x"], '[1, "x"]'), (date(2024, 1, 31), "2024-01-31"),
    (datetime(2024, 1, 31, 13, 45, 0, 500000), "2024-01-31 13:45:00.5"),
    (datetime(2024, 1, 31, 13, 45, tzinfo=timezone.utc), "2024-01-31 13:45:00+00"),
    (datetime(2024, 1, 31, 13, 45, tzinfo=timezone(timedelta(hours=5, minutes=30))),
     "2024-01-31 13:45:00+05:30"),
    (time(7, 5, 3, 250000), "07:05:03.25"),
    # durations (MySQL TIME, TIMEDIFF) as MySQL writes them, not Python's "-1 day, 22:30:00"
    (timedelta(hours=-1, minutes=-30), "-01:30:00"), (timedelta(0), "00:00:00"),
    (timedelta(hours=838, minutes=59, seconds=59.5), "838:59:59.5"),
    (timedelta(seconds=-1.25), "-00:00:01.25"), (timedelta(days=3), "72:00:00"),
    (timedelta(microseconds=1), "00:00:00.000001"),
])
def test_value_text(value: object, text: str | None) -> None:
    assert format_value(value) == text


def test_float_text_matches_postgres(pg_server: str) -> None:
    values = [1.0, -0.0, 0.0, 1e15, 1e16, 123456789012345.6, 1234567890123456.8, 0.0001,
              0.00001, 1.5e-7, 1e100, 1e22, 12345678901234567890.0, 2.5, 1 / 3, -2.0 ** 60,
              5e-324, 1.7976931348623157e308, 100000000000000.0, float("inf"), float("nan")]
    with psycopg.connect(pg_server) as conn:
        server = conn.execute("SELECT unnest(%s::float8[])::text", [values]).fetchall()
    assert [float_text(v) for v in values] == [row[0] for row in server]


def test_batch_formatter_equals_value_by_value_formatting() -> None:
    rows = [(i, None if i % 3 else "", 1.0 * i, f"t{i}\r" if i % 7 == 0 else f"t{i}",
             b"\x01" if i % 5 == 0 else None, i % 2 == 0, math.pi * i) for i in range(300)]
    assert CsvRowFormatter().records(rows) == [format_record(r) for r in rows]
    plain = [(i, f"name {i}", None) for i in range(100)]
    assert CsvRowFormatter().records(plain) == [format_record(r) for r in plain]
