"""Bounds and defaults of the agents: the ``agent:`` block of dbs.yaml, checked when dbs.yaml is
read (by every command), used by ``nl2sql.ask()``.

```yaml
agent:
  max_requests: 12        # model requests per answer (pydantic-ai UsageLimits); unset: 12
                          # per candidate
  max_tokens: 200000      # input + output tokens per answer; unset: 200000 per candidate
  retries: 4              # times the model may fix its SQL (tool and final-answer retries)
  max_rows: 1000          # rows of the result read into Answer.df
  history_tokens: 6000    # conversation history sent with a follow-up question (the context
                          # is rebuilt each turn and not counted: agents/history.py)
  catalog_candidates: 5   # databases the catalog agent chooses among
  candidates: 1           # SQL candidates per answer, grouped by result (agents/candidates.py)
  models: []              # models the candidates take turns with (default: the one model)
```

The request and token limits bound the whole answer (catalog, every candidate, the selection
step). Left unset they grow with the candidates, so ``candidates: 5`` works without also
raising them; set, they are the bound as written.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictStr

MAX_CANDIDATES = 20


class AgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_requests: int = Field(12, ge=1)
    max_tokens: int = Field(200_000, ge=1000)
    retries: int = Field(4, ge=0, le=20)
    max_rows: int = Field(1000, ge=1)
    history_tokens: int = Field(6000, ge=0)
    catalog_candidates: int = Field(5, ge=2)
    candidates: int = Field(1, ge=1, le=MAX_CANDIDATES)
    models: list[StrictStr] = Field(default_factory=list)

    def limits(self, candidates: int) -> tuple[int, int]:
        """(model requests, tokens) of one answer with ``candidates`` candidates: the limits as
        set, or the defaults once per candidate."""
        requests = self.max_requests * (1 if "max_requests" in self.model_fields_set
                                        else candidates)
        tokens = self.max_tokens * (1 if "max_tokens" in self.model_fields_set else candidates)
        return requests, tokens
