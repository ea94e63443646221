"""The Spark backend against a real Spark Connect server (tests/spark_server.py): config and
session, catalog inspection, annotation, operations and MCP tools on Chinook, bounds (row cap,
time limit with the next call answered, a restarted server), and nl2sql-ask end to end."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from stub_openai import MODEL_STRING, StubOpenAI, messages_text, tool_call

from conftest import SPARK_ENDLESS, spark_config, spark_db, write_dbs_yaml
from nl2sql.schema.cache import load_db_info, save_db_info
from nl2sql.config.registry import DbConnectionConfig, DbConnectionConfigs
from nl2sql.db.base import create_connection, create_operations
from nl2sql.db.spark_sql import SparkRemote, resolve_remote
from nl2sql.errors import (ConfigError, DatabaseConnectionError, QueryExecutionError,
                          QueryTimeoutError)
from nl2sql.schema.formatting import quote_identifier
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.inspection.implied_keys import infer_foreign_keys
from nl2sql.inspection.spark import SparkSchemaInspector
from nl2sql.operations import OpsContext, db_execute_sql_op, db_get_row_by_id_op
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.workspace.results import CsvResultWriter

ROCK = ("SELECT count(*) AS tracks FROM track t JOIN genre g ON g.GenreId = t.GenreId "
        "WHERE g.Name = 'Rock'")


# -- config and remote (no server) -----------------------------------------------------------

def test_remote_forms_and_redaction() -> None:
    plain = SparkRemote.parse("sc://spark-host", db_id="w")
    assert (plain.host, plain.port, plain.url()) == ("spark-host", 15002,
                                                      "sc://spark-host:15002")
    remote = SparkRemote.parse("sc://h:443/;token=abc;use_ssl=true", db_id="w")
    assert remote.param("TOKEN") == "abc" and remote.param("use_ssl") == "true"
    assert remote.redacted() == "sc://h:443/;token=***;use_ssl=true"
    assert "abc" in remote.url() and "abc" not in remote.redacted()
    for bad in ("http://h:15002", "sc://:15002", "sc://h:15002/;token"):
        with pytest.raises(ConfigError, match="remote"):
            SparkRemote.parse(bad, db_id="w")


def test_token_from_enc_value_or_password_env(monkeypatch: pytest.MonkeyPatch) -> None:
    from nl2sql.config import secrets

    secrets.create_key()
    encrypted = secrets.encrypt_value("s3cret")
    resolved = resolve_remote(f"sc://h:15002/;token={encrypted};use_ssl=true", db_id="w")
    assert resolved.param("token") == "s3cret"
    monkeypatch.setenv("SPARK_TOKEN", "from-env")
    config = DbConnectionConfig(db_id="w", type="spark", remote="sc://h:15002",
                                password_env="SPARK_TOKEN")
    assert resolve_remote(config.remote, db_id="w", password=config.resolve_password()) \
        .param("token") == "from-env"


def test_dbs_yaml_entry_and_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_HOST", "lake.example")
    (tmp_path / "dbs.yaml").write_text(
        "databases:\n  warehouse:\n    type: spark\n    remote: sc://${SPARK_HOST}:15002\n"
        "    database: sales\n    catalog: main\n    query_timeout_seconds: 5\n")
    config = DbConnectionConfigs.load(tmp_path / "dbs.yaml").get("warehouse")
    assert config.remote == "sc://lake.example:15002" and config.database == "sales"
    assert config.backend.label == "Spark SQL" and config.backend.sqlglot_dialect == "spark"
    assert quote_identifier("Order Details", "spark") == "`Order Details`"
    (tmp_path / "dbs.yaml").write_text("databases:\n  warehouse:\n    type: spark\n")
    with pytest.raises(ConfigError, match="'remote' is required for type spark"):
        DbConnectionConfigs.load(tmp_path / "dbs.yaml")


def test_unreachable_server_is_one_line_without_secrets() -> None:
    from spark_server import free_port

    config = spark_config("w", f"sc://127.0.0.1:{free_port()}/;token=hush", "default")
    connection = create_connection(config)
    started = time.monotonic()
    with pytest.raises(DatabaseConnectionError) as caught:
        connection.session().sql("SELECT 1").collect()  # the first call reaches the server
    message = str(caught.value)
    assert "\n" not in message and "hush" not in message and "Spark" in message
    assert time.monotonic() - started < 30


# -- with the server -------------------------------------------------------------------------



@pytest.fixture(scope="module")
def chinook_cfg(spark_server, spark_chinook) -> DbConnectionConfig:  # noqa: ANN001
    return spark_config("chinook", spark_server.remote, spark_chinook, query_timeout_seconds=20)


@pytest.fixture(scope="module")
def chinook_info(chinook_cfg: DbConnectionConfig):  # noqa: ANN201
    connection = create_connection(chinook_cfg)
    try:
        info = DbSchemaExtractor(connection).extract("chinook")
        info.attach()
        infer_foreign_keys(connection, info)  # what annotate-schema adds (implied keys)
    finally:
        connection.dispose()
    return info


@pytest.mark.spark
def test_chinook_inspection(chinook_info) -> None:  # noqa: ANN001
    tables = {t.name: t for t in chinook_info.tables}
    assert len(tables) == 11 and not any(t.is_view for t in tables.values())
    assert sum(len(t.columns) for t in tables.values()) == 64
    assert chinook_info.db_type == "spark" and chinook_info.schema_name == "chinook"
    track = tables["track"]
    assert track.row_count == 3503 and not track.row_count_is_estimate
    assert track.model_extra["row_count_source"] == "count"
    assert [c.data_type for c in track.columns][:3] == ["INT", "STRING", "INT"]
    assert track.column("UnitPrice").data_type == "DECIMAL(10,2)"
    # No constraints in this catalog: primary keys inferred from names, foreign keys implied
    # (names, types and values), both marked as inferred.
    assert track.primary_key == ["TrackId"] and track.model_extra["key_source"] == "inferred"
    links = {(tuple(fk.columns), fk.referenced_table) for fk in track.foreign_keys}
    assert links == {(("AlbumId",), "album"), (("GenreId",), "genre"),
                     (("MediaTypeId",), "mediatype")}
    assert all(fk.model_extra.get("inferred") for fk in track.foreign_keys)
    assert tables["playlisttrack"].primary_key == []  # composite: no single-column key


@pytest.mark.spark
def test_catalog_details_statistics_views_and_bounded_counts(
        request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    db = spark_db(request, "lake", script=(
        "CREATE TABLE events (id INT COMMENT 'event key', kind STRING, day STRING) "
        "USING parquet PARTITIONED BY (day) COMMENT 'Clicks and views' "
        "TBLPROPERTIES ('team' = 'web', 'quality' = 'gold');\n"
        "INSERT INTO events SELECT id, IF(id % 3 = 0, 'view', 'click'), "
        "IF(id % 2 = 0, '2024-01-01', '2024-01-02') FROM range(300);\n"
        "ANALYZE TABLE events COMPUTE STATISTICS;\n"
        "CREATE TABLE big AS SELECT id, CAST(id % 4 AS STRING) AS code FROM range(120000);\n"
        "CREATE VIEW clicks COMMENT 'only clicks' AS SELECT * FROM events WHERE kind = 'click'"))
    monkeypatch.setattr(SparkSchemaInspector, "count_bound", 100_000)
    registry_dir = request.getfixturevalue("tmp_path")
    result = annotate_database(db.config, registry_dir / "data")
    tables = {t.name: t for t in result.db_info.tables}
    events, big, clicks = tables["events"], tables["big"], tables["clicks"]
    assert events.description == "Clicks and views" and events.description_source == "comment"
    assert events.column("id").description == "event key"
    assert events.model_extra["partition_columns"] == ["day"]
    assert events.model_extra["table_properties"].items() >= {"team": "web", "quality": "gold"}.items()
    assert events.row_count == 300 and events.model_extra["row_count_source"] == "statistics"
    assert events.column("kind").is_enum and set(events.column("kind").enum_values) == {
        "view", "click"}
    assert clicks.is_view and clicks.row_count is None and clicks.description == "only clicks"
    # Over the bound: a lower bound, marked as an estimate; screening reads a sample.
    assert big.row_count == 100_000 and big.row_count_is_estimate
    assert big.model_extra["row_count_source"] == "bounded_count"
    assert big.column("code").is_enum and big.column("code").enum_values
    assert big.sample_data_csv.startswith("id,code\n")


@pytest.mark.spark
@pytest.mark.slow
def test_annotate_schema_with_a_model_annotates_all_64_columns(
        chinook_cfg: DbConnectionConfig, tmp_path: Path) -> None:
    path = write_dbs_yaml(tmp_path, [chinook_cfg])
    env = {**os.environ, "NL2SQL_CONFIG": str(path), "NL2SQL_MODEL": "test"}
    done = subprocess.run([str(Path(sys.executable).parent / "annotate-schema"), "chinook"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "11 tables" in done.stdout + done.stderr and "Traceback" not in done.stderr
    info = load_db_info(tmp_path / "data", "chinook")
    columns = [c for t in info.tables for c in t.columns]
    assert len(info.tables) == 11 and len(columns) == 64
    assert all(c.description and c.description_source == "llm" for c in columns)
    assert all(t.sample_data_csv for t in info.tables)


@pytest.fixture(scope="module")
def ops_ctx(chinook_cfg, chinook_info, tmp_path_factory):  # noqa: ANN001, ANN201
    folder = tmp_path_factory.mktemp("spark_ops")
    path = write_dbs_yaml(folder, [chinook_cfg])
    save_db_info(chinook_info, folder / "data")
    registry = DbConnectionConfigs.load(path, workspace=folder / "ws")
    ctx = OpsContext(registry)
    yield ctx
    ctx.close()


@pytest.mark.spark
def test_execute_rock_count_and_row_lookup_with_inferred_keys(ops_ctx) -> None:  # noqa: ANN001
    result = db_execute_sql_op(ops_ctx, "chinook", ROCK, nl_query="Rock tracks?")
    assert result.row_count == 1
    assert (ops_ctx.workspace / result.csv_filename).read_text() == "tracks\n1297\n"
    assert result.column_types == ["integer"]  # Spark's bigint, as the metadata records it
    typed = db_execute_sql_op(ops_ctx, "chinook", "SELECT CAST(TrackId AS STRING) AS code, "
                              "UnitPrice, CAST('2024-01-02' AS DATE) AS day FROM track "
                              "ORDER BY TrackId LIMIT 2")
    assert typed.column_types == ["text", "number", "date"]
    row = db_get_row_by_id_op(ops_ctx, "chinook", "track", 1)
    text = row.render()
    assert "For Those About To Rock" in text and "genre" in text.lower()


@pytest.mark.spark
def test_intervals_maps_floats_and_variants_as_written(ops_ctx) -> None:  # noqa: ANN001
    """A day-time interval came out as Python's '1 day, 2:03:04.500000', a year-month one
    failed with "Spark rejected the query: 21" (pyarrow reads no such type) and a calendar
    interval was the list [14, 3, 14706500000000]."""
    result = db_execute_sql_op(
        ops_ctx, "chinook", "SELECT INTERVAL '1 02:03:04.5' DAY TO SECOND AS a, INTERVAL "
        "'-26:30' HOUR TO MINUTE AS b, INTERVAL '1-2' YEAR TO MONTH AS c, "
        "make_interval(1, 2, 0, 3, 4, 5, 6.5) AS d")
    assert (ops_ctx.workspace / result.csv_filename).read_text() == (
        "a,b,c,d\n26:03:04.5,-26:30:00,INTERVAL '1-2' YEAR TO MONTH,"
        "1 years 2 months 3 days 4 hours 5 minutes 6.5 seconds\n")
    # A map was its (key, value) pairs, a FLOAT its double's digits, a VARIANT its bytes.
    other = db_execute_sql_op(ops_ctx, "chinook", "SELECT map('k', 1) AS m, CAST(0.1 AS FLOAT) "
                              "AS f, parse_json('{\"a\": [1, 2]}') AS j")
    assert (ops_ctx.workspace / other.csv_filename).read_text() == (
        'm,f,j\n"{""k"": 1}",0.1,"{""a"":[1,2]}"\n')
    with pytest.raises(QueryExecutionError, match=r"has a value nl2sql cannot read \(KeyError: "
                       r"21\); cast unusual columns \(intervals, nested values\) to STRING"):
        db_execute_sql_op(ops_ctx, "chinook", "SELECT array(INTERVAL '1-2' YEAR TO MONTH) AS e")


@pytest.mark.spark
def test_a_variant_over_the_value_limit_is_refused(chinook_cfg: DbConnectionConfig,
                                                  chinook_info, tmp_path: Path) -> None:  # noqa: ANN001
    """A VARIANT goes as its JSON text, so the text's size is checked as any string's."""
    small = chinook_cfg.model_copy(update={"max_value_bytes": 1024})
    ops = create_operations(create_connection(small), chinook_info)
    writer = CsvResultWriter(tmp_path / "big.csv")
    with pytest.raises(QueryExecutionError, match=r"larger than the limit of 1,024 bytes"):
        ops.execute_select_query("SELECT parse_json(to_json(collect_list(Name))) AS j "
                                 "FROM artist", writer)  # 275 names, ~4,000 bytes
    writer.discard()


@pytest.mark.spark
def test_results_stream_with_row_cap_and_equal_direct_query(
        chinook_cfg: DbConnectionConfig, chinook_info, spark_server, tmp_path: Path) -> None:  # noqa: ANN001
    ops = create_operations(create_connection(chinook_cfg), chinook_info)
    sql = "SELECT InvoiceLineId, TrackId, UnitPrice FROM invoiceline ORDER BY InvoiceLineId"
    writer = CsvResultWriter(tmp_path / "lines.csv")
    stats = ops.execute_select_query(sql, writer)
    writer.discard()
    assert stats.row_count == 2240 and not stats.truncated
    capped = CsvResultWriter(tmp_path / "capped.csv")
    stats = ops.execute_select_query(sql, capped, max_rows=100)
    capped._close()
    rows = list(csv.reader(capped._tmp.open()))
    assert stats.truncated and stats.row_count == 100 and len(rows) == 101
    session = spark_server.session()
    try:
        direct = session.sql("SELECT InvoiceLineId, TrackId, UnitPrice FROM chinook.invoiceline "
                             "ORDER BY InvoiceLineId LIMIT 100").collect()
    finally:
        session.stop()
    assert rows[1:] == [[str(v) for v in row] for row in direct]
    ops.connection.dispose()


@pytest.mark.spark
def test_a_query_sends_the_server_only_what_it_needs(
        chinook_cfg: DbConnectionConfig, chinook_info, tmp_path: Path) -> None:  # noqa: ANN001
    """A query costs the server four requests: the catalogue's two SHOW commands (Chinook has
    no view), whose rows come back with their answers (not sent back to be read), the
    analysis of the wrapped query (its columns' types) and the run; its text is never sent
    ahead on its own. A command's rows read here are the rows the server reads back."""
    from spark_server import requests_sent

    from nl2sql.db.spark import command_rows

    ops = create_operations(create_connection(chinook_cfg), chinook_info)
    ops.execute_select_query(ROCK, CsvResultWriter(tmp_path / "warm.csv"))  # the session made
    writer = CsvResultWriter(tmp_path / "rock.csv")
    with requests_sent() as sent:
        assert ops.execute_select_query(ROCK, writer).row_count == 1
    assert writer.preview == [["1297"]]
    assert sent == ["sql_command", "sql_command", "analyze schema", "sql"], sent
    session = ops.connection.session()
    shown = session.sql("SHOW TABLES IN chinook")
    assert command_rows(shown) == shown.toArrow() and command_rows(shown).num_rows == 11
    assert command_rows(session.sql(ROCK)) is None  # a query's rows are not in its answer
    ops.connection.dispose()


@pytest.mark.spark
def test_a_runaway_query_is_interrupted_and_the_next_call_answers(
        chinook_cfg: DbConnectionConfig, chinook_info, tmp_path: Path) -> None:  # noqa: ANN001
    ops = create_operations(create_connection(chinook_cfg), chinook_info)
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError, match="stopped after 3 s"):
        ops.execute_select_query(SPARK_ENDLESS, CsvResultWriter(tmp_path / "r.csv"),
                                 timeout_seconds=3)
    elapsed = time.monotonic() - started
    assert 3 <= elapsed < 15, elapsed
    started = time.monotonic()
    writer = CsvResultWriter(tmp_path / "next.csv")
    assert ops.execute_select_query(ROCK, writer).row_count == 1
    assert writer.preview == [["1297"]] and time.monotonic() - started < 10
    ops.connection.dispose()


@pytest.mark.spark
def test_bad_sql_is_one_line_with_the_query_line(chinook_cfg, chinook_info, tmp_path) -> None:  # noqa: ANN001

    ops = create_operations(create_connection(chinook_cfg), chinook_info)
    with pytest.raises(QueryExecutionError) as caught:
        ops.execute_select_query("SELECT Name\nFROM genre\nWHERE nope = 1",
                                 CsvResultWriter(tmp_path / "x.csv"))
    message = str(caught.value)
    assert "\n" not in message and "nope" in message and "JVM" not in message
    ops.connection.dispose()


@pytest.mark.spark
async def test_mcp_tools_answer_rock_count(ops_ctx) -> None:  # noqa: ANN001
    from mcp import Client

    from nl2sql.mcp import build_server

    registry = ops_ctx.configs
    server = build_server(registry.config_path, workspace=registry.workspace)
    async with Client(server) as client:
        listed = await client.call_tool("db_list", {})
        assert "chinook" in listed.content[0].text and "spark" in listed.content[0].text.lower()
        schema = await client.call_tool("db_show_schema", {"db_id": "chinook"})
        assert not schema.is_error and "track" in schema.content[0].text
        result = await client.call_tool("db_execute_sql", {"db_id": "chinook", "query": ROCK})
        assert not result.is_error and "1297" in result.content[0].text
        denied = await client.call_tool(
            "db_execute_sql", {"db_id": "chinook", "query": "SELECT * FROM csv.`/etc/passwd`"})
        assert denied.is_error and "Path-based relations" in denied.content[0].text
        row = await client.call_tool("db_get_row_by_id",
                                     {"db_id": "chinook", "table": "genre", "row_id": 1})
        assert not row.is_error and "Rock" in row.content[0].text


@pytest.mark.spark
def test_nl2sql_ask_against_the_stub_model(ops_ctx, stub_openai: StubOpenAI) -> None:  # noqa: ANN001
    stub_openai.add(tool_call("final_result", sql=ROCK, explanation="Counts the Rock tracks."))
    env = {**os.environ, "NL2SQL_CONFIG": str(ops_ctx.configs.config_path),
           "NL2SQL_WORKSPACE": str(ops_ctx.workspace)}
    done = subprocess.run([str(Path(sys.executable).parent / "nl2sql-ask"),
                           "How many tracks are in the Rock genre?", "--db", "chinook",
                           "--model", MODEL_STRING, "--json"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["sql"] == ROCK and answer["df"] == [{"tracks": 1297}]
    prompt = messages_text(stub_openai.requests[0])
    assert "Spark SQL dialect" in prompt and "backticks" in prompt


@pytest.mark.spark
@pytest.mark.slow
def test_session_is_recreated_after_a_server_restart(tmp_path: Path) -> None:
    """A second, private server (the shared one keeps its in-memory catalog)."""
    from spark_server import SparkConnectServer

    server = SparkConnectServer(tmp_path / "restart")
    server.start()
    try:
        config = spark_config("r", server.remote, "default")
        connection = create_connection(config)
        ops = create_operations(connection, load_db_info_stub("r"))
        assert ops.execute_select_query("SELECT 1 AS x", CsvResultWriter(tmp_path / "a.csv")) \
            .row_count == 1
        first = connection.session()
        server.restart()
        writer = CsvResultWriter(tmp_path / "b.csv")
        assert ops.execute_select_query("SELECT 2 AS x", writer).row_count == 1
        assert writer.preview == [["2"]] and connection.session() is not first
        connection.dispose()
    finally:
        server.stop()


def load_db_info_stub(db_id: str):  # noqa: ANN201
    from nl2sql.schema.models import DbInfo

    return DbInfo(db_id=db_id, db_type="spark")


@pytest.mark.spark
def test_arrow_batches_write_the_row_formatter_bytes(
        chinook_cfg: DbConnectionConfig, chinook_info, spark_server, tmp_path: Path) -> None:  # noqa: ANN001
    """Spark's Arrow batches go through nl2sql.workspace.csv_arrow when every column type allows it: the
    file is the one the row formatter writes for the same values."""
    from nl2sql.workspace.csv_arrow import writes
    from nl2sql.workspace.csv_dialect import CsvRowFormatter

    select = ("SELECT InvoiceLineId, CAST(UnitPrice AS DOUBLE) / 3 AS third, UnitPrice, "
              "Quantity > 1 AS many, CAST(NULL AS STRING) AS nothing, "
              "CASE WHEN InvoiceLineId % 3 = 0 THEN 'a,b' WHEN InvoiceLineId % 3 = 1 THEN '' "
              "ELSE 'say \"hi\"' END AS txt, DATE '2024-01-31' AS day, "
              "CAST('ab' AS BINARY) AS raw FROM {}invoiceline ORDER BY InvoiceLineId")
    ops = create_operations(create_connection(chinook_cfg), chinook_info)
    writer = CsvResultWriter(tmp_path / "typed.csv")
    stats = ops.execute_select_query(select.format(""), writer)
    writer._close()
    written = writer._tmp.read_text(encoding="utf-8")
    writer.discard()
    session = spark_server.session()
    try:
        frame = session.sql(select.format("chinook."))
        schema = frame.toArrow().schema
        rows = [tuple(row) for row in frame.collect()]
    finally:
        session.stop()
    assert all(writes(field.type) for field in schema)  # so the Arrow path wrote it
    formatter = CsvRowFormatter()
    assert written == formatter.header(schema.names) + "".join(formatter.records(rows))
    assert stats.row_count == 2240
    ops.connection.dispose()
