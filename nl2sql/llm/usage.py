"""Model usage: requests and tokens summed per step from pydantic-ai ``RunUsage``.

Every agent run gets its own ``RunUsage`` (passed as ``usage=``, which pydantic-ai updates in
place), so a run that fails half-way still counts the requests it made. Annotation reports
usage per step, the agents per answer.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from nl2sql.schema.models import AnnotationRun, StepUsage

if TYPE_CHECKING:
    from pydantic_ai.usage import RunUsage

__all__ = ["UsageTracker", "cost_usd", "format_cost", "step_usage", "summary_lines",
           "total_usage"]


class UsageTracker:
    """Requests and tokens per step for one annotation run."""

    def __init__(self) -> None:
        self.steps: dict[str, StepUsage] = {}

    def start(self, step: str) -> None:
        """Make ``step`` appear in the summary even when it needs no request."""
        self.steps.setdefault(step, StepUsage())

    def add(self, step: str, usage: RunUsage) -> None:
        self.steps.setdefault(step, StepUsage()).add(usage)

    @property
    def total(self) -> StepUsage:
        return total_usage(self.steps)


def step_usage(usage: RunUsage) -> StepUsage:
    """A pydantic-ai ``RunUsage`` as nl2sql's ``StepUsage`` (requests, input and output tokens)."""
    total = StepUsage()
    total.add(usage)
    return total


def total_usage(steps: dict[str, StepUsage]) -> StepUsage:
    total = StepUsage()
    for usage in steps.values():
        total.add(usage)
    return total


def cost_usd(model: str | None, usage: StepUsage) -> Decimal | None:
    """What ``usage`` cost with ``model`` (``provider:name``) in US dollars, from the
    ``genai-prices`` catalogue pydantic-ai ships with; None when the model has no known price
    (test models, local models, names the catalogue lacks)."""
    if not model or ":" not in model:
        return None
    from genai_prices import Usage, calc_price

    provider, _, name = model.partition(":")
    try:
        price = calc_price(Usage(input_tokens=usage.input_tokens,
                                 output_tokens=usage.output_tokens),
                           model_ref=name, provider_id=provider)
    except LookupError:
        return None
    return price.total_price


def format_cost(cost: Decimal | float | None) -> str:
    """``$0.0123``; below a cent with six decimals (``$0.000098``), so a cheap question does
    not read as free."""
    if cost is None:
        return "unknown (no price for this model)"
    return f"${cost:.4f}" if cost == 0 or cost >= 0.01 else f"${cost:.6f}"


def summary_lines(run: AnnotationRun) -> list[str]:
    """A small table for people: one line per step, the total, and the skipped steps."""
    lines = []
    if run.steps:
        width = max(len("total"), *(len(step) for step in run.steps))
        lines.append(f"LLM usage (model {run.model}):")
        lines.append(f"  {'step':<{width}}  requests  input tokens  output tokens")
        for step, usage in [*run.steps.items(), ("total", total_usage(run.steps))]:
            lines.append(f"  {step:<{width}}  {usage.requests:>8}  {usage.input_tokens:>12}"
                         f"  {usage.output_tokens:>13}")
        total = total_usage(run.steps)
        if total.requests:
            lines.append(f"cost: {format_cost(cost_usd(run.model, total))}")
    if run.skipped_steps:
        lines.append("skipped LLM steps: " + ", ".join(run.skipped_steps))
    return lines
