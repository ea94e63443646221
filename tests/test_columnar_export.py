"""The columnar SQLite export (ADBC -> Arrow -> CSV in a worker process) writes the very bytes of
the row path, keeps every limit, and steps aside whenever it cannot be exact.

Both paths run on the same real SQLite files: the row path with ``NL2SQL_COLUMNAR_EXPORT=0``,
the columnar one with the switch-over lowered from 10,000 rows to a few hundred so that small
test data takes it; the log says which path wrote each file."""

from __future__ import annotations

import logging
import math
import random
import sqlite3
import struct
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from nl2sql.schema.cache import save_db_info
from nl2sql.workspace.csv_arrow import format_batch, record_bytes
from nl2sql.workspace.csv_dialect import CsvRowFormatter
from nl2sql.db import sqlite_columnar
from nl2sql.db.columnar_worker import shared_worker
from nl2sql.errors import QueryExecutionError, QueryTimeoutError
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op

from conftest import SAMPLE_DATA, sqlite_config
from packages import hide_package

SWITCH = 300
COLUMNAR_LOGGER = "nl2sql.db.sqlite_columnar"


@pytest.fixture(autouse=True)
def _small_switch(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(sqlite_columnar, "SWITCH_ROWS", SWITCH)
    caplog.set_level(logging.DEBUG, logger=COLUMNAR_LOGGER)
    # A query never waits for the worker to start (it goes on with its rows meanwhile): start
    # it here so each test's first big result already finds it.
    assert shared_worker().ready(timeout=60)


def _context(path: Path, make_registry: Callable[..., object], **extra: object) -> OpsContext:
    config = sqlite_config("db", path, **extra)
    ctx = OpsContext(make_registry(config))
    ctx.configs.databases["db"] = config  # dbs.yaml leaves the row cap and time limit out
    save_db_info(DbSchemaExtractor(ctx.connection("db")).extract("db"), ctx.data_dir)
    return ctx


def _both_paths(ctx: OpsContext, sql: str, monkeypatch: pytest.MonkeyPatch,
                caplog: pytest.LogCaptureFixture, name: str = "out") -> tuple[bytes, bytes, bool]:
    """(row path file, columnar attempt file, whether the columnar path wrote it)."""
    monkeypatch.setenv("NL2SQL_COLUMNAR_EXPORT", "0")
    rows = db_execute_sql_op(ctx, "db", sql, output_file=f"{name}_rows.csv")
    monkeypatch.delenv("NL2SQL_COLUMNAR_EXPORT")
    caplog.clear()
    columnar = db_execute_sql_op(ctx, "db", sql, output_file=f"{name}_columnar.csv")
    took = any("columnar export wrote" in r.getMessage() for r in caplog.records)
    assert (columnar.row_count, columnar.truncated) == (rows.row_count, rows.truncated)
    assert columnar.preview.replace(f"{name}_columnar", "") == \
        rows.preview.replace(f"{name}_rows", "")
    return ((ctx.workspace / f"{name}_rows.csv").read_bytes(),
            (ctx.workspace / f"{name}_columnar.csv").read_bytes(), took)


def _columnar_expected(sql: str) -> bool:
    """Whether the columnar path takes this query here (with a different SQLite version in
    the ADBC driver, only a query that computes nothing)."""
    return shared_worker().sqlite_version == sqlite3.sqlite_version or \
        sqlite_columnar.version_neutral(sql)


def _no_temp_files(ctx: OpsContext) -> None:
    assert not [p.name for p in ctx.workspace.rglob("*.tmp")]


# -- the formatter on its own ---------------------------------------------------------------

def _random_float(rnd: random.Random) -> float:
    roll = rnd.random()
    if roll < 0.05:
        return rnd.choice([0.0, -0.0, math.inf, -math.inf, math.nan, 1e15, 1e14, 1e-4, 1e-5,
                           5e-324, 1.7976931348623157e308, 123456789012345.6, 0.1 + 0.2])
    if roll < 0.5:  # any bit pattern: subnormals, huge, tiny
        return struct.unpack("d", struct.pack("Q", rnd.getrandbits(64)))[0]
    return rnd.uniform(-1, 1) * 10 ** rnd.randint(-8, 18)


def _random_text(rnd: random.Random) -> str:
    return "".join(rnd.choice(["a", ",", '"', "\n", "\r", " ", "é", "\\", ".", "日", ""])
                   for _ in range(rnd.randint(0, 6)))


def test_arrow_formatter_writes_the_row_formatter_bytes() -> None:
    rnd = random.Random(14)
    n = 20_000
    columns = {
        "i": [rnd.choice([None, rnd.randint(-2**63, 2**63 - 1), rnd.randint(-5, 5)])
              for _ in range(n)],
        "f": [None if rnd.random() < 0.1 else _random_float(rnd) for _ in range(n)],
        "s": [None if rnd.random() < 0.1 else _random_text(rnd) for _ in range(n)],
        "b": [None if rnd.random() < 0.1 else rnd.randbytes(rnd.randint(0, 5)) for _ in range(n)],
        "t": [rnd.choice([None, True, False]) for _ in range(n)],
    }
    rows = list(zip(*columns.values()))
    expected = "".join(CsvRowFormatter().records(rows)).encode("utf-8")
    view, ends = record_bytes(format_batch(pa.RecordBatch.from_pydict(columns)))
    assert bytes(view) == expected
    assert len(ends) == n and ends[-1] == len(expected)
    for name, values in columns.items():  # one-column results and sliced batches
        batch = pa.RecordBatch.from_pydict({name: values}).slice(7, 5_000)
        expected = "".join(CsvRowFormatter().records([(v,) for v in values[7:5_007]]))
        assert bytes(record_bytes(format_batch(batch))[0]) == expected.encode("utf-8"), name


def test_one_column_edge_values() -> None:
    batch = pa.RecordBatch.from_pydict({"x": ["\\.", None, "", "a", "\\.x"]})
    assert bytes(record_bytes(format_batch(batch))[0]) == b'"\\."\n\n""\na\n\\.x\n'


# -- both paths on real files ---------------------------------------------------------------

@pytest.fixture
def chinook_ctx(tmp_path: Path, make_registry) -> OpsContext:
    path = tmp_path / "chinook.db"
    path.write_bytes((SAMPLE_DATA / "chinook" / "chinook.sqlite").read_bytes())
    return _context(path, make_registry)


CHINOOK_JOIN = ("SELECT t.TrackId, t.Name, a.Title, ar.Name AS Artist, g.Name AS Genre, "
                "t.Composer, t.Milliseconds, t.UnitPrice, il.Quantity, "
                "i.InvoiceDate, i.BillingState "
                "FROM InvoiceLine il JOIN Track t USING (TrackId) JOIN Album a USING (AlbumId) "
                "JOIN Artist ar USING (ArtistId) LEFT JOIN Genre g USING (GenreId) "
                "JOIN Invoice i USING (InvoiceId) ORDER BY il.InvoiceLineId")


def test_a_small_result_never_asks_for_the_file_uri_or_the_tables(
        chinook_ctx: OpsContext, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Every SQLite query makes the hand-over hook; resolving the file's path and listing every
    table's columns is paid only by a result big enough to hand over (it was on every call)."""
    from nl2sql.db.sqlite import SqliteConnection

    asked: list[str] = []
    real_uri = SqliteConnection.read_only_uri
    monkeypatch.setattr(SqliteConnection, "read_only_uri", property(
        lambda self: asked.append("uri") or real_uri.fget(self)))  # type: ignore[attr-defined]
    real_tables = sqlite_columnar.column_affinities
    monkeypatch.setattr(sqlite_columnar, "column_affinities", lambda raw, sql, tables, n: (
        asked.append(f"tables {len(tables)}"), real_tables(raw, sql, tables, n))[1])
    chinook_ctx.connection("db")  # the engine (its URI) made before counting
    with chinook_ctx.connection("db").connect():
        pass
    asked.clear()
    db_execute_sql_op(chinook_ctx, "db", "SELECT * FROM Track WHERE TrackId = 7",
                      output_file="one.csv")
    assert asked == []
    caplog.clear()
    db_execute_sql_op(chinook_ctx, "db", "SELECT * FROM Track ORDER BY TrackId",
                      output_file="all.csv")
    if _columnar_expected("SELECT * FROM Track ORDER BY TrackId"):
        assert any("columnar export wrote" in r.getMessage() for r in caplog.records)
        assert asked == ["tables 11", "uri"]


def test_chinook_files_are_identical_on_both_paths(chinook_ctx: OpsContext,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    with sqlite3.connect(SAMPLE_DATA / "chinook" / "chinook.sqlite") as conn:
        tables = [(name, count) for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            for (count,) in conn.execute(f'SELECT count(*) FROM "{name}"')]
    conn.close()
    taken = 0
    for table, count in tables:
        rows, columnar, took = _both_paths(chinook_ctx, f'SELECT * FROM "{table}" ORDER BY rowid',
                                           monkeypatch, caplog, table)
        assert rows == columnar, table
        if count > 1_000 or count < SWITCH:  # big tables went columnar, small ones never did
            assert took == (count > 1_000), table
        taken += took
    assert taken >= 3
    rows, columnar, took = _both_paths(chinook_ctx, CHINOOK_JOIN, monkeypatch, caplog, "join")
    assert took and rows == columnar and rows.count(b"\n") == 2241
    _no_temp_files(chinook_ctx)



def test_without_the_fast_export_extra_the_file_is_the_same(chinook_ctx: OpsContext,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    """The base install (no ``nl2sql[fast-export]``: no ADBC driver, no pyarrow) writes the very
    bytes the extra's worker writes, on the row path."""
    def export(name: str) -> tuple[bytes, bool]:
        caplog.clear()
        monkeypatch.setattr(sqlite_columnar, "_available", None)  # looked up again
        db_execute_sql_op(chinook_ctx, "db", CHINOOK_JOIN, output_file=name)
        took = any("columnar export wrote" in r.getMessage() for r in caplog.records)
        return (chinook_ctx.workspace / name).read_bytes(), took

    with_extra, took = export("with_extra.csv")
    assert took
    with monkeypatch.context() as without:
        for package in ("adbc_driver_sqlite", "adbc_driver_manager", "pyarrow"):
            hide_package(without, package)
        without.setattr(sqlite_columnar, "_available", None)  # looked up again
        assert not sqlite_columnar.columnar_available()
        without_extra, took = export("without_extra.csv")
    assert not took
    assert without_extra == with_extra and with_extra.count(b"\n") == 2241
    _no_temp_files(chinook_ctx)

EDGE = [  # one row of each edge a column can hold; repeated to fill big results
    (None, None, None, None, None),
    (0, "", 1.0, b"", "2024-01-31"),
    (-9223372036854775808, "a,b", 0.25, b"\x00\xff\x10", "[]"),
    (9223372036854775807, 'quote " here', 1e15, b"plain", '{"k": "v"}'),
    (2, "new\nline", 1.5e-07, None, "x"),
    (3, "carriage\rreturn", 123456789012345.6, b"'", None),
    (4, " spaced ", -3.5, b"\\.", ""),
    (5, "\\.", float("inf"), b"\n", ","),
    (6, "unicode ✓ café 日本 🎵", 1234567890123456.8, b"\xe2\x9c\x93", "日"),
    (7, "b'not bytes'", -0.0, b"x", "\\"),
    (8, "1e+15", 5e-324, b"y", "NULL"),
]


def _edge_file(path: Path, rows: list[tuple]) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE edge (k INTEGER PRIMARY KEY, i INTEGER, t TEXT, f REAL, "
                     "b BLOB, u)")  # u: no declared type, no affinity
        conn.executemany("INSERT INTO edge (i, t, f, b, u) VALUES (?, ?, ?, ?, ?)", rows)
    conn.close()
    return path


def test_generated_edge_values_are_identical_on_both_paths(
        tmp_path: Path, make_registry, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    ctx = _context(_edge_file(tmp_path / "edge.db", EDGE * 200), make_registry)
    for number, sql in enumerate(("SELECT * FROM edge ORDER BY k",
                "SELECT t FROM edge ORDER BY k",  # one column: NULL lines, a lone \.
                "SELECT b, f FROM edge ORDER BY k",
                "SELECT k, t || '|' || u AS joined, f * 2, i % 7 FROM edge ORDER BY k")):
        rows, columnar, took = _both_paths(ctx, sql, monkeypatch, caplog, f"q{number}")
        assert took == _columnar_expected(sql), sql
        assert rows == columnar, sql
    _no_temp_files(ctx)


MIXED = {  # a column whose storage class changes after the rows the row path looked at
    "blob in a TEXT column": ("t", b"blob"),
    "real in a TEXT column (stored as text)": ("t", 0.1 + 0.2),
    "text in a BLOB column": ("b", "text"),
    "text in an INTEGER column": ("i", "text"),
    "real in an INTEGER column": ("i", 2.5),
    "big integer in a REAL column (stored as real)": ("f", 2**60 + 1),
    "text in a REAL column": ("f", "text"),
    "real in an untyped text column": ("u", 0.1 + 0.2),
    "blob in an untyped text column": ("u", b"\x00blob"),
    "integer in an untyped text column": ("u", 17),
    "big integer in an untyped float column": ("v", 2**60 + 1),
    "integer 1e15 in an untyped float column": ("v", 10**15),
    "small integer in an untyped float column": ("v", 3),
    "text in an untyped float column": ("v", "1e+15"),
}


@pytest.mark.parametrize("case", list(MIXED))
def test_a_storage_class_change_late_in_the_result_keeps_the_file_exact(
        case: str, tmp_path: Path, make_registry, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    column, value = MIXED[case]
    names = ["i", "t", "f", "b", "u", "v"]
    rows = [[k, f"text {k}", k * 0.5, bytes([k % 256]), f"u{k}", k + 0.25] for k in range(5_000)]
    rows[3_000][names.index(column)] = value
    path = tmp_path / "mixed.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE edge (k INTEGER PRIMARY KEY, i INTEGER, t TEXT, f REAL, "
                     "b BLOB, u, v)")
        conn.executemany("INSERT INTO edge (i, t, f, b, u, v) VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.close()
    ctx = _context(path, make_registry)
    for number, sql in enumerate(("SELECT * FROM edge ORDER BY k",  # no affinity on x:
                                  f"SELECT e.x, e.k FROM (SELECT {column} AS x, k FROM edge) e "
                                  f"ORDER BY e.k")):
        rows_file, columnar, _took = _both_paths(ctx, sql, monkeypatch, caplog, f"m{number}")
        assert rows_file == columnar, (case, sql)
    _no_temp_files(ctx)


def test_column_affinities_come_from_the_file() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE a (id INTEGER PRIMARY KEY, name NVARCHAR(20), price REAL, "
                 "n NUMERIC, raw, d DATETIME)")
    conn.execute("CREATE VIEW v AS SELECT name FROM a")
    tables = {"a": ["id", "name", "price", "n", "raw", "d"], "v": ["name"]}
    assert sqlite_columnar.column_affinities(conn, "SELECT * FROM a", tables, 6) == \
        ["integer", "text", "real", "numeric", "blob", "numeric"]
    assert sqlite_columnar.column_affinities(
        conn, "SELECT x.NAME AS label, price * 2, v.name FROM A x JOIN v ON v.name = x.name",
        tables, 3) == ["text", None, None]  # an expression, a view: no promise
    assert sqlite_columnar.column_affinities(
        conn, "SELECT name FROM a UNION ALL SELECT name FROM a", tables, 1) == [None]
    assert sqlite_columnar.column_affinities(conn, "SELECT nonsense(", tables, 2) == [None, None]


@pytest.mark.parametrize(("sql", "neutral"), [
    ("SELECT * FROM t WHERE a = 1 AND b IN ('x', 'y') ORDER BY c DESC LIMIT 10", True),
    ('SELECT t.a AS "x", u.b FROM t JOIN u ON u.id = t.id WHERE NOT t.c IS NULL', True),
    ("SELECT a FROM t WHERE price > 1.5", False),  # a float literal meets a column
    ("SELECT CAST(price AS TEXT) FROM t", False),
    ("SELECT a || b FROM t", False),
    ("SELECT upper(a) FROM t", False),
    ("SELECT count(*) FROM t", False),
    ("SELECT a FROM t UNION SELECT b FROM u WHERE b.x = a.y + 1", True),
    ("SELECT x FROM (SELECT a AS x FROM t) s ORDER BY x", True),
    ("SELECT a FROM t WHERE a = 1e15", False),
    ("SELECT a FROM t WHERE a LIKE '1.5%'", False),
])
def test_version_neutral_queries_compute_nothing(sql: str, neutral: bool) -> None:
    assert sqlite_columnar.version_neutral(sql) is neutral


# -- limits ---------------------------------------------------------------------------------

@pytest.fixture
def numbers_ctx(tmp_path: Path, make_registry) -> Callable[..., OpsContext]:
    path = tmp_path / "numbers.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE n (k INTEGER PRIMARY KEY, label TEXT, x REAL)")
        conn.executemany("INSERT INTO n VALUES (?, ?, ?)",
                         [(k, f"label, {k}", k / 3) for k in range(20_000)])
    conn.close()
    return lambda **extra: _context(path, make_registry, **extra)


@pytest.mark.parametrize("max_rows", [5_000, 20_000, 19_999])
def test_row_cap_is_the_same_on_both_paths(max_rows: int, numbers_ctx,
                                           monkeypatch: pytest.MonkeyPatch,
                                           caplog: pytest.LogCaptureFixture) -> None:
    ctx = numbers_ctx(max_rows=max_rows)
    rows, columnar, took = _both_paths(ctx, "SELECT * FROM n ORDER BY k", monkeypatch, caplog)
    assert took and rows == columnar
    assert rows.count(b"\n") == 1 + min(max_rows, 20_000)


@pytest.mark.parametrize("budget", [100_000, 250_007])
def test_byte_budget_cuts_on_the_same_record(budget: int, numbers_ctx,
                                             monkeypatch: pytest.MonkeyPatch,
                                             caplog: pytest.LogCaptureFixture) -> None:
    ctx = numbers_ctx(max_result_bytes=budget)
    monkeypatch.setenv("NL2SQL_COLUMNAR_EXPORT", "0")
    row_result = db_execute_sql_op(ctx, "db", "SELECT * FROM n ORDER BY k", output_file="r.csv")
    monkeypatch.delenv("NL2SQL_COLUMNAR_EXPORT")
    result = db_execute_sql_op(ctx, "db", "SELECT * FROM n ORDER BY k", output_file="c.csv")
    assert (ctx.workspace / "c.csv").read_bytes() == (ctx.workspace / "r.csv").read_bytes()
    assert len((ctx.workspace / "c.csv").read_bytes()) <= budget
    assert (result.row_count, result.truncated) == (row_result.row_count, True)
    assert any("columnar export wrote" in r.getMessage() for r in caplog.records)


def test_value_size_limit_gives_the_row_path_error(tmp_path: Path, make_registry,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE n (k INTEGER PRIMARY KEY)")
        conn.executemany("INSERT INTO n VALUES (?)", [(k,) for k in range(5_000)])
    conn.close()
    ctx = _context(path, make_registry, max_value_bytes=4096)
    sql = "SELECT k, CASE WHEN k = 4000 THEN zeroblob(5000) ELSE x'01' END AS b FROM n ORDER BY k"
    messages = []
    for switch in ("0", "1"):
        monkeypatch.setenv("NL2SQL_COLUMNAR_EXPORT", switch)
        with pytest.raises(QueryExecutionError) as raised:
            db_execute_sql_op(ctx, "db", sql, output_file=f"big{switch}.csv")
        messages.append(str(raised.value))
    assert messages[0] == messages[1] and "max_value_bytes" in messages[0]
    _no_temp_files(ctx)


def test_time_limit_kills_a_stalled_columnar_export(numbers_ctx) -> None:
    """Rows come fast, then the query stalls (an endless count): the worker process is killed at
    the deadline, the caller gets the time-limit error, and the next export works."""
    ctx = numbers_ctx(query_timeout_seconds=2)
    stall = ("SELECT k FROM n UNION ALL "  # then 4e8 lookups, finding nothing
             "SELECT a.k FROM n a, n b, n c WHERE a.k = b.k + c.k + 100000")
    worker = shared_worker()
    before = worker._process
    assert before is not None and before.poll() is None
    with pytest.raises(QueryTimeoutError):
        db_execute_sql_op(ctx, "db", stall, output_file="stall.csv")
    assert before.poll() is not None  # killed, not left running
    # The next big result does not wait for a new worker: its rows go on meanwhile.
    result = db_execute_sql_op(ctx, "db", "SELECT * FROM n ORDER BY k", output_file="next.csv")
    assert result.row_count == 20_000
    assert worker.ready(timeout=60) and worker._process is not before
    _no_temp_files(ctx)


def test_concurrent_big_exports_share_one_worker(numbers_ctx) -> None:
    """A second big export while the worker is busy goes on with its rows; both files right."""
    ctx = numbers_ctx()
    errors: list[BaseException] = []

    def export(name: str) -> None:
        try:
            db_execute_sql_op(ctx, "db", "SELECT * FROM n ORDER BY k", output_file=name)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=export, args=(f"c{i}.csv",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    files = {(ctx.workspace / f"c{i}.csv").read_bytes() for i in range(4)}
    assert len(files) == 1 and next(iter(files)).count(b"\n") == 20_001


def test_the_wrapped_text_is_prepared_under_the_authorizer(numbers_ctx,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture
                                                           ) -> None:
    """What the worker would run is prepared on the guarded connection first: a wrapped text the
    authorizer refuses never reaches the worker, and the row path finishes the result."""
    ctx = numbers_ctx()
    original = sqlite_columnar.checked_sql

    def with_attach(sql: str, *args: object) -> tuple[str, bool]:
        text, _checked = original(sql, *args)
        return text.replace("FROM nl2sql_checked",
                            "FROM nl2sql_checked, pragma_table_info('n') WHERE "
                            "load_extension('x') IS NULL"), True

    monkeypatch.setattr(sqlite_columnar, "checked_sql", with_attach)
    result = db_execute_sql_op(ctx, "db", "SELECT * FROM n ORDER BY k", output_file="a.csv")
    assert result.row_count == 20_000
    assert not any("columnar export wrote" in r.getMessage() for r in caplog.records)
    assert any("does not compile" in r.getMessage() for r in caplog.records)


# -- DuckDB: Arrow batches straight from the engine -----------------------------------------

DUCKDB_TYPES = ("CREATE TABLE t (k INTEGER, i BIGINT, h HUGEINT, u UTINYINT, d DECIMAL(14, 2), "
                "dd DECIMAL(38, 10), f DOUBLE, r FLOAT, b BOOLEAN, s VARCHAR, bl BLOB, "
                "day DATE, id UUID); "
                "INSERT INTO t SELECT k, k * 1000003 - 5000, k::HUGEINT * 170141183460469231, "
                "k % 256, k / 7, k / 3.0, k * 0.1, k / 3, k % 3 = 0, "
                "CASE k % 5 WHEN 0 THEN '' WHEN 1 THEN 'a,b' WHEN 2 THEN 'say \"hi\"' "
                "WHEN 3 THEN NULL ELSE 'plain ' || k END, "
                "CASE WHEN k % 4 = 0 THEN NULL ELSE encode('x' || k) END, "
                "DATE '1999-12-31' + k::INTEGER, uuid() FROM range(5000) AS r(k); "
                "INSERT INTO t VALUES (5000, NULL, NULL, NULL, NULL, NULL, 'inf', 'nan', NULL, "
                "'\\.', '\\xff'::BLOB, NULL, NULL), "
                "(5001, -9223372036854775808, -170141183460469231731687303715884105727, 255, "
                "-0.01, 0, -0.0, 1e15, false, 'new\nline', '', DATE '0001-01-01', NULL)")


def test_duckdb_arrow_export_writes_the_row_formatter_bytes(make_db, make_registry,
                                                            tmp_path: Path) -> None:
    import duckdb

    db = make_db("duckdb", "duck", script=DUCKDB_TYPES)
    ctx = OpsContext(make_registry(db.config))
    save_db_info(DbSchemaExtractor(ctx.connection("duck")).extract("duck"), ctx.data_dir)
    for number, sql in enumerate(("SELECT * FROM t ORDER BY k", "SELECT s FROM t ORDER BY k",
                                  "SELECT d * 2 AS d2, f + r AS fr, day FROM t ORDER BY k")):
        result = db_execute_sql_op(ctx, "duck", sql, output_file=f"duck{number}.csv")
        copy = tmp_path / f"copy{number}.duckdb"  # a second connection needs its own file
        copy.write_bytes(db.config.path.read_bytes())
        with duckdb.connect(str(copy), read_only=True) as direct:
            cursor = direct.execute(sql)
            columns = [d[0] for d in cursor.description]
            floats = [str(d[1]) == "FLOAT" for d in cursor.description]
            # A 4-byte FLOAT is written by its own shortest digits (0.33333334), not its
            # double's (0.3333333432674408), which the driver hands out.
            rows = [tuple(float(str(np.float32(v))) if is_float and v is not None else v
                          for v, is_float in zip(row, floats)) for row in cursor.fetchall()]
        formatter = CsvRowFormatter()
        expected = formatter.header(columns) + "".join(formatter.records(rows))
        written = (ctx.workspace / f"duck{number}.csv").read_text(encoding="utf-8")
        assert written == expected, sql
        assert result.row_count == 5002


def test_a_worker_that_cannot_start_leaves_the_row_path(numbers_ctx,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    from nl2sql.db import columnar_worker

    monkeypatch.setattr(columnar_worker, "_worker", columnar_worker.ColumnarWorker())
    monkeypatch.setattr(columnar_worker.sys, "executable", "/nonexistent/python")
    ctx = numbers_ctx()
    for name in ("a.csv", "b.csv"):
        result = db_execute_sql_op(ctx, "db", "SELECT * FROM n ORDER BY k", output_file=name)
        assert result.row_count == 20_000
    warnings = [r for r in caplog.records if "cannot start" in r.getMessage()]
    assert len(warnings) == 1  # said once, not tried again on every result


def test_the_first_big_result_moves_to_the_worker_once_it_is_up(
        numbers_ctx, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """No worker yet: the rows start, the worker starts beside them, and the result moves to it
    once it is ready (not only the next result)."""
    from nl2sql.db import columnar_worker

    monkeypatch.setattr(columnar_worker, "_worker", columnar_worker.ColumnarWorker())
    ctx = numbers_ctx(max_rows=2_000_000)
    result = db_execute_sql_op(ctx, "db", "SELECT a.k, b.label FROM n a, n b", output_file="x.csv")
    assert result.row_count == 2_000_000 and result.truncated
    assert any("columnar export wrote 2000000 rows" in r.getMessage() for r in caplog.records)
    columnar_worker._worker.close()


def test_an_idle_worker_exits_and_a_new_one_serves_later(numbers_ctx,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    import time

    from nl2sql.db import columnar_worker

    monkeypatch.setenv("NL2SQL_COLUMNAR_IDLE_SECONDS", "1")
    monkeypatch.setattr(columnar_worker, "_worker", columnar_worker.ColumnarWorker())
    worker = columnar_worker.shared_worker()
    assert worker.ready(timeout=60)
    first = worker._process
    deadline = time.monotonic() + 30
    while first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert first.poll() == 0  # left on its own, cleanly
    ctx = numbers_ctx()
    result = db_execute_sql_op(ctx, "db", "SELECT * FROM n ORDER BY k", output_file="a.csv")
    assert result.row_count == 20_000  # on the rows while a new worker starts
    assert worker.ready(timeout=60) and worker._process is not first
    worker.close()


def test_a_workspace_error_while_adopting_the_file_is_reported_not_swallowed(
        numbers_ctx, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk filling up as the worker's file replaces the rows' is the workspace's error (one
    sentence), not a worker failure to step around; no temporary file stays behind."""
    import errno

    from nl2sql.errors import WorkspaceFileError
    from nl2sql.workspace.results import CsvResultWriter

    def full(self: CsvResultWriter, path: Path, bytes_written: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(CsvResultWriter, "adopt_file", full)
    ctx = numbers_ctx()
    with pytest.raises(WorkspaceFileError) as raised:
        db_execute_sql_op(ctx, "db", "SELECT * FROM n ORDER BY k", output_file="full.csv")
    assert "full" in str(raised.value) and "\n" not in str(raised.value)
    _no_temp_files(ctx)
    assert not (ctx.workspace / "full.csv").exists()
