"""Provider rate limits (HTTP 429) wait and retry instead of stopping a run.

``RateLimitRetry`` is a pydantic-ai capability: when a model request fails with a rate-limit
error, it waits for the provider's ``Retry-After`` (pydantic-ai reads the ``retry-after-ms`` /
``Retry-After`` headers into ``ModelAPIError.retry_after``) or, without one, an exponential
backoff with jitter, and asks pydantic-ai for another attempt at the same request
(``RetryModelRequest``: the model never sees the failure). After ``max_attempts`` the error
propagates and becomes the usual one-line ``ModelSetupError``.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any

from pydantic_ai import exceptions as ai_errors
from pydantic_ai.capabilities import AbstractCapability


@dataclass
class RateLimitRetry(AbstractCapability[Any]):
    max_attempts: int = 5  # attempts at one request, the first included
    base_delay: float = 1.0  # seconds before the second attempt without Retry-After
    max_delay: float = 60.0  # no single wait is longer, whatever the provider asks

    def delay(self, error: Exception, attempt: int) -> float:
        """Seconds to wait after failed ``attempt`` (1-based)."""
        asked = getattr(error, "retry_after", None)
        if asked is not None:
            return min(max(float(asked), 0.0), self.max_delay)
        backoff = self.base_delay * 2 ** (attempt - 1)
        return min(backoff * (1 + random.random() / 4), self.max_delay)

    async def on_model_request_error(self, ctx: Any, *, request_context: Any,
                                     error: Exception) -> Any:
        if not is_rate_limit(error) or request_context.attempt >= self.max_attempts:
            raise error
        await asyncio.sleep(self.delay(error, request_context.attempt))
        raise ai_errors.RetryModelRequest()


def is_rate_limit(error: BaseException) -> bool:
    return isinstance(error, ai_errors.ModelRateLimitError) or (
        isinstance(error, ai_errors.ModelHTTPError) and error.status_code == 429)
