"""Which model wrote each annotation; test-model output never survives a real model's run;
``--reannotate`` redoes LLM steps on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.models.function import FunctionModel
from test_annotation_support import ScriptedAnnotator

from conftest import SampleDb
from nl2sql.annotation import AnnotatorOptions
from nl2sql.annotation.annotator import LlmAnnotationSteps
from nl2sql.schema.provenance import is_test_model, reannotate_steps
from nl2sql.schema.cache import load_db_info, save_db_info
from nl2sql.schema.models import DbInfo
from nl2sql.annotation.pipeline import AnnotateOptions, annotate_database


class ProviderModel(FunctionModel):
    """A scripted model that labels itself like a provider's (not a test model)."""

    @property
    def system(self) -> str:
        return "provider"


def _real(reject: set[str] | None = None) -> ScriptedAnnotator:
    scripted = ScriptedAnnotator(reject=reject)
    scripted.model = ProviderModel(scripted._respond, model_name="big-1")  # noqa: SLF001
    return scripted


def _annotate(chinook: SampleDb, data_dir: Path, model: object, reannotate: frozenset[str] =
              frozenset()) -> DbInfo:
    steps = LlmAnnotationSteps(AnnotatorOptions(), model=model)  # type: ignore[arg-type]
    label = model if isinstance(model, str) else "scripted"
    annotate_database(chinook.config, data_dir, llm_steps=steps,
                      options=AnnotateOptions(model=label, reannotate=reannotate))
    return load_db_info(data_dir, "chinook")


def _labels(db: DbInfo) -> set[str | None]:
    labels = {db.description_model}
    for table in db.tables:
        labels.add(table.description_model)
        labels |= {c.description_model for c in table.columns}
        labels |= {c.enum_model for c in table.columns if c.enum_decision == "llm"}
    return labels | {q.model for q in db.example_queries}


def test_labels() -> None:
    assert is_test_model("test") and is_test_model("function:scripted")
    assert not is_test_model("openai:gpt-4o-mini") and not is_test_model(None)
    assert reannotate_steps(["descriptions"]) == {"table_descriptions", "database_description"}


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)
def test_test_model_output_is_redone_by_a_real_model(chinook: SampleDb, tmp_path: Path) -> None:
    """NL2SQL_MODEL=test then a real model: every placeholder is rewritten (it used to be kept
    with 0 requests), and each annotation names the model that wrote it."""
    placeholder = _annotate(chinook, tmp_path, "test")
    assert _labels(placeholder) == {"test"}

    real = _real()
    after = _annotate(chinook, tmp_path, real.model)
    assert real.requests["table_descriptions"] == len(after.tables)
    assert real.requests["database_description"] == 1
    assert _labels(after) == {"provider:big-1"}
    assert len(after.example_queries) == 5
    run = after.annotation_runs[-1]
    assert run.forgotten["table descriptions"] == len(after.tables)  # type: ignore[attr-defined]
    assert run.produced["table descriptions"] == len(after.tables)  # type: ignore[attr-defined]

    # A real model's work is kept by the next real run (0 requests) and by a test run.
    again = _real()
    _annotate(chinook, tmp_path, again.model)
    assert again.total == 0
    _annotate(chinook, tmp_path, "test")
    assert _labels(load_db_info(tmp_path, "chinook")) == {"provider:big-1"}


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)
def test_a_cache_from_before_labels_is_attributed_by_its_runs(chinook: SampleDb,
                                                              tmp_path: Path) -> None:
    _annotate(chinook, tmp_path, "test")
    legacy = load_db_info(tmp_path, "chinook")
    for table in legacy.tables:  # as an older nl2sql wrote it: no labels at all
        table.description_model = None
        for column in table.columns:
            column.description_model = column.enum_model = None
    legacy.description_model = None
    save_db_info(legacy, tmp_path)
    real = _real()
    after = _annotate(chinook, tmp_path, real.model)
    assert real.requests["table_descriptions"] == len(after.tables)
    assert _labels(after) == {"provider:big-1"}


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)
def test_reannotate_redoes_chosen_steps_only(chinook: SampleDb, tmp_path: Path) -> None:
    _annotate(chinook, tmp_path, _real().model)
    redo = _real()
    after = _annotate(chinook, tmp_path, redo.model, reannotate=reannotate_steps(["examples"]))
    assert redo.requests["example_queries"] == 1 and redo.requests["table_descriptions"] == 0
    assert len(after.example_queries) == 5
    everything = _real()
    _annotate(chinook, tmp_path, everything.model, reannotate=reannotate_steps(["all"]))
    assert everything.requests["table_descriptions"] == len(after.tables)
    assert everything.requests["database_description"] == 1
    assert everything.requests["enum_classification"] > 0


def test_reannotate_needs_a_model_and_known_steps(capsys: pytest.CaptureFixture[str]) -> None:
    from nl2sql.cli.annotate import main

    assert main(["bookstore", "--reannotate", "colours"]) == 2
    assert "unknown step 'colours'" in capsys.readouterr().err
    assert main(["bookstore", "--reannotate"]) == 2
    assert "it needs a model" in capsys.readouterr().err
