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
from pydantic_ai.models.instrumented import InstrumentationSettings

from nl2sql._helpers import say
from nl2sql._tracing import tracing_enabled
from nl2sql.llm.providers import PROVIDER_ERRORS, model_label, model_setup_error
from nl2sql.llm.retries import RateLimitRetry

_instrumented = False


@dataclass
class SayAsking(AbstractCapability[Any]):
    """Each model request says so (``nl2sql._helpers.say``: nl2sql-ask's spinner)."""

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        say(f"Asking {model_label(ctx.model)}…")
        return request_context


async def run_agent(agent: Agent[Any, Any], prompt: str | None, *, model: Model | str,
                    capabilities: Sequence[Any] = (), **kwargs: Any) -> Any:
    """``agent.run(prompt, model=model, **kwargs)`` with rate-limit retries; provider failures
    become ``ModelSetupError``. With tracing on, model requests are spans (no content)."""
    instrument_agents()
    try:
        return await agent.run(prompt, model=model,
                               capabilities=[RateLimitRetry(), SayAsking(), *capabilities],
                               **kwargs)
    except PROVIDER_ERRORS as exc:
        raise model_setup_error(exc, model) from None


def instrument_agents() -> None:
    """pydantic-ai's OpenTelemetry spans for model requests, once a tracer provider is
    configured (``nl2sql._tracing``); the prompts' and answers' text is left out (it can hold
    query results)."""
    global _instrumented
    if not _instrumented and tracing_enabled():
        Agent.instrument_all(InstrumentationSettings(include_content=False))
        _instrumented = True
