"""One place where annotation agents are run: bounded concurrency and usage per step (provider
errors and rate limits are handled by ``nl2sql.llm.runs.run_agent``)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic_ai import Agent
from pydantic_ai.models import Model
from pydantic_ai.usage import RunUsage

from nl2sql.llm.runs import run_agent
from nl2sql.llm.usage import UsageTracker


class StepRunner:
    """Runs agents for the annotation steps with one model, a concurrency limit and a tracker."""

    def __init__(self, model: Model, tracker: UsageTracker, concurrency: int = 4) -> None:
        self.model = model
        self.tracker = tracker
        self.semaphore = asyncio.Semaphore(max(1, concurrency))

    async def run(self, agent: Agent[Any, Any], prompt: str, *, step: str,
                  output_type: Any = None, deps: Any = None) -> Any:
        """The run's output; provider failures become ``ModelSetupError``."""
        usage = RunUsage()
        async with self.semaphore:
            try:
                result = await run_agent(agent, prompt, model=self.model,
                                         output_type=output_type, deps=deps, usage=usage)
            finally:
                self.tracker.add(step, usage)
        return result.output


_UNSAFE_KEY = re.compile(r"[^A-Za-z0-9_.-]")


def answer_keys(names: list[str]) -> dict[str, str]:
    """Column name -> JSON key accepted by every provider's tool schema (^[A-Za-z0-9_.-]{1,64}$)."""
    keys: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        base = _UNSAFE_KEY.sub("_", name)[:60] or "column"
        key, n = base, 2
        while key in used:
            key, n = f"{base[:57]}_{n}", n + 1
        used.add(key)
        keys[name] = key
    return keys


def keyed_model(model_name: str, keys: dict[str, str], value_type: Any,
                describe: str) -> type[BaseModel]:
    """A model with one required field per column (by its answer key), so an answer that skips
    a column is invalid and the model is asked again by pydantic-ai."""
    fields: dict[str, Any] = {
        f"f{i}": (value_type, Field(alias=key, description=describe.format(column=name)))
        for i, (name, key) in enumerate(keys.items())}
    return create_model(model_name, __config__=ConfigDict(populate_by_name=False), **fields)


def keyed_values(answer: BaseModel, keys: dict[str, str]) -> dict[str, Any]:
    """Column name -> value from an answer built by ``keyed_model``."""
    return {name: getattr(answer, f"f{i}") for i, name in enumerate(keys)}
