"""Result files: workspace paths, names, atomic CSV + metadata, the preview, and exports that
match what a direct query returns (NULLs, unicode, commas, quotes, newlines) on both backends."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import psycopg
import pytest
from conftest import BACKENDS, BackendDb, pg_config

from nl2sql.schema.cache import save_db_info
from nl2sql.errors import QueryExecutionError, WorkspacePathError
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.agents.answer import markdown_table, read_dataframe
from nl2sql.charts.table import read_table
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.workspace.preview import format_preview, preview_numbers
from nl2sql.workspace.results import (CsvResultWriter, ResultMetadata,
                            resolve_workspace_path, safe_name_from_query)

# -- workspace paths ------------------------------------------------------------------------


def test_resolves_inside_and_creates_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    path = resolve_workspace_path(workspace, "sub/result.csv")
    assert workspace.is_dir()
    assert path == workspace.resolve() / "sub" / "result.csv"


@pytest.mark.parametrize("name", ["../x.csv", "a/../../x.csv", "/etc/passwd", "~/x.csv",
                                  "..", "a/..", "", "   ", "x\x00.csv", "..\\x.csv"])
def test_refuses_paths_leaving_the_workspace(tmp_path: Path, name: str) -> None:
    with pytest.raises(WorkspacePathError) as raised:
        resolve_workspace_path(tmp_path / "ws", name)
    assert "\n" not in str(raised.value)


def test_refuses_symlinks_pointing_out(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("s\n")
    (workspace / "link.csv").symlink_to(outside / "secret.csv")
    (workspace / "dir").symlink_to(outside, target_is_directory=True)
    for name in ("link.csv", "dir/secret.csv", "dir/new.csv"):
        with pytest.raises(WorkspacePathError, match="outside the workspace"):
            resolve_workspace_path(workspace, name)


def test_allows_symlinks_inside_and_checks_existence(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "real").mkdir(parents=True)
    (workspace / "real" / "a.csv").write_text("a\n")
    (workspace / "alias").symlink_to(workspace / "real", target_is_directory=True)
    assert resolve_workspace_path(workspace, "alias/a.csv", must_exist=True).read_text() == "a\n"
    with pytest.raises(WorkspacePathError, match="does not exist"):
        resolve_workspace_path(workspace, "missing.csv", must_exist=True)


def test_a_resolved_workspace_gives_the_same_answers(tmp_path: Path) -> None:
    """``resolved=True`` (the server's per-call path, with a fast path for plain names) decides
    every name exactly as the full resolution does."""
    workspace = tmp_path / "ws"
    (workspace / "real").mkdir(parents=True)
    (workspace / "real" / "a.csv").write_text("a\n")
    (workspace / "kept.csv").write_text("k\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("s\n")
    (workspace / "out.csv").symlink_to(outside / "secret.csv")
    (workspace / "in.csv").symlink_to(workspace / "kept.csv")
    (workspace / "up").symlink_to(tmp_path, target_is_directory=True)
    (workspace / "self").symlink_to(workspace, target_is_directory=True)
    (workspace / "loop.csv").symlink_to(workspace / "loop.csv")
    root = workspace.resolve()
    for name in ("kept.csv", "new-1.csv", "out.csv", "in.csv", "up", "self", "real", "..",
                 ".", "real/a.csv", "-x.csv", "a" * 201, "x\x00.csv", "é.csv"):
        for must_exist in (False, True):
            answers = []
            for resolved in (False, True):
                try:
                    answers.append(resolve_workspace_path(root, name, must_exist=must_exist,
                                                          resolved=resolved))
                except (WorkspacePathError, RuntimeError) as error:  # RuntimeError: the loop
                    answers.append(type(error))
            assert answers[0] == answers[1], (name, must_exist, answers)
    # A symlink loop: pathlib raises RuntimeError; the fast path names the link itself,
    # which stays inside the workspace (publishing renames a file over it, never through it).
    assert resolve_workspace_path(root, "loop.csv", resolved=True) == root / "loop.csv"
    with pytest.raises(WorkspacePathError, match="does not exist"):
        resolve_workspace_path(root, "loop.csv", resolved=True, must_exist=True)


def test_safe_name_is_a_slug_plus_a_stable_hash() -> None:
    name = safe_name_from_query("SELECT name FROM artist")
    assert re.fullmatch(r"select_name_from_artist_[0-9a-f]{6}", name)
    assert name == safe_name_from_query("SELECT name FROM artist")
    assert name != safe_name_from_query("SELECT name FROM artist ")
    long = safe_name_from_query("SELECT " + ", ".join(f"column_{i}" for i in range(50)))
    assert len(long) <= 48 and re.fullmatch(r"[a-z0-9_]+_[0-9a-f]{6}", long)
    assert re.fullmatch(r"query_[0-9a-f]{6}", safe_name_from_query("«»"))


# -- writer and preview ---------------------------------------------------------------------


def _metadata(**extra: object) -> ResultMetadata:
    values: dict = {"sql_query": "SELECT 1", "row_count": 1, "column_count": 1,
                    "csv_filename": "r.csv", "db_id": "d", "columns": ["a"], "max_rows": 5}
    return ResultMetadata(**{**values, **extra})


def test_writer_publishes_csv_then_metadata_and_leaves_no_temp_files(tmp_path: Path) -> None:
    writer = CsvResultWriter(tmp_path / "r.csv")
    assert not (tmp_path / "r.csv").exists()  # nothing visible before publish
    writer.begin(["a", "b"])
    writer.write_rows([(1, None), (2, "x,y")])
    writer.publish(_metadata(row_count=2, column_count=2, columns=["a", "b"]))
    assert (tmp_path / "r.csv").read_text() == 'a,b\n1,\n2,"x,y"\n'
    meta = json.loads((tmp_path / "r.metadata.json").read_text())
    assert {"sql_query", "timestamp", "row_count", "column_count", "csv_filename", "db_id",
            "natural_language_query", "columns", "elapsed_seconds", "truncated",
            "max_rows"} <= set(meta)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv", "r.metadata.json"]


def test_discarded_writer_leaves_nothing(tmp_path: Path) -> None:
    writer = CsvResultWriter(tmp_path / "r.csv")
    writer.begin(["a"])
    writer.write_csv_records([b"1\n"])
    writer.discard()
    assert list(tmp_path.iterdir()) == []


def test_preview_names_every_cut() -> None:
    rows = [[str(i), "x" * 100 if i == 0 else "line\nbreak"] for i in range(10)]
    text = format_preview(_metadata(row_count=5, column_count=2, columns=["n", "v"],
                                    truncated=True, max_rows=5), rows[:5])
    assert text.splitlines()[0] == ("5 rows x 2 columns saved to r.csv "
                                    "(metadata: r.metadata.json).")
    assert "| 0 | " + "x" * 79 + "… |" in text
    assert "line\\nbreak" in text
    assert "1 preview cell(s) longer than 80 characters were cut" in text
    assert "cut at the row cap of 5 rows" in text and "max_rows" in text
    text = format_preview(_metadata(row_count=3503, column_count=2, columns=["n", "v"]),
                          rows[1:])
    assert "the first 9 of 3,503 rows" in text and "csv_head/csv_tail" in text
    assert "Truncated" not in text and "were cut" not in text
    assert "no rows" in format_preview(_metadata(row_count=0), [])


# -- exports on both backends ---------------------------------------------------------------

SPECIAL_ROWS = [
    (1, "plain", 1.5, None),
    (2, "comma, here", None, "x"),
    (3, 'quote " here', 2.0, ""),
    (4, "new\nline", -0.25, "multi\r\nline"),
    (5, "unicode ✓ café 日本 🎵", 3.0, '"quoted"'),
    (6, None, 0.0, ","),
]
SPECIAL_QUERY = "SELECT id, txt, num, note FROM special ORDER BY id"


#: Column types per backend: each keeps the values above (text, a decimal number, NULL).
SPECIAL_TABLE = {"sqlite": "CREATE TABLE special (id INTEGER PRIMARY KEY, txt TEXT, num REAL, "
                           "note TEXT)"}
SPECIAL_TABLE_DEFAULT = ("CREATE TABLE special (id integer PRIMARY KEY, txt text, num numeric, "
                         "note text)")


@pytest.fixture(params=BACKENDS)
def special(request: pytest.FixtureRequest, make_db: Callable[..., BackendDb],
            make_registry: Callable[..., object]) -> tuple[OpsContext, Callable[[str], list]]:
    """An OpsContext on a table of awkward values, and a direct query returning text cells."""
    db = make_db(request.param, "special",
                 script=SPECIAL_TABLE.get(request.param, SPECIAL_TABLE_DEFAULT))
    db.insert("special", SPECIAL_ROWS)
    config, direct = db.config, db.text_rows
    ctx = OpsContext(make_registry(config))  # type: ignore[arg-type]
    save_db_info(DbSchemaExtractor(ctx.connection("special")).extract("special"), ctx.data_dir)
    return ctx, direct


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        header, *rows = list(csv.reader(handle))
    return header, rows


def test_export_equals_a_direct_query(special: tuple) -> None:
    ctx, direct = special
    result = db_execute_sql_op(ctx, "special", SPECIAL_QUERY, nl_query="awkward values")
    header, rows = _read_csv(ctx.workspace / result.csv_filename)
    assert header == ["id", "txt", "num", "note"] == result.columns
    assert rows == direct(SPECIAL_QUERY)
    assert result.row_count == 6 and result.column_count == 4 and not result.truncated
    meta = json.loads((ctx.workspace / result.metadata_filename).read_text())
    assert meta["natural_language_query"] == "awkward values"
    assert meta["sql_query"] == SPECIAL_QUERY and meta["db_id"] == "special"
    assert meta["row_count"] == 6 and meta["csv_filename"] == result.csv_filename
    assert "unicode ✓ café 日本 🎵" in result.render() and "new\\nline" in result.render()


@pytest.mark.parametrize("special", ["postgres"], indirect=True)  # csv.writer: NULL == ''
def test_postgres_export_keeps_null_apart_from_empty_text(special: tuple) -> None:
    ctx, _ = special
    result = db_execute_sql_op(ctx, "special", "SELECT note FROM special WHERE id IN (1, 3) "
                               "ORDER BY id", output_file="nulls")
    assert (ctx.workspace / "nulls.csv").read_text() == 'note\n\n""\n'
    assert result.csv_filename == "nulls.csv"


def test_row_cap_truncates_and_says_so(special: tuple) -> None:
    ctx, direct = special
    ctx.configs.databases["special"] = ctx.config("special").model_copy(update={"max_rows": 4})
    result = db_execute_sql_op(ctx, "special", SPECIAL_QUERY, output_file="capped.csv")
    _, rows = _read_csv(ctx.workspace / "capped.csv")
    assert rows == direct(SPECIAL_QUERY)[:4]
    assert result.truncated and result.row_count == 4 and result.max_rows == 4
    assert "row cap of 4 rows" in result.render()
    exact = db_execute_sql_op(ctx, "special", SPECIAL_QUERY + " LIMIT 4", output_file="exact")
    assert not exact.truncated and exact.row_count == 4


def test_output_file_outside_the_workspace_is_refused(special: tuple) -> None:
    ctx, _ = special
    for name in ("../escape", "/tmp/escape", "a/../../escape"):
        with pytest.raises(WorkspacePathError):
            db_execute_sql_op(ctx, "special", SPECIAL_QUERY, output_file=name)
    assert not (ctx.workspace.parent / "escape.csv").exists()


def test_failed_query_leaves_no_files(special: tuple) -> None:
    ctx, _ = special
    with pytest.raises(QueryExecutionError) as raised:
        db_execute_sql_op(ctx, "special", "SELECT nosuch\nFROM special", output_file="bad")
    assert "nosuch" in str(raised.value) and "\n" not in str(raised.value)
    assert not any(ctx.workspace.iterdir())


@pytest.mark.parametrize("chinook", BACKENDS, indirect=True)
def test_chinook_export_matches_and_previews_ten_rows(chinook, make_registry) -> None:
    ctx = OpsContext(make_registry(chinook.config))
    query = f'SELECT * FROM {chinook.quoted("track")} ORDER BY 1'
    result = db_execute_sql_op(ctx, "chinook", query)
    header, rows = _read_csv(ctx.workspace / result.csv_filename)
    assert len(rows) == result.row_count == 3503 and len(header) == 9
    assert result.csv_filename.startswith("select_from_track_")
    table_lines = [line for line in result.preview.splitlines() if line.startswith("| ")]
    assert len(table_lines) == 11  # header + 10 rows
    assert "the first 10 of 3,503 rows" in result.render()



def test_result_and_cache_files_get_the_umask_mode_not_0600(tmp_path: Path) -> None:
    import os
    import stat

    from nl2sql.schema.cache import _read_umask, atomic_write_text, default_file_mode

    old = os.umask(0o027)
    try:
        assert _read_umask() == 0o027
    finally:
        os.umask(old)
    target = tmp_path / "new.json"
    atomic_write_text(target, "{}")
    assert stat.S_IMODE(target.stat().st_mode) == default_file_mode() == 0o666 & ~old
    target.chmod(0o600)
    atomic_write_text(target, "{}\n")  # a replaced file keeps its mode
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_the_thousandth_run_of_a_query_finds_its_name_in_a_few_checks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A derived name that is taken gets the number after the last one taken, found in
    O(log N) checks (they were N: the 3,000th run of one query took 11.8 ms instead of 1 ms)."""
    from nl2sql.workspace import results

    ctx = OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    query = "SELECT count(*) AS n FROM orders"
    try:
        stem = db_execute_sql_op(ctx, "bookstore", query).csv_filename.removesuffix(".csv")
        for number in range(2, 1001):  # as if the query had run 1,000 times
            (ctx.workspace / f"{stem}_{number}.csv").write_text("n\n400\n")
        checks: list[Path] = []
        exists = results._result_exists
        monkeypatch.setattr(results, "_result_exists",
                            lambda path: checks.append(path) or exists(path))
        again = db_execute_sql_op(ctx, "bookstore", query)
        assert again.csv_filename == f"{stem}_1001.csv" and "| 400 |" in again.render()
        assert len(checks) <= 25, len(checks)
        (ctx.workspace / f"{stem}_500.csv").unlink()  # a hole below the last: a new name still
        third = db_execute_sql_op(ctx, "bookstore", query).csv_filename
        assert third not in (f"{stem}_{n}.csv" for n in range(1, 1002) if n != 500)
        assert (ctx.workspace / third).read_text() == "n\n400\n"
    finally:
        ctx.close()


@pytest.mark.parametrize("special", ["sqlite"], indirect=True)
def test_results_are_only_added_never_replaced_unless_asked(special: tuple) -> None:
    """db_execute_sql is additive (destructiveHint=False): a derived name that is taken gets a
    suffix, an explicit one is refused before the query runs, overwrite=True replaces."""
    from nl2sql.errors import ResultExistsError
    from nl2sql.workspace.results import CsvResultWriter, ResultMetadata

    ctx, _ = special
    first = db_execute_sql_op(ctx, "special", SPECIAL_QUERY)
    again = db_execute_sql_op(ctx, "special", SPECIAL_QUERY)
    stem = first.csv_filename.removesuffix(".csv")
    assert again.csv_filename == f"{stem}_2.csv" != first.csv_filename
    assert json.loads((ctx.workspace / f"{stem}_2.metadata.json").read_text())[
        "csv_filename"] == f"{stem}_2.csv"
    assert f"saved to {stem}_2.csv" in again.render()

    db_execute_sql_op(ctx, "special", SPECIAL_QUERY + " LIMIT 1", output_file="mine.csv")
    before = (ctx.workspace / "mine.csv").read_bytes()
    with pytest.raises(ResultExistsError, match="'mine.csv' already exists.*overwrite=true"):
        db_execute_sql_op(ctx, "special", SPECIAL_QUERY, output_file="mine")
    assert (ctx.workspace / "mine.csv").read_bytes() == before
    assert not list(ctx.workspace.glob(".*.tmp"))
    replaced = db_execute_sql_op(ctx, "special", SPECIAL_QUERY, output_file="mine.csv",
                                 overwrite=True)
    after = (ctx.workspace / "mine.csv").read_bytes()
    assert replaced.row_count == 6 and after != before

    # The publish step itself refuses (the early check can race with another writer).
    writer = CsvResultWriter(ctx.workspace / "mine.csv")
    writer.begin(["x"])
    metadata = ResultMetadata(sql_query="SELECT 1", row_count=0, column_count=1,
                              csv_filename="mine.csv", db_id="special")
    with pytest.raises(ResultExistsError):
        writer.publish(metadata, overwrite=False)
    writer.discard()
    assert (ctx.workspace / "mine.csv").read_bytes() == after


@pytest.mark.parametrize("chinook", BACKENDS, indirect=True)
def test_export_keeps_the_query_order_and_the_row_cap(chinook, make_registry) -> None:
    """MariaDB and MySQL drop an ORDER BY inside a derived table: the query must run as sent."""
    ctx = OpsContext(make_registry(chinook.config))
    track_id = "track_id" if chinook.naming == "postgres" else "TrackId"
    query = f"SELECT {track_id}, name FROM {chinook.quoted('track')} ORDER BY {track_id} DESC"
    full = db_execute_sql_op(ctx, "chinook", query)
    header, rows = _read_csv(ctx.workspace / full.csv_filename)
    assert [int(r[0]) for r in rows[:3]] == [3503, 3502, 3501] and len(rows) == 3503
    ctx.configs.databases["chinook"] = chinook.config.model_copy(update={"max_rows": 5})
    capped = db_execute_sql_op(ctx, "chinook", query)
    header, rows = _read_csv(ctx.workspace / capped.csv_filename)
    assert [int(r[0]) for r in rows] == [3503, 3502, 3501, 3500, 3499] and capped.truncated


@pytest.mark.parametrize("special", ["postgres", "sqlite", "mysql"], indirect=True)
def test_a_dataframe_keeps_leading_zeros_as_text_and_reads_dates_as_dates(
        special: tuple) -> None:
    """``Answer.df``: a text column such as a zip code keeps its leading zero (no database
    number is written with one), ISO dates become datetimes (pandas 3 reads text as ``str``,
    which the date check once missed), PostgreSQL's booleans; the table and the JSON write them
    as the CSV does."""
    from nl2sql.agents.answer import Answer

    ctx, _ = special
    backend = ctx.config("special").type.value
    date, stamp = ("DATE '2024-01-02'", "TIMESTAMP '2024-01-02 10:30:00'") \
        if backend != "sqlite" else ("'2024-01-02'", "'2024-01-02 10:30:00'")
    true = "TRUE" if backend == "postgres" else "'t'"  # MySQL's and SQLite's are 1
    query = (f"SELECT '01234' AS zip, '-042' AS code, 7 AS n, 0.5 AS x, {date} AS d, "
             f"{stamp} AS ts, 'NA' AS country, {true} AS ok")
    result = db_execute_sql_op(ctx, "special", query)
    df = read_dataframe(ctx.workspace / result.csv_filename, 10)
    row = df.iloc[0].to_dict()
    assert row["zip"] == "01234" and row["code"] == "-042" and row["country"] == "NA"
    assert row["n"] == 7 and row["x"] == 0.5
    assert str(df["d"].dtype).startswith("datetime64") and row["d"].year == 2024
    # PostgreSQL's boolean is a boolean; MySQL and SQLite have none, and their 't' is text
    ok = True if backend == "postgres" else "t"
    assert row["ok"] is True if backend == "postgres" else row["ok"] == "t"
    assert markdown_table(df, 10)[2] == \
        "| 01234 | -042 | 7 | 0.5 | 2024-01-02 | 2024-01-02 10:30:00 | NA | t |"
    answer = Answer(question="q", db_id="special", sql=query, explanation="e", df=df,
                    csv_path=str(ctx.workspace / result.csv_filename), row_count=1)
    assert json.loads(json.dumps(answer.to_json_dict()["df"])) == [{
        "zip": "01234", "code": "-042", "n": 7, "x": 0.5, "d": "2024-01-02",
        "ts": "2024-01-02 10:30:00", "country": "NA", "ok": ok}]


#: The id as text, by backend: what a zip code or an account number column is.
_AS_TEXT = {"mysql": "CAST(id AS CHAR)", "postgres": "CAST(id AS text)",
            "sqlite": "CAST(id AS TEXT)", "duckdb": "CAST(id AS VARCHAR)"}


def test_a_result_keeps_its_column_types_and_the_dataframe_reads_by_them(
        special: tuple) -> None:
    """The metadata records each column's type as the database gave it, and ``Answer.df``
    reads by it: text that looks like numbers stays text, an integer column with a missing
    value stays integers (pandas alone makes it 4.0 / NaN), numbers are floats."""
    ctx, _ = special
    backend = ctx.config("special").type.value
    query = (f"SELECT id, {_AS_TEXT[backend]} AS code, CASE WHEN id > 3 THEN id END AS maybe, "
             f"num, txt FROM special ORDER BY id")
    result = db_execute_sql_op(ctx, "special", query)
    types = ["integer", "text", "integer", "number", "text"]
    assert result.column_types == types
    meta = json.loads((ctx.workspace / result.metadata_filename).read_text())
    assert meta["column_types"] == types
    df = read_dataframe(ctx.workspace / result.csv_filename, 10)
    assert df["code"].tolist() == ["1", "2", "3", "4", "5", "6"]
    assert str(df["maybe"].dtype) == "Int64" and df["maybe"].tolist()[3:] == [4, 5, 6]
    assert df["maybe"].isna().tolist()[:3] == [True] * 3
    assert df["num"].dtype == float and df["id"].tolist() == [1, 2, 3, 4, 5, 6]
    table = markdown_table(df, 10)  # a missing integer is an empty cell, as in the CSV
    assert table[2].startswith("| 1 | 1 |  |") and table[5].startswith("| 4 | 4 | 4 |")


def test_a_column_that_does_not_fit_its_type_is_read_by_its_text(tmp_path: Path) -> None:
    """Types in the metadata are a promise the CSV may not keep (a hand-edited file, an SQLite
    column that changes storage class after the rows the types were taken from): such a
    column is read by its text; a result without types as before."""
    (tmp_path / "r.csv").write_text("a,b,c,d\n1,x,2024-01-31,t\nlots,7,infinity,maybe\n")
    (tmp_path / "r.metadata.json").write_text(json.dumps(
        {"column_types": ["integer", "text", "date", "boolean"]}))
    df = read_dataframe(tmp_path / "r.csv", 10)
    assert [df[c].tolist() for c in "abcd"] == [
        ["1", "lots"], ["x", "7"], ["2024-01-31", "infinity"], ["t", "maybe"]]
    (tmp_path / "r.metadata.json").write_text(json.dumps({"column_types": ["integer"]}))
    assert read_dataframe(tmp_path / "r.csv", 1)["b"].tolist() == ["x"]  # a list of 1: unused


def test_timestamps_across_a_change_to_summer_time_read_in_the_databases_zone(
        tmp_path: Path) -> None:
    """PostgreSQL and DuckDB write zoned timestamps with the session zone's offset, which
    changes with summer time; the metadata names that zone, and the column reads in it, as the
    CSV writes it (a chart's axis too). Without a zone one pandas column cannot hold both
    offsets: the same instants in UTC (it was left text), typed or not."""
    (tmp_path / "r.csv").write_text("at\n2024-01-15 10:00:00+01\n2024-07-15 10:00:00+02\n")
    utc = ("UTC", ["2024-01-15T09:00:00+00:00", "2024-07-15T08:00:00+00:00"], [9, 8])
    berlin = ("Europe/Berlin", ["2024-01-15T10:00:00+01:00", "2024-07-15T10:00:00+02:00"],
              [10, 10])
    for meta, (zone, instants, hours) in [
            ({"column_types": []}, utc), ({"column_types": ["timestamp"]}, utc),
            ({"column_types": ["timestamp"], "time_zone": "Not/AZone"}, utc),
            ({"column_types": [], "time_zone": "Europe/Berlin"}, berlin),
            ({"column_types": ["timestamp"], "time_zone": "Europe/Berlin"}, berlin)]:
        (tmp_path / "r.metadata.json").write_text(json.dumps(meta))
        column = read_dataframe(tmp_path / "r.csv", 10)["at"]
        assert str(column.dt.tz) == zone and [t.isoformat() for t in column] == instants
        assert read_table(tmp_path / "r.csv").columns[0].values == [
            datetime(2024, 1, 15, hours[0]), datetime(2024, 7, 15, hours[1])]


def test_postgres_results_name_the_session_zone_their_timestamps_are_in(
        pg_server: str, pg_database: Callable[..., str],
        make_registry: Callable[..., DbConnectionConfigs]) -> None:
    dbname = pg_database(script="CREATE TABLE ev (id int, at timestamptz, local timestamp); "
                                "INSERT INTO ev VALUES (1, '2024-01-15 09:00Z', '2024-01-15 10:00'),"
                                " (2, '2024-07-15 08:00Z', '2024-07-15 10:00');")
    with psycopg.connect(pg_server, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{dbname}" SET timezone TO \'Europe/Berlin\'')
    ctx = OpsContext(make_registry(pg_config("tz", dbname)))
    try:
        result = db_execute_sql_op(ctx, "tz", "SELECT * FROM ev ORDER BY id")
        numbers = db_execute_sql_op(ctx, "tz", "SELECT id FROM ev")
    finally:
        ctx.close()
    assert result.time_zone == "Europe/Berlin" and numbers.time_zone is None
    assert "| 1 | 2024-01-15 10:00:00+01 | 2024-01-15 10:00:00 |" in result.render()
    df = read_dataframe(ctx.workspace / result.csv_filename, 10)
    assert [t.isoformat() for t in df["at"]] == ["2024-01-15T10:00:00+01:00",
                                                 "2024-07-15T10:00:00+02:00"]
    assert df["local"].dt.tz is None  # a timestamp without a zone stays as written
    assert markdown_table(df, 10)[2] == "| 1 | 2024-01-15 10:00:00+01:00 | 2024-01-15 10:00:00 |"


def test_duckdb_results_name_the_session_zone_their_timestamps_are_in(tmp_path: Path) -> None:
    """DuckDB's session zone is the process's (``TZ``): a child process with one set."""
    script = f"""
import duckdb, json
from pathlib import Path
from conftest import duckdb_config, write_dbs_yaml
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
path = Path({str(tmp_path / "d.duckdb")!r})
with duckdb.connect(str(path)) as db:
    db.execute("CREATE TABLE ev AS SELECT TIMESTAMPTZ '2024-01-15 09:00Z' AS ts "
               "UNION ALL SELECT TIMESTAMPTZ '2024-07-15 08:00Z'")
folder = Path({str(tmp_path)!r})
registry = DbConnectionConfigs.load(write_dbs_yaml(folder, [duckdb_config("d", path)]),
                                    workspace=folder / "workspace")
ctx = OpsContext(registry)
result = db_execute_sql_op(ctx, "d", "SELECT ts FROM ev ORDER BY ts")
ctx.close()
print(json.dumps([result.time_zone, result.preview]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).parent,
                          env={**os.environ, "TZ": "Europe/Berlin"})
    assert done.returncode == 0, done.stderr
    zone, preview = json.loads(done.stdout.splitlines()[-1])
    assert zone == "Europe/Berlin"
    assert "2024-01-15 10:00:00+01" in preview and "2024-07-15 10:00:00+02" in preview


def test_dataframe_booleans_with_a_missing_value_and_text_that_only_looks_alike(
        tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text('b,c,word,when,said,code,sign\nt,f,t,2024-01-31,true,1e5,+5\n'
                    'f,,true,,false,2e3,+6\n')
    df = read_dataframe(path, 10)
    assert df["b"].dtype == bool and str(df["c"].dtype) == "boolean"
    assert df["c"].isna().tolist() == [False, True]
    assert df["word"].tolist() == ["t", "true"]  # not only t and f: text
    # What pandas takes for booleans and numbers the dialect never writes so: text.
    assert [df[c].tolist() for c in ("said", "code", "sign")] == [
        ["true", "false"], ["1e5", "2e3"], ["+5", "+6"]]
    assert markdown_table(df, 10)[2:] == ["| t | f | t | 2024-01-31 | true | 1e5 | +5 |",
                                          "| f |  | true |  | false | 2e3 | +6 |"]


# -- one number formatting for previews ------------------------------------------------------

def test_preview_numbers_drop_a_decimals_trailing_zeros_in_number_columns_only() -> None:
    rows = [["15375.000000000000", "2.50", "1e+15", "0.000", "-0.50", "007", "1.10", ""],
            ["1", "3", "1.5e-07", "10.0", "", "8", "v1.2", "x"]]
    assert preview_numbers(rows) == [
        ["15375", "2.5", "1e+15", "0", "-0.5", "007", "1.10", ""],
        ["1", "3", "1.5e-07", "10", "", "8", "v1.2", "x"]]  # a column with text keeps its text


@pytest.mark.parametrize(("cell", "shown"), [
    ("17233.49000000001", "17233.49"), ("18491.549999999992", "18491.55"),
    ("0.30000000000000004", "0.3"), ("-0.30000000000000004", "-0.3"),
    ("1234567.8999999999", "1234567.9"), ("100.00000000000001", "100"),
    # real digits, not noise: as they are
    ("3141.592653589793", "3141.592653589793"), ("53627.17522996813", "53627.17522996813"),
    ("0.1234567890123456", "0.1234567890123456"), ("12345678901234567890", "12345678901234567890"),
    ("12345678901234567890.5", "12345678901234567890.5"), ("1.5e-07", "1.5e-07"),
])
def test_preview_numbers_drop_a_float_sums_rounding_noise(cell: str, shown: str) -> None:
    """A DuckDB or PostgreSQL sum of doubles comes in all its 17 digits; the CSV keeps them."""
    assert preview_numbers([[cell]]) == [[shown]]


@pytest.mark.parametrize("special", ["postgres", "sqlite"], indirect=True)
def test_the_mcp_preview_and_the_cli_table_write_numbers_alike(special: tuple) -> None:
    """PostgreSQL's numeric comes as the server's text with its whole scale (COPY), SQLite's as
    a float; the CLI reads them back as floats: all show 15375 and 2.5."""
    ctx, _ = special
    cast = "::numeric" if ctx.config("special").type.value == "postgres" else ""
    query = (f"SELECT 15375.000000000000{cast} AS total, 2.50{cast} AS price, "
             f"count(*) AS n FROM special")
    result = db_execute_sql_op(ctx, "special", query)
    assert "| 15375 | 2.5 | 6 |" in result.render().splitlines()
    df = read_dataframe(ctx.workspace / result.csv_filename, 10)
    assert markdown_table(df, 10)[2] == "| 15375 | 2.5 | 6 |"
