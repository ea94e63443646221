"""Example queries on the real Chinook database (SQLite and Postgres): every kept example was
checked by the guard and executed with rows; failures go back to the model with the
database's error; what never works is dropped."""

from __future__ import annotations

import pytest
from pydantic_ai.models.test import TestModel
from test_annotation_support import ScriptedAnnotator, quote

from conftest import SampleDb
from nl2sql.annotation import AnnotatorOptions, DbSchemaAnnotator
from nl2sql.annotation.examples import MARKER, run_example_query
from nl2sql.db.base import create_connection, create_operations
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.schema.models import DbInfo

ONLY_EXAMPLES = ("example_queries",)


@pytest.fixture
def chinook_info(chinook: SampleDb) -> DbInfo:
    with create_connection(chinook.config) as connection:
        return DbSchemaExtractor(connection).extract("chinook")


def _annotate(chinook: SampleDb, db: DbInfo, model: object, *, count: int = 3,
              retries: int = 3, previous: DbInfo | None = None):  # type: ignore[no-untyped-def]
    with create_connection(chinook.config) as connection:
        annotator = DbSchemaAnnotator(model, connection, options=AnnotatorOptions(  # type: ignore[arg-type]
            steps=ONLY_EXAMPLES, example_count=count, example_retries=retries))
        return annotator.annotate(db, previous=previous)


def _assert_all_execute(chinook: SampleDb, db: DbInfo) -> None:
    with create_connection(chinook.config) as connection:
        for example in db.example_queries:
            rows = run_example_query(create_operations(connection, db), example.sql)
            assert rows > 0 and rows == example.row_count, example.sql


def test_failing_query_is_fixed_after_feedback(chinook: SampleDb, chinook_info: DbInfo) -> None:
    album, track, genre = (quote(chinook.table(n)) for n in ("album", "track", "genre"))
    seen_feedback: list[str] = []

    def examples(prompt: str, feedback: list[str]) -> list[dict[str, str]]:
        if not feedback:
            return [{"question": "How many albums?", "sql": f"SELECT COUNT(*) FROM {album}"},
                    {"question": "Album names?", "sql": f"SELECT no_such_column FROM {album}"},
                    {"question": "Some tracks?", "sql": f"SELECT * FROM {track} LIMIT 3"}]
        seen_feedback.extend(feedback)
        return [{"question": "Which genres exist?", "sql": f"SELECT * FROM {genre}"}]

    model = ScriptedAnnotator(examples=examples)
    run = _annotate(chinook, chinook_info, model.model)
    assert [e.question for e in chinook_info.example_queries] == [
        "How many albums?", "Some tracks?", "Which genres exist?"]
    assert run.steps["example_queries"].requests == 2
    [message] = seen_feedback
    assert "'Album names?': the database rejected it" in message
    assert "no_such_column" in message and "Answer with 1 new example" in message
    assert "How many albums?" not in message.split("These failed:")[1]
    _assert_all_execute(chinook, chinook_info)
    assert chinook_info.example_queries[2].row_count == 25


def test_query_without_rows_is_dropped_after_retries(chinook: SampleDb,
                                                      chinook_info: DbInfo) -> None:
    album, genre = quote(chinook.table("album")), quote(chinook.table("genre"))
    feedbacks: list[list[str]] = []

    def examples(prompt: str, feedback: list[str]) -> list[dict[str, str]]:
        feedbacks.append(feedback)
        good = [{"question": "How many albums?", "sql": f"SELECT COUNT(*) FROM {album}"}]
        return (good if not feedback else []) + [
            {"question": "Genres named Polka?", "sql": f"SELECT * FROM {genre} WHERE 1 = 0"}]

    run = _annotate(chinook, chinook_info, ScriptedAnnotator(examples=examples).model,
                    count=2, retries=2)
    assert [e.question for e in chinook_info.example_queries] == ["How many albums?"]
    assert run.steps["example_queries"].requests == 3  # first answer + 2 feedback rounds
    assert "returned no rows" in feedbacks[1][-1]


def test_write_statement_is_refused_before_the_database(chinook: SampleDb,
                                                         chinook_info: DbInfo) -> None:
    genre = quote(chinook.table("genre"))
    messages: list[str] = []

    def examples(prompt: str, feedback: list[str]) -> list[dict[str, str]]:
        messages.extend(feedback)
        return [{"question": "Remove genres", "sql": f"DELETE FROM {genre}"}]

    _annotate(chinook, chinook_info, ScriptedAnnotator(examples=examples).model, count=1,
              retries=1)
    assert chinook_info.example_queries == []
    assert "refused by the read-only check" in messages[0]
    with create_connection(chinook.config) as connection:
        operations = create_operations(connection, chinook_info)
        assert run_example_query(operations, f"SELECT * FROM {genre}") == 25


def test_test_model_finishes_with_bounded_requests_and_no_broken_examples(
        chinook: SampleDb, chinook_info: DbInfo) -> None:
    # TestModel answers from the JSON schema ('a' as SQL): nothing passes, nothing broken is kept.
    run = _annotate(chinook, chinook_info, TestModel(), count=3, retries=2)
    assert chinook_info.example_queries == []
    assert run.steps["example_queries"].requests == 3


def test_rerun_on_same_schema_sends_nothing_and_changed_schema_revalidates(
        chinook: SampleDb, chinook_info: DbInfo) -> None:
    first = ScriptedAnnotator()
    _annotate(chinook, chinook_info, first.model)
    assert len(chinook_info.example_queries) == 3 and first.total == 1
    assert getattr(chinook_info, MARKER)
    _assert_all_execute(chinook, chinook_info)

    cached = DbInfo.model_validate_json(chinook_info.model_dump_json())
    assert getattr(cached, MARKER) == getattr(chinook_info, MARKER), "marker survives the cache"
    again = ScriptedAnnotator()
    run = _annotate(chinook, cached, again.model, previous=cached)
    assert again.total == 0 and run.steps["example_queries"].requests == 0

    # A structural change: the kept examples are re-executed and still work, so no request.
    cached.tables[0].columns.pop()
    cached.attach()
    third = ScriptedAnnotator()
    _annotate(chinook, cached, third.model, previous=DbInfo.model_validate_json(
        chinook_info.model_dump_json()))
    assert third.total == 0 and len(cached.example_queries) == 3
