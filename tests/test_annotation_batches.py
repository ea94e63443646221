"""The offline steps over many tables per statement (Postgres) give what the per-table path
gives, and the number of statements follows the number of batches, not of tables."""

from __future__ import annotations

import copy
import math

import pytest
from collections.abc import Callable
from typing import Any

from sqlalchemy import text

from conftest import pg_config

from nl2sql.db.base import create_connection
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.inspection.enums import screen_table, screen_tables
from nl2sql.inspection.postgres import PostgresSchemaInspector
from nl2sql.inspection.samples import SampleSettings, collect_sample, collect_samples
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op, db_get_row_by_id_op
from nl2sql.schema.models import DbInfo
from nl2sql.annotation.pipeline import AnnotateOptions, annotate_database, run_offline_steps, \
    run_offline_steps_many
from tests.test_enums import captured_statements

WIDE_COLUMNS = ", ".join(f"c{i} integer DEFAULT {i}" for i in range(110))
SCRIPT = f"""
CREATE SCHEMA "Sales Dept";
CREATE DOMAIN positive AS integer CHECK (VALUE > 0);
CREATE DOMAIN small_positive AS positive CHECK (VALUE < 1000);
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE pair AS (a integer, b text);

CREATE TABLE "Odd ""Quoted"" Table" (
    "Id" integer PRIMARY KEY,
    "Flag" boolean,
    "when" timestamptz,
    amount numeric(10, 3),
    code char(5),
    span interval,
    doc jsonb,
    tags integer[],
    raw bytea,
    qty small_positive,
    feeling mood,
    couple pair,
    addr inet,
    "array" text,
    i text,
    n text,
    v text,
    t_ text,
    ratio double precision,
    day date,
    status varchar(20)
);
INSERT INTO "Odd ""Quoted"" Table"
SELECT g, g % 2 = 0, timestamptz '2024-01-02 03:04:05+00' + g * interval '1 day',
       g * 1.5, 'ab', g * interval '90 minutes', jsonb_build_object('k', g, 'l', 'x y'),
       ARRAY[g, NULL, 3], '\\x0102'::bytea, g, (ARRAY['sad', 'ok', 'happy']::mood[])[1 + g % 3],
       CASE WHEN g % 3 = 0 THEN ROW(NULL, NULL)::pair ELSE ROW(g, 'p,"q"')::pair END,
       ('10.0.0.' || g)::inet, 'arr' || g, 'i', CASE WHEN g % 4 = 0 THEN NULL ELSE 'n' || (g % 2) END,
       E'line\\none', '', CASE WHEN g = 1 THEN 'NaN'::float8 ELSE g / 3.0 END,
       date '2024-02-28' + g, (ARRAY['new', 'paid', 'shipped'])[1 + g % 3]
FROM generate_series(1, 40) AS g;

CREATE TABLE empty_never_analyzed (id serial PRIMARY KEY, status text);
CREATE TABLE emptied (id serial PRIMARY KEY, status text);
INSERT INTO emptied (status) SELECT 'x' FROM generate_series(1, 10);
DELETE FROM emptied;
CREATE TABLE no_key (label text, size text);
INSERT INTO no_key VALUES ('b', 'S'), ('a', 'M'), ('c', NULL), ('a', 'L');
CREATE TABLE "Sales Dept"."Orders" ("Order Id" integer PRIMARY KEY, "State" text);
INSERT INTO "Sales Dept"."Orders" SELECT g, (ARRAY['open', 'closed'])[1 + g % 2]
FROM generate_series(1, 30) AS g;
CREATE TABLE "Sales Dept"."Empty" ("Order Id" integer PRIMARY KEY);
CREATE TABLE wide ({WIDE_COLUMNS});
INSERT INTO wide DEFAULT VALUES;
CREATE VIEW "Sales Dept"."Open Orders" AS
    SELECT * FROM "Sales Dept"."Orders" WHERE "State" = 'open';
"""


@pytest.fixture
def odd_db(pg_database: Callable[..., str]) -> str:
    return pg_database(script=SCRIPT)


def _extract(config) -> tuple[DbInfo, object]:  # noqa: ANN001
    connection = create_connection(config)
    return DbSchemaExtractor(connection).extract(), connection


def test_batched_samples_counts_and_enums_equal_the_per_table_path(odd_db: str) -> None:
    config = pg_config("odd", odd_db, schema=["public", "Sales Dept"])
    info, connection = _extract(config)
    try:
        names = {t.name for t in info.tables}
        assert {'public.Odd "Quoted" Table', "Sales Dept.Orders", "Sales Dept.Open Orders",
                "public.empty_never_analyzed", "public.wide"} <= names
        # Row counts: the catalog's exact zero for empty tables, a count for the others.
        with connection.connect() as conn:
            for table in info.tables:
                if table.is_view:
                    continue
                schema, name = table.schema_name, table.relation_name
                quoted = f'"{schema}"."{name.replace(chr(34), chr(34) * 2)}"'
                assert table.row_count == conn.execute(
                    text(f"SELECT count(*) FROM {quoted}")).scalar(), table.name

        settings = SampleSettings()
        batched = collect_samples(connection, info.tables, settings)
        for table in info.tables:
            assert batched[table.name] == collect_sample(connection, table, settings), table.name
        odd = batched['public.Odd "Quoted" Table']
        # As a query's result writes them (not Python's False, +00:00, 1:30:00, {'k': 1})
        assert odd.splitlines()[1].startswith(
            '1,f,2024-01-03 03:04:05+00,1.500,ab   ,01:30:00,"{""k"": 1, ""l"": ""x y""}",'
            '"[1, null, 3]",<2 bytes>,')

        per_table, many = copy.deepcopy(info), copy.deepcopy(info)
        per_values = {}
        for table in per_table.tables:
            per_values[table.name] = run_offline_steps(connection, table, AnnotateOptions())
        many_values = run_offline_steps_many(connection, many.tables, AnnotateOptions())
        assert many_values == per_values
        assert many.model_dump() == per_table.model_dump()
        status = many.table('public.Odd "Quoted" Table').column("status")
        assert status.is_enum and status.enum_values == ["paid", "new", "shipped"]  # by count

        # screen_tables on its own, with the statistics it hands out
        seen = {}
        alone = copy.deepcopy(info)
        screen_tables(connection, alone.tables, keep_values=5,
                      on_stats=lambda t, stats: seen.__setitem__(t.name, stats))
        for table in copy.deepcopy(info).tables:
            expected = {}
            screen_table(connection, table, keep_values=5, on_stats=expected.update)
            assert seen.get(table.name, {}) == expected, table.name
    finally:
        connection.dispose()


def _many_tables_script(tables: int) -> str:
    parts = []
    for i in range(tables):
        parts.append(f"CREATE TABLE t{i:03d} (id integer PRIMARY KEY, status text, note text);")
        if i % 3:  # two of three tables have rows, the rest stay empty
            parts.append(f"INSERT INTO t{i:03d} SELECT g, 's' || (g % 3), 'note ' || g "
                         f"FROM generate_series(1, 25) AS g;")
    return "\n".join(parts)


def test_statements_follow_batches_not_tables(pg_database: Callable[..., str],
                                              monkeypatch: pytest.MonkeyPatch,
                                              tmp_path) -> None:  # noqa: ANN001
    tables, batch = 60, 8
    monkeypatch.setattr(PostgresSchemaInspector, "batch_size", batch)
    config = pg_config("many", pg_database(script=_many_tables_script(tables)))
    info, connection = _extract(config)
    try:
        filled = sum(1 for t in info.tables if t.row_count)
        assert filled == 40
        with captured_statements(connection) as statements:
            run_offline_steps_many(connection, info.tables, AnnotateOptions())
        batches = math.ceil(filled / batch)
        # per batch: the sample rows, their column types, the screening counts; once per
        # step: the catalogue's version (views that call a user function are not sampled);
        # the catalogue itself (in a savepoint with JIT off) was read by the extraction (the
        # tables whose rows may be counted), and is read again only when its version moved
        functions = [s for s in statements if any(
            mark in s for mark in ("user_schema AS", "xmin", "nl2sql_catalogue", "jit = off"))]
        assert len([s for s in functions if "user_schema AS" in s]) == 0
        assert len(functions) <= 6
        assert len(statements) - len(functions) <= 3 * batches
        empty = [t.name for t in info.tables if t.row_count == 0]
        assert not any(f'"{name}"' in s for s in statements for name in empty)

        with captured_statements(connection) as statements:
            annotate_database(config, tmp_path, connection=connection)
        # extraction's catalog queries, row counts, the batches above: not one per table
        assert len(statements) <= 30 + 3 * batches < tables
        assert len([s for s in statements if "user_schema AS" in s]) <= 1
    finally:
        connection.dispose()


class _Recorder:
    """A ProgressReporter recording, for each event, how many batch statements had run."""

    def __init__(self, statements: list[str]) -> None:
        self.statements = statements
        self.events: list[tuple[str, str, int]] = []

    def start(self, phase: str, total: int) -> None:
        self.events.append(("start", f"{phase} {total}", len(self.statements)))

    def advance(self, item: str) -> None:
        self.events.append(("advance", item, len(self.statements)))

    def finish(self) -> None:
        self.events.append(("finish", "", len(self.statements)))


def test_progress_moves_as_the_batches_end(pg_database: Callable[..., str],
                                           monkeypatch: pytest.MonkeyPatch,
                                           tmp_path) -> None:  # noqa: ANN001
    """600 tables sat at 0/600 for 12 s and then jumped: each table now counts as sampled and
    as screened when its batch ends, and the bar is there from the first step."""
    tables, batch = 60, 8
    monkeypatch.setattr(PostgresSchemaInspector, "batch_size", batch)
    config = pg_config("many", pg_database(script=_many_tables_script(tables)))
    connection = create_connection(config)
    try:
        with captured_statements(connection) as statements:
            progress = _Recorder(statements)
            annotate_database(config, tmp_path, connection=connection, progress=progress)
    finally:
        connection.dispose()
    assert progress.events[0][:2] == ("start", "reading the schema 1")
    phase = [what for kind, what, _ in progress.events if kind == "start"].index(
        f"sample rows and enum screening {2 * tables}")
    assert phase == 1
    started = next(i for i, (kind, _, _) in enumerate(progress.events) if kind == "start"
                   and i > 0)
    advances = [seen for kind, _, seen in progress.events[started:] if kind == "advance"]
    assert len(advances) == 2 * tables
    # Reported while the batches run, not all after the last one.
    assert len(set(advances)) >= math.ceil(40 / batch) and advances[0] < advances[-1]


@pytest.mark.postgres
def test_dates_python_lacks_and_intervals_read_as_postgres_writes_them(
        make_db: Callable[..., Any], make_registry: Callable[..., Any]) -> None:
    """'infinity' and BC dates made annotate-schema stop with "internal error (DataError)"
    (psycopg: "date too large"); an interval of months read as 30-day months ('-3 mons' was
    '-90 days, 0:00:00' in the samples and '-2160:00:00' in a row lookup)."""
    db = make_db("postgres", "calendar", script=(
        "CREATE TABLE event (id integer PRIMARY KEY, day date, at timestamp, "
        "zoned timestamptz, span interval);"
        "INSERT INTO event VALUES (1, '4713-01-01 BC', '-infinity', 'infinity', '-3 mons'),"
        "(2, 'infinity', '12000-01-01 00:00', '2024-01-01 10:00+00', '1 day 02:03:04.5');"))
    registry = make_registry(db.config)
    result = annotate_database(registry.get("calendar"), registry.data_dir)
    sample = result.db_info.table("event").sample_data_csv.splitlines()
    assert sample[1:] == ["1,4713-01-01 BC,-infinity,infinity,-3 mons",
                          "2,infinity,12000-01-01 00:00:00,2024-01-01 10:00:00+00,"
                          "1 day 02:03:04.5"]
    row = db_get_row_by_id_op(OpsContext(registry), "calendar", "event", 1).render()
    assert "day: 4713-01-01 BC" in row and "at: -infinity" in row and "span: -3 mons" in row


@pytest.mark.postgres
def test_an_hstore_sample_is_written_as_its_query_result(
        make_db: Callable[..., Any], make_registry: Callable[..., Any]) -> None:
    """SQLAlchemy's native hstore made the sample a dict, written as JSON ({"a": "1"}), where
    a query's result has the server's text."""
    db = make_db("postgres", "attrs", script=(
        "CREATE EXTENSION IF NOT EXISTS hstore;"
        "CREATE TABLE prop (id integer PRIMARY KEY, attrs hstore);"
        "INSERT INTO prop VALUES (1, 'a=>1, b=>\"x y\"');"))
    registry = make_registry(db.config)
    result = annotate_database(registry.get("attrs"), registry.data_dir)
    answer = db_execute_sql_op(OpsContext(registry), "attrs", "SELECT id, attrs FROM prop")
    written = (OpsContext(registry).workspace / answer.csv_filename).read_text()
    assert written.splitlines()[1] == '1,"""a""=>""1"", ""b""=>""x y"""'
    assert result.db_info.table("prop").sample_data_csv.splitlines()[1] == written.splitlines()[1]
