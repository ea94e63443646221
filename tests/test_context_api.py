"""The ``nl2sql.context()`` contract: fields of ``PromptContext``, lazy import, no pruning under
the budget."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.annotation.pipeline import annotate_database


def test_prompt_context_fields_are_the_contract() -> None:
    from nl2sql.context_engine import PromptContext

    assert list(PromptContext.model_fields) == [
        "question", "db_id", "candidates", "tables", "value_hints", "examples", "glossary",
        "metrics", "saved_metric_queries", "schema_sql", "schema_tokens", "full_schema_tokens", "budget_tokens",
        "ambiguous_between"]
    from nl2sql.context_engine import Candidate, ContextExample, KeptTable, MetricHint, ValueHint

    assert list(MetricHint.model_fields)[:3] == ["name", "description", "matched"]

    assert list(Candidate.model_fields) == ["db_id", "score", "reason"]
    assert list(KeptTable.model_fields) == ["name", "reason"]
    assert list(ValueHint.model_fields) == ["table", "column", "value", "matched"]
    assert list(ContextExample.model_fields) == ["question", "sql"]


def test_import_nl2sql_does_not_load_the_engine() -> None:
    code = ("import sys, nl2sql; "
            "assert not any(m.startswith(('nl2sql.context', 'bm25s', 'wordllama', 'rapidfuzz',"
            " 'sqlalchemy', 'numpy')) for m in sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_context_is_callable_even_after_its_package_is_imported(chinook, make_registry) -> None:  # noqa: ANN001
    registry = make_registry(chinook.config)
    annotate_database(chinook.config, registry.data_dir)
    import nl2sql.context_engine.prompt_context  # noqa: F401  (a package import never shadows the function)

    ctx = nl2sql.context("How many albums are there?", db_id="chinook", config=registry)
    assert ctx.db_id == "chinook"
    assert ctx.schema_tokens == ctx.full_schema_tokens > 0
    assert {t.name for t in ctx.tables} >= {chinook.table("album"), chinook.table("artist")}
    assert "CREATE TABLE" in ctx.schema_sql
    assert isinstance(registry, DbConnectionConfigs)
    for arguments, expected in (({"budget_tokens": 0}, "budget_tokens must be a whole number of "
                                                       "at least 1 (got 0)."),
                                ({"budget_tokens": "600"}, "budget_tokens must be a whole "
                                                           "number of at least 1 (got '600')."),
                                ({"db_id": 5}, "db_id must be a string (got int).")):
        with pytest.raises(nl2sql.Nl2SqlError) as raised:
            nl2sql.context("How many albums are there?", config=registry, **arguments)
        assert str(raised.value) == expected
