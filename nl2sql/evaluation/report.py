"""The evaluation report: accuracy overall, per database and per category, each with counts and
a 95% Wilson interval; ``report.json`` (ARCHITECTURE.md, "Evaluation files") and the terminal
table."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from nl2sql.evaluation.scoring import QuestionResult

UNCATEGORIZED = "(none)"


def wilson_interval(correct: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The 95% Wilson score interval of ``correct / n`` (None when n is 0)."""
    if n == 0:
        return None
    p = correct / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


class Summary(BaseModel):
    """Accuracy of a group of questions: ``correct / scored``, where ``scored`` leaves the
    broken golds out of ``total``."""

    total: int
    scored: int
    correct: int
    broken_gold: int
    accuracy: float | None
    interval_95: tuple[float, float] | None

    @classmethod
    def of(cls, results: Iterable[QuestionResult]) -> Summary:
        items = list(results)
        broken = sum(1 for r in items if r.broken_gold)
        correct = sum(1 for r in items if r.correct)
        scored = len(items) - broken
        return cls(total=len(items), scored=scored, correct=correct, broken_gold=broken,
                   accuracy=round(correct / scored, 4) if scored else None,
                   interval_95=wilson_interval(correct, scored))


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 4) if present else None


class Report(BaseModel):
    """``report.json``."""

    accuracy: float | None
    total: int
    scored: int
    correct: int
    broken_gold: int
    interval_95: tuple[float, float] | None
    per_db: dict[str, Summary]
    per_category: dict[str, Summary]
    # means over the questions where they were measured (None: never measured)
    table_recall: float | None = None
    value_hint_recall: float | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    created_at: str = ""
    elapsed_seconds: float | None = None
    questions: list[QuestionResult]

    @classmethod
    def build(cls, results: list[QuestionResult], settings: dict[str, Any] | None = None,
              elapsed_seconds: float | None = None) -> Report:
        overall = Summary.of(results)
        return cls(accuracy=overall.accuracy, total=overall.total, scored=overall.scored,
                   correct=overall.correct, broken_gold=overall.broken_gold,
                   interval_95=overall.interval_95,
                   per_db=_groups(results, lambda r: r.db_id),
                   per_category=_groups(results, lambda r: r.category or UNCATEGORIZED),
                   table_recall=_mean(r.table_recall for r in results),
                   value_hint_recall=_mean(r.value_hint_recall for r in results),
                   settings=settings or {},
                   created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   elapsed_seconds=elapsed_seconds, questions=results)

    @property
    def wrong(self) -> list[QuestionResult]:
        return [q for q in self.questions if q.correct is False]

    @property
    def broken(self) -> list[QuestionResult]:
        return [q for q in self.questions if q.broken_gold]

    def write_json(self, path: Path) -> None:
        from nl2sql.cache import atomic_write_text

        atomic_write_text(path, self.model_dump_json(indent=2) + "\n")


def _groups(results: list[QuestionResult],
            key: Callable[[QuestionResult], str]) -> dict[str, Summary]:
    groups: dict[str, list[QuestionResult]] = {}
    for result in results:
        groups.setdefault(key(result), []).append(result)
    return {name: Summary.of(items) for name, items in sorted(groups.items())}


def format_accuracy(summary: Summary | Report) -> str:
    if summary.accuracy is None:
        return "n/a"
    low, high = summary.interval_95 or (0.0, 0.0)
    return f"{summary.accuracy:.1%} [{low:.0%}–{high:.0%}]"


def render_table(report: Report) -> Any:
    """The terminal summary as a rich renderable."""
    from rich.table import Table

    table = Table(title="Execution accuracy (95% interval)", title_justify="left")
    for name, justify in (("group", "left"), ("correct", "right"), ("scored", "right"),
                          ("broken gold", "right"), ("accuracy", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]

    def row(label: str, s: Summary | Report, style: str | None = None) -> None:
        table.add_row(label, str(s.correct), str(s.scored), str(s.broken_gold or ""),
                      format_accuracy(s), style=style)

    for db_id, summary in report.per_db.items():
        row(f"db {db_id}", summary)
    if len(report.per_category) > 1 or UNCATEGORIZED not in report.per_category:
        table.add_section()
        for category, summary in report.per_category.items():
            row(category, summary)
    table.add_section()
    row("all", report, style="bold")
    return table


def context_line(report: Report) -> str:
    """One line on the context recall: measured, or why not."""
    measured = [q for q in report.questions if q.table_recall is not None]
    if measured:
        hints = f"{report.value_hint_recall:.0%}" if report.value_hint_recall is not None \
            else "n/a (no string literal in the golds)"
        return (f"context: gold tables kept {report.table_recall:.0%}, value-hint recall "
                f"{hints} ({len(measured)} questions)")
    error = next((q.context_error for q in report.questions if q.context_error), None)
    return f"context recall not measured: {error}" if error else \
        "context recall not measured (--no-context)"
