"""SQL candidates: the NL2SQL agent run N times at once, each run made different on purpose.

With one candidate (the default) the run is exactly the single agent run nl2sql always made:
the same instructions, the same requests, the answer's own result file. With N > 1 the runs go
concurrently (asyncio; the model requests overlap, each SQL runs in a worker thread) and differ
by design, not by chance:

- **generator style**: candidate k follows ``prompts/nl2sql/generators/<style>.md``, taking
  turns through ``GENERATORS`` (direct; query-plan reasoning; divide and conquer);
- **example order**: from the second candidate on, the example queries come shuffled (a fixed
  seed per candidate, so a re-run is the same);
- **temperature**: from the second candidate on, ``TEMPERATURE`` (pydantic-ai leaves it out for
  models that take none, such as reasoning models);
- **models**: with ``agent: models: [...]`` the candidates take turns through that list.

Each candidate goes through the same read-only path and self-correction as the single run (the
same agent, tools and output validator); all share one ``RunUsage``, so the ``agent:`` limits
bound the whole answer. A candidate that runs out of retries or budget is a failed candidate (kept, with
its last error), not a failed answer; a setup error (no key, unreachable provider) stops all.
Each candidate's SQL writes a new result file of its own; the answer keeps the chosen one's and
the others are removed.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic_ai.exceptions import UnexpectedModelBehavior, UsageLimitExceeded

from nl2sql._helpers import shorten
from nl2sql.agents.sql_agent import Nl2SqlDeps
from nl2sql.errors import NoAnswerError
from nl2sql.llm.prompt_files import load_prompt
from nl2sql.llm.providers import model_label
from nl2sql.llm.runs import run_agent

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.models import Model

    from nl2sql.context_engine import PromptContext

GENERATORS = ("direct", "query_plan", "divide_and_conquer")
TEMPERATURE = 0.8
_SQL_IN_MESSAGES = 300


@dataclass(frozen=True)
class CandidatePlan:
    """How candidate ``number`` (1-based) is made; ``generator`` None: the single run."""

    number: int
    model: Model
    generator: str | None = None
    temperature: float | None = None
    shuffle_examples: bool = False

    @property
    def model_settings(self) -> dict[str, Any] | None:
        return None if self.temperature is None else {"temperature": self.temperature}


@dataclass
class CandidateRun:
    """One candidate's run: its deps (attempts, result file), the agent's result when its SQL
    ran, or ``failure`` (why it produced none, with its last SQL and error)."""

    plan: CandidatePlan
    deps: Nl2SqlDeps
    result: Any = None  # pydantic-ai AgentRunResult[SqlAnswer]
    failure: str | None = None

    @property
    def ran(self) -> bool:
        return self.result is not None

    @property
    def sql(self) -> str | None:
        if self.result is not None:
            return self.result.output.sql
        return self.deps.attempts[-1].sql if self.deps.attempts else None

    @property
    def model(self) -> str:
        return model_label(self.plan.model)


def plan_candidates(count: int, model: Model, models: Sequence[Model] = ()) -> list[CandidatePlan]:
    """``count`` candidate plans: one plain run of ``model``, or generator styles, shuffled
    examples, temperature and ``models`` (else ``model``) taking turns."""
    if count == 1:
        return [CandidatePlan(1, model)]
    pool = list(models) or [model]
    return [CandidatePlan(number=k + 1, model=pool[k % len(pool)],
                          generator=GENERATORS[k % len(GENERATORS)],
                          temperature=None if k == 0 else TEMPERATURE, shuffle_examples=k > 0)
            for k in range(count)]


def candidate_instructions(plan: CandidatePlan, context: PromptContext,
                           render: Callable[[PromptContext], str]) -> str:
    """The instructions candidate ``plan`` is given: the rendered context (examples shuffled
    when planned) plus its generator's guidance."""
    if plan.shuffle_examples and len(context.examples) > 1:
        examples = list(context.examples)
        random.Random(plan.number).shuffle(examples)
        context = context.model_copy(update={"examples": examples})
    text = render(context)
    if plan.generator is None:
        return text
    guidance = load_prompt(f"nl2sql/generators/{plan.generator}").strip()
    return f"{text.rstrip()}\n\n{guidance}\n"


async def run_candidates(agent: Agent[Nl2SqlDeps, Any], plans: list[CandidatePlan], *,
                         question: str, instructions: Callable[[CandidatePlan], str],
                         deps: Callable[[CandidatePlan], Nl2SqlDeps], retries: int,
                         **run_kwargs: Any) -> list[CandidateRun]:
    """Every plan's run at once; ``run_kwargs`` (history, the shared usage and limits, the
    meter) go to each agent run. A setup error cancels the others and propagates."""

    async def one(plan: CandidatePlan) -> CandidateRun:
        run = CandidateRun(plan, deps(plan))
        try:
            run.result = await run_agent(agent, question, model=plan.model, deps=run.deps,
                                         instructions=instructions(plan),
                                         model_settings=plan.model_settings, **run_kwargs)
        except UsageLimitExceeded as exc:
            run.failure = failure_detail(run.deps, f"the agent used up its budget ({exc}; "
                                         f"raise 'agent: max_requests / max_tokens' in dbs.yaml)")
        except UnexpectedModelBehavior:
            run.failure = failure_detail(run.deps, f"the model ran out of retries ({retries})")
        return run

    tasks = [asyncio.create_task(one(plan)) for plan in plans]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def failure_detail(deps: Nl2SqlDeps, why: str) -> str:
    """Why a run produced no answer, with its last SQL and the database's error."""
    failed = [a for a in deps.attempts if a.error]
    if failed:
        last = failed[-1]
        sql = shorten(" ".join(last.sql.split()), _SQL_IN_MESSAGES)
        error = " ".join(last.error.split()).rstrip(".")
        return f"{why}; the last SQL was `{sql}` and failed: {error}"
    if deps.attempts:
        sql = shorten(" ".join(deps.attempts[-1].sql.split()), _SQL_IN_MESSAGES)
        return f"{why}; the last SQL was `{sql}`"
    return f"{why}; the model ran no SQL"


def no_answer(runs: list[CandidateRun], db_id: str) -> NoAnswerError:
    """``NoAnswerError`` when no candidate's SQL ran: one run's reason as always, or each
    candidate's last error."""
    attempts = [attempt for run in runs for attempt in run.deps.attempts]
    if len(runs) == 1:
        detail = runs[0].failure
        head = f"No answer for {db_id} after {len(attempts)} SQL attempt(s): {detail}."
    else:
        reasons = "; ".join(f"candidate {run.plan.number} ({run.plan.generator}): {run.failure}"
                            for run in runs)
        head = f"No answer for {db_id}: all {len(runs)} candidates failed. {reasons}."
    return NoAnswerError(f"{head} Rephrase the question or try another model.",
                         attempts=attempts, db_id=db_id,
                         sql=attempts[-1].sql if attempts else None)
