"""The LLM steps with scripted FunctionModels on hand-built schemas: what the prompts contain,
how answers land in the schema, the request budget, and provider failures."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai import exceptions as ai_errors
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from test_annotation_support import (ScriptedAnnotator, answer, prompt_text, requested_columns,
                                     table_of)

from conftest import sqlite_config
from nl2sql.annotation import AnnotatorOptions, DbSchemaAnnotator
from nl2sql.db.base import create_connection
from nl2sql.errors import ModelSetupError
from nl2sql.schema.models import ColumnInfo, DbInfo, EnumValueCount, TableInfo

DESCRIPTION_STEPS = ("table_descriptions", "enum_classification", "database_description")


def _shop() -> DbInfo:
    orders = TableInfo(name="orders", row_count=125, sample_data_csv=(
        "id,status,channel,total\n1,shipped,web,10.5\n2,pending,store,3.0\n"), columns=[
        ColumnInfo(name="id", data_type="INTEGER", nullable=False, is_primary_key=True),
        ColumnInfo(name="status", data_type="TEXT", distinct_count=3, enum_candidates=[
            EnumValueCount(value="shipped", count=120), EnumValueCount(value="pending", count=4),
            EnumValueCount(value=None, count=1)]),
        ColumnInfo(name="channel", data_type="TEXT", distinct_count=2, enum_candidates=[
            EnumValueCount(value="web", count=100), EnumValueCount(value="store", count=25)]),
        ColumnInfo(name="total", data_type="REAL", description="Order total in EUR.",
                   description_source="comment"),
        ColumnInfo(name="kind", data_type="TEXT", is_enum=True, enum_values=["a", "b"],
                   enum_decision="statistics",
                   enum_candidates=[EnumValueCount(value="a", count=5)])])
    customers = TableInfo(name="customers", row_count=3, columns=[
        ColumnInfo(name="id", data_type="INTEGER", is_primary_key=True),
        ColumnInfo(name="full name", data_type="TEXT")])
    return DbInfo(db_id="shop", db_type="sqlite", tables=[orders, customers])


def _annotator(model: object, tmp_path: Path, **options: object) -> DbSchemaAnnotator:
    # The connection is only opened by the example step; these tests skip that step.
    connection = create_connection(sqlite_config("shop", tmp_path / "never-opened.db"))
    options.setdefault("steps", DESCRIPTION_STEPS)
    return DbSchemaAnnotator(model, connection, options=AnnotatorOptions(**options))  # type: ignore[arg-type]


def test_one_request_per_table_describes_every_column_and_keeps_comments(tmp_path: Path) -> None:
    model = ScriptedAnnotator()
    db = _shop()
    run = _annotator(model.model, tmp_path).annotate(db)

    assert model.tables == {("table_descriptions", "orders"): 1,
                            ("table_descriptions", "customers"): 1,
                            ("enum_classification", "orders"): 1}
    assert run.steps["table_descriptions"].requests == 2
    assert run.steps["table_descriptions"].input_tokens > 0
    assert run.steps["database_description"].requests == 1
    orders_prompt = next(p for p in model.prompts if table_of(p) == "orders"
                         and "Describe" in p)
    # The table's columns (with types and keys), sample rows and the other tables are shown.
    assert "- status TEXT" in orders_prompt and "- id INTEGER PRIMARY KEY" in orders_prompt
    assert "1,shipped,web,10.5" in orders_prompt and "- customers: 2 columns" in orders_prompt
    for table in db.tables:
        assert table.description and table.description_source == "llm"
        for column in table.columns:
            assert column.description, f"{table.name}.{column.name} has no description"
    total = db.table("orders").column("total")  # type: ignore[union-attr]
    assert (total.description, total.description_source) == ("Order total in EUR.", "comment")
    # A column name that is not a valid JSON key is answered under a safe key and mapped back.
    assert db.table("customers").column("full name").description == (  # type: ignore[union-attr]
        "The full_name of a customers row.")
    assert db.description == "A sample database for the tests."


def test_rewrite_descriptions_replaces_comment_descriptions(tmp_path: Path) -> None:
    model = ScriptedAnnotator()
    db = _shop()
    _annotator(model.model, tmp_path, rewrite_descriptions=True).annotate(db)
    total = db.table("orders").column("total")  # type: ignore[union-attr]
    assert total.description_source == "llm" and total.description.startswith("The total")


def test_enum_prompt_shows_values_with_counts_and_model_can_reject(tmp_path: Path) -> None:
    model = ScriptedAnnotator(reject={"channel"})
    db = _shop()
    _annotator(model.model, tmp_path).annotate(db)
    prompt = next(p for p in model.prompts if "Decide which candidate" in p)
    assert "### status (TEXT)" in prompt and "rows: 125, distinct values: 3" in prompt
    assert "'shipped' (120), 'pending' (4), NULL (1)" in prompt
    assert "### kind" not in prompt, "statistics-decided columns are not sent again"
    orders = db.table("orders")
    status, channel, kind = (orders.column(n) for n in ("status", "channel", "kind"))  # type: ignore[union-attr]
    assert (status.is_enum, status.enum_decision, status.enum_values) == (
        True, "llm", ["shipped", "pending"])
    assert (channel.is_enum, channel.enum_decision, channel.enum_values) == (False, "llm", [])
    assert channel.enum_reasoning == "channel: judged from its values."
    assert (kind.is_enum, kind.enum_decision) == (True, "statistics")


def test_unchanged_rerun_sends_nothing(tmp_path: Path) -> None:
    db = _shop()
    _annotator(ScriptedAnnotator().model, tmp_path).annotate(db)
    again = ScriptedAnnotator()
    run = _annotator(again.model, tmp_path).annotate(db, previous=db.model_copy(deep=True))
    assert again.total == 0
    assert all(usage.requests == 0 for usage in run.steps.values())


def test_changed_table_is_sent_again_alone(tmp_path: Path) -> None:
    db = _shop()
    _annotator(ScriptedAnnotator().model, tmp_path).annotate(db)
    previous = db.model_copy(deep=True)
    db.table("customers").columns.append(ColumnInfo(name="email", data_type="TEXT"))  # type: ignore[union-attr]
    db.attach()
    model = ScriptedAnnotator()
    _annotator(model.model, tmp_path).annotate(db, previous=previous)
    assert dict(model.tables) == {("table_descriptions", "customers"): 1}
    assert model.total == 1
    assert db.table("customers").column("email").description  # type: ignore[union-attr]


def test_wide_table_is_chunked_and_every_column_described(tmp_path: Path) -> None:
    wide = TableInfo(name="wide", columns=[ColumnInfo(name=f"c{i:03}", data_type="INTEGER")
                                           for i in range(130)])
    db = DbInfo(db_id="w", db_type="sqlite", tables=[wide])
    sizes: list[int] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        keys = requested_columns(info)
        sizes.append(len(keys))
        props = info.output_tools[0].parameters_json_schema["properties"]
        args: dict[str, object] = {"columns": {k: f"col {k}" for k in keys}}
        if "table_description" in props:
            args["table_description"] = "Wide."
        return answer(info, args)

    _annotator(FunctionModel(respond), tmp_path, steps=("table_descriptions",)).annotate(db)
    assert sorted(sizes, reverse=True) == [60, 60, 10]  # chunks are requested concurrently
    assert all(c.description == f"col {c.name}" for c in wide.columns)
    assert wide.description == "Wide."


def test_concurrency_is_bounded(tmp_path: Path) -> None:
    db = DbInfo(db_id="many", db_type="sqlite", tables=[
        TableInfo(name=f"t{i}", columns=[ColumnInfo(name="id", data_type="INTEGER")])
        for i in range(8)])
    in_flight = peak = 0

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return answer(info, {"table_description": "T.", "columns": {"id": "Id."}})

    _annotator(FunctionModel(respond), tmp_path, concurrency=3,
               steps=("table_descriptions",)).annotate(db)
    assert peak == 3
    assert all(t.description == "T." for t in db.tables)


def test_provider_failure_raises_setup_error_and_keeps_finished_tables(tmp_path: Path) -> None:
    db = DbInfo(db_id="many", db_type="sqlite", tables=[
        TableInfo(name=f"t{i}", columns=[ColumnInfo(name="id", data_type="INTEGER")])
        for i in range(4)])
    saved: list[int] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if table_of(prompt_text(messages)) == "t2":
            raise ai_errors.ModelHTTPError(429, "scripted", body="rate limit", retry_after=0.01)
        return answer(info, {"table_description": "T.", "columns": {"id": "Id."}})

    def checkpoint(info: DbInfo) -> None:
        saved.append(sum(1 for t in info.tables if t.description))

    annotator = DbSchemaAnnotator(FunctionModel(respond), create_connection(
        sqlite_config("many", tmp_path / "x.db")), checkpoint=checkpoint,
        options=AnnotatorOptions(concurrency=1, steps=("table_descriptions",)))
    with pytest.raises(ModelSetupError, match="rate-limited"):
        annotator.annotate(db)
    assert saved == [1, 2], "each finished table was checkpointed before the failure"
    assert [t.description for t in db.tables] == ["T.", "T.", None, None]


def test_answer_that_never_fits_skips_only_that_table(tmp_path: Path) -> None:
    db = DbInfo(db_id="two", db_type="sqlite", tables=[
        TableInfo(name=name, columns=[ColumnInfo(name="id", data_type="INTEGER")])
        for name in ("good", "bad")])

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if table_of(prompt_text(messages)) == "bad":
            return answer(info, {"table_description": "B."})  # always misses the columns
        return answer(info, {"table_description": "G.", "columns": {"id": "Id."}})

    run = _annotator(FunctionModel(respond), tmp_path, steps=("table_descriptions",)).annotate(db)
    assert db.table("good").description == "G." and db.table("bad").description is None  # type: ignore[union-attr]
    assert run.steps["table_descriptions"].requests == 1 + 3  # bad: first try + 2 retries
