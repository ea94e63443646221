"""One way to run a pydantic-ai agent for nl2sql: rate limits retried, provider errors mapped.

Annotation steps, the agents and evaluation all call ``run_agent``: provider rate limits wait
and retry (``RateLimitRetry``), and whatever means "this model cannot be used" (no key, no
package, unreachable host, rate limit still hit after the retries) becomes one ``ModelSetupError``
sentence. Errors from tools (an ``Nl2SqlError`` that stops a run) pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models import Model

from nl2sql._helpers import say
from nl2sql.llm.providers import PROVIDER_ERRORS, model_label, model_setup_error
from nl2sql.llm.retries import RateLimitRetry


@dataclass
class SayAsking(AbstractCapability[Any]):
    """Each model request says so (``nl2sql._helpers.say``: nl2sql-ask's spinner)."""

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        say(f"Asking {model_label(ctx.model)}…")
        return request_context


async def run_agent(agent: Agent[Any, Any], prompt: str | None, *, model: Model | str,
                    capabilities: Sequence[Any] = (), **kwargs: Any) -> Any:
    """``agent.run(prompt, model=model, **kwargs)`` with rate-limit retries; provider failures
    become ``ModelSetupError``."""
    try:
        return await agent.run(prompt, model=model,
                               capabilities=[RateLimitRetry(), SayAsking(), *capabilities],
                               **kwargs)
    except PROVIDER_ERRORS as exc:
        raise model_setup_error(exc, model) from None
