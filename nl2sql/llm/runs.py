"""One way to run a pydantic-ai agent for nl2sql: rate limits retried, provider errors mapped.

Annotation steps, the agents and evaluation all call ``run_agent``: provider rate limits wait
and retry (``RateLimitRetry``), and whatever means "this model cannot be used" (no key, no
package, unreachable host, rate limit still hit after the retries) becomes one ``ModelSetupError``
sentence. Errors from tools (an ``Nl2SqlError`` that stops a run) pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.models import Model

from nl2sql.llm.providers import PROVIDER_ERRORS, model_setup_error
from nl2sql.llm.retries import RateLimitRetry


async def run_agent(agent: Agent[Any, Any], prompt: str | None, *, model: Model | str,
                    capabilities: Sequence[Any] = (), **kwargs: Any) -> Any:
    """``agent.run(prompt, model=model, **kwargs)`` with rate-limit retries; provider failures
    become ``ModelSetupError``."""
    try:
        return await agent.run(prompt, model=model,
                               capabilities=[RateLimitRetry(), *capabilities], **kwargs)
    except PROVIDER_ERRORS as exc:
        raise model_setup_error(exc, model) from None
