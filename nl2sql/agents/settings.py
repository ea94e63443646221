"""Bounds and defaults of the agents, from the ``agent:`` mapping of dbs.yaml.

```yaml
agent:
  max_requests: 12        # model requests per answer (pydantic-ai UsageLimits)
  max_tokens: 200000      # input + output tokens per answer
  retries: 4              # times the model may fix its SQL (tool and final-answer retries)
  max_rows: 1000          # rows of the result read into Answer.df
  history_tokens: 6000    # conversation history sent with a follow-up question
  catalog_candidates: 5   # databases the catalog agent chooses among
```
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nl2sql.errors import ConfigError


class AgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_requests: int = Field(12, ge=1)
    max_tokens: int = Field(200_000, ge=1000)
    retries: int = Field(4, ge=0, le=20)
    max_rows: int = Field(1000, ge=1)
    history_tokens: int = Field(6000, ge=0)
    catalog_candidates: int = Field(5, ge=2)

    @classmethod
    def from_mapping(cls, values: dict[str, Any] | None) -> AgentSettings:
        try:
            return cls(**(values or {}))
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(p) for p in error["loc"])
            raise ConfigError(f"dbs.yaml 'agent:' setting '{field}': "
                              f"{str(error['msg']).lower()}; fix or remove it.") from None
