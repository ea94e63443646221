"""The LLM steps inside ``annotate_database`` on real Chinook databases (SQLite, Postgres):
every step runs, re-runs are incremental (request budget counted by a scripted model), a
failed run keeps what it paid for and the next run resumes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai import exceptions as ai_errors
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from test_annotation_support import ScriptedAnnotator, prompt_text, table_of

from conftest import SampleDb, add_column
from nl2sql.annotation import AnnotatorOptions
from nl2sql.annotation.examples import run_example_query
from nl2sql.annotation.annotator import LlmAnnotationSteps
from nl2sql.schema.cache import load_db_info
from nl2sql.db.base import create_connection, create_operations
from nl2sql.errors import ModelSetupError
from nl2sql.schema.models import DbInfo
from nl2sql.annotation.pipeline import AnnotateOptions, annotate_database

STEPS = ("table_descriptions", "enum_classification", "database_description", "example_queries")


def _annotate(chinook: SampleDb, data_dir: Path, model: object, **options: object) -> DbInfo:
    steps = LlmAnnotationSteps(AnnotatorOptions(**options), model=model)  # type: ignore[arg-type]
    return annotate_database(chinook.config, data_dir, llm_steps=steps,
                             options=AnnotateOptions(model="scripted")).db_info


def _assert_complete(db: DbInfo) -> None:
    for table in db.tables:
        assert table.description, f"{table.name} has no description"
        for column in table.columns:
            assert column.description, f"{table.name}.{column.name} has no description"
            if column.enum_candidates is not None:
                assert column.enum_decision is not None, f"{column.name} left undecided"
    assert db.description


def _assert_examples_execute(chinook: SampleDb, db: DbInfo) -> None:
    with create_connection(chinook.config) as connection:
        operations = create_operations(connection, db)
        for example in db.example_queries:
            assert run_example_query(operations, example.sql) > 0, example.sql



def test_every_step_then_nothing_then_only_the_altered_table(chinook: SampleDb,
                                                              tmp_path: Path) -> None:
    first = ScriptedAnnotator(reject={"City"} if chinook.backend == "sqlite" else {"city"})
    db = _annotate(chinook, tmp_path, first.model)
    cached = load_db_info(tmp_path, "chinook")
    _assert_complete(cached)
    assert len(cached.example_queries) == 5
    _assert_examples_execute(chinook, cached)
    # Budget: one request per table for descriptions, one per table with undecided
    # candidates for enums, one for the database, one for the examples.
    tables = len(db.tables)
    assert first.requests["table_descriptions"] == tables
    assert all(count == 1 for count in first.tables.values())
    assert first.requests["database_description"] == first.requests["example_queries"] == 1
    decided_by_llm = [c for t in cached.tables for c in t.columns if c.enum_decision == "llm"]
    assert decided_by_llm and first.requests["enum_classification"] == len(
        {c.table.name for c in decided_by_llm})
    run = cached.annotation_runs[-1]
    assert list(run.steps) == list(STEPS) and run.skipped_steps == []
    assert run.steps["table_descriptions"].requests == tables
    assert run.steps["table_descriptions"].input_tokens > 0

    second = ScriptedAnnotator()
    _annotate(chinook, tmp_path, second.model)
    assert second.total == 0
    assert all(u.requests == 0 for u in load_db_info(tmp_path, "chinook").annotation_runs[-1]
               .steps.values())

    album = chinook.table("album")
    add_column(chinook, album, "label")
    third = ScriptedAnnotator()
    _annotate(chinook, tmp_path, third.model)
    assert {table for _step, table in third.tables} == {album}
    assert third.requests["table_descriptions"] == 1
    assert third.requests["database_description"] == third.requests["example_queries"] == 0
    after = load_db_info(tmp_path, "chinook")
    _assert_complete(after)
    assert after.table(album).column("label").description  # type: ignore[union-attr]
    _assert_examples_execute(chinook, after)


def test_test_model_runs_every_step(chinook: SampleDb, tmp_path: Path) -> None:
    db = _annotate(chinook, tmp_path, "test")
    cached = load_db_info(tmp_path, "chinook")
    _assert_complete(cached)
    run = cached.annotation_runs[-1]
    assert run.model == "test" and all(run.steps[s].requests > 0 for s in STEPS)
    # TestModel's SQL ('a') never passes the guard: no example is kept, none is broken.
    assert cached.example_queries == [] and db.example_queries == []

    _annotate(chinook, tmp_path, "test")
    rerun = load_db_info(tmp_path, "chinook").annotation_runs[-1]
    assert sum(u.requests for u in rerun.steps.values()) == 0


def test_failed_run_keeps_paid_results_and_next_run_resumes(chinook: SampleDb,
                                                            tmp_path: Path) -> None:
    answered: list[str] = []
    scripted = ScriptedAnnotator()

    def flaky(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(answered) == 3:
            raise ai_errors.ModelHTTPError(429, "scripted", body="rate limit", retry_after=0.01)
        answered.append(table_of(prompt_text(messages)) or "")
        return scripted._respond(messages, info)

    with pytest.raises(ModelSetupError, match="rate-limited"):
        _annotate(chinook, tmp_path, FunctionModel(flaky), concurrency=1)
    partial = load_db_info(tmp_path, "chinook")
    described = [t.name for t in partial.tables if t.description]
    assert described == answered
    # pydantic-ai counts answered requests; the refused one returned nothing.
    assert partial.annotation_runs[-1].steps["table_descriptions"].requests == 3

    resumed = ScriptedAnnotator()
    _annotate(chinook, tmp_path, resumed.model)
    assert resumed.requests["table_descriptions"] == len(partial.tables) - 3
    assert not {t for _s, t in resumed.tables} & set(described)
    _assert_complete(load_db_info(tmp_path, "chinook"))
