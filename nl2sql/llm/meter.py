"""What one answer cost: every model response it took, priced with ``genai-prices``.

``ResponseMeter`` is a pydantic-ai capability given to every agent run of one answer (the
catalog agent, each SQL candidate, the selection step): it keeps each model response, so the
cost is the sum of the responses' own prices (the provider and model that really answered, its
input, cached and output tokens, at the price of the response's date). A response from a model
the catalogue has no price for (a local model, a test model, a name it lacks) makes the whole
cost unknown (``None``): never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse

from nl2sql.llm.providers import model_label


@dataclass
class ResponseMeter(AbstractCapability[Any]):
    responses: list[ModelResponse] = field(default_factory=list)
    #: The model of each response, named as everywhere else (``model_label``).
    labels: list[str] = field(default_factory=list)

    async def after_model_request(self, ctx: Any, *, request_context: Any,
                                  response: ModelResponse) -> ModelResponse:
        self.responses.append(response)
        self.labels.append(model_label(ctx.model))
        return response

    @property
    def models(self) -> list[str]:
        """The models that answered, in the order they first did, as the user named them
        (``openai-chat:gpt-4o-mini``): the name the candidates, the receipt and the evaluation
        report use too."""
        return list(dict.fromkeys(self.labels))

    def cost_usd(self) -> float | None:
        """The responses' total price in US dollars; None when any of them has none."""
        total = Decimal(0)
        for response in self.responses:
            try:
                total += response.cost().total_price
            except (LookupError, ValueError, AssertionError):  # unpriced or usage unreported
                return None
        return float(total)
