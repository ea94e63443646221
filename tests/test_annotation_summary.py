"""What the annotation summary tells: what the LLM steps wrote, examples kept and rejected
with the reasons, the cost where the model has a price; no pydantic-ai banner; progress that
keeps its phase on a terminal and prints lines every few seconds without one."""

from __future__ import annotations

import io
from decimal import Decimal
from pathlib import Path

import pytest
from rich.console import Console
from test_annotation_provenance import _real

from conftest import SampleDb
from nl2sql.annotation import AnnotatorOptions
from nl2sql.annotation.annotator import LlmAnnotationSteps
from nl2sql.cli.annotate import print_summary
from nl2sql.cli.progress import LogProgress, RichProgress
from nl2sql.llm.usage import cost_usd
from nl2sql.schema.models import StepUsage
from nl2sql.annotation.pipeline import AnnotateOptions, annotate_database


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)
def test_summary_says_what_was_produced_and_what_it_cost(chinook: SampleDb,
                                                         tmp_path: Path) -> None:
    def drafts(_prompt: str, feedback: list[str]) -> list[dict[str, str]]:
        def count(table: str) -> dict[str, str]:
            return {"question": f"How many rows in {table}?",
                    "sql": f"SELECT COUNT(*) AS n FROM {table}"}

        if feedback:
            return [count(t) for t in ("Artist", "Genre", "Track", "Invoice")]
        return [count("Album"), count("Album"),
                {"question": "None?", "sql": "SELECT * FROM Album WHERE 1 = 0"},
                {"question": "Broken?", "sql": "SELECT nosuch FROM Album"},
                {"question": "Delete?", "sql": "DELETE FROM Album"}]

    scripted = _real()
    scripted.examples = drafts
    steps = LlmAnnotationSteps(AnnotatorOptions(), model=scripted.model)
    result = annotate_database(chinook.config, tmp_path, llm_steps=steps,
                               options=AnnotateOptions(model="scripted"))
    out = io.StringIO()
    print_summary(result, out)
    text = out.getvalue()
    tables = len(result.db_info.tables)
    columns = sum(len(t.columns) for t in result.db_info.tables)
    decided = [c for t in result.db_info.tables for c in t.columns if c.enum_decision == "llm"]
    enums = sum(c.is_enum for c in decided)
    assert (f"written by provider:big-1: {tables} table descriptions, {columns} column "
            f"descriptions, 1 database description, {len(decided)} enum decisions ({enums} "
            f"enum, {len(decided) - enums} not)") in text
    assert ("example queries: 5 new, 5 kept in all, 4 rejected (1 duplicates, 1 failed in the "
            "database, 1 refused by the read-only check, 1 returned no rows)") in text
    assert "cost: unknown (no price for this model)" in text


def test_cost_from_genai_prices() -> None:
    usage = StepUsage(requests=1, input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_usd("openai:gpt-4o-mini", usage) == Decimal("0.75")  # $0.15 + $0.60 per MTok
    assert cost_usd("test", usage) is None
    assert cost_usd("openai:no-such-model", usage) is None
    assert cost_usd("provider:big-1", usage) is None


def test_pydantic_ai_banner_is_switched_off() -> None:
    import pydantic_ai

    import nl2sql.llm.providers  # noqa: F401  (every model use goes through it)

    assert pydantic_ai.BANNER_ENABLED is False


def test_progress_bar_keeps_the_phase_name() -> None:
    console = Console(file=io.StringIO(), force_terminal=True)
    progress = RichProgress("chinook", console)
    progress.start("enum classification", 2)
    progress.advance("Track")
    assert progress.bar.tasks[0].description == "chinook: enum classification: Track"
    progress.finish()


def test_progress_without_a_terminal_prints_every_few_seconds() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = LogProgress("chinook", interval=5, stream=out, clock=lambda: now[0])
    progress.start("tables", 4)
    for second, item in ((1, "Album"), (6, "Artist"), (7, "Genre"), (12, "Track")):
        now[0] = second
        progress.advance(item)
    progress.finish()
    assert out.getvalue().splitlines() == [
        "chinook: tables 2/4 (Artist)", "chinook: tables 4/4 (Track)", "chinook: tables 4/4 done"]
    progress.start("quick", 1)
    progress.advance("x")
    progress.finish()
    assert len(out.getvalue().splitlines()) == 3


def test_without_a_terminal_progress_is_lines_and_rich_stays_unloaded() -> None:
    """stderr a pipe, closed or missing: lines, not a bar, and rich is not imported for it."""
    import subprocess
    import sys

    script = """
import io, sys
from nl2sql.cli.progress import LogProgress, progress_reporter
closed = io.StringIO(); closed.close()
kinds = []
for stream in (io.StringIO(), closed, None, object()):
    sys.stderr = stream
    with progress_reporter("db") as reporter:
        kinds.append(type(reporter).__name__)
sys.stderr = sys.__stderr__
print(kinds, "rich" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == f"{['LogProgress'] * 4} False", done.stdout
