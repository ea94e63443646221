"""The catalog agent: which configured database answers a question (``CatalogChoice``).

With one configured database (the bundled sample does not count once a dbs.yaml names others)
no model is asked. With many, a ranking function scores them (``rank_databases``: the context
engine's candidates) and only the top few go to the model; an id outside them is sent back
with ``ModelRetry``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError
from pydantic_ai import Agent, ModelRetry, RunContext, TextOutput, ToolOutput

from nl2sql.agents.instructions import catalog_instructions
from nl2sql.errors import AccessDeniedError
from nl2sql.agents.tools import AgentDeps, tools_for
from nl2sql.llm.runs import run_agent
from nl2sql.operations.first_use import prepare_context_engine
from nl2sql.operations.ops_context import OpsContext
from nl2sql.context_engine import context
from nl2sql._worker import run_in_worker

if TYPE_CHECKING:
    from pydantic_ai.models import Model
    from pydantic_ai.usage import RunUsage

    from nl2sql.context_engine import Candidate


class CatalogChoice(BaseModel):
    db_id: str = Field(description="The id of the database that answers the question, exactly "
                                   "as listed among the candidates.")
    reasoning: str = Field(description="One sentence: why this database.")


@dataclass
class CatalogDeps(AgentDeps):
    candidates: list[str] = field(default_factory=list)


def rank_databases(ops: OpsContext, question: str) -> list[Candidate]:
    """Every configured database scored for ``question``, best first (the context engine)."""
    prepare_context_engine()  # concurrent first questions import it once
    return context(question, config=ops).candidates


def _parse_text_choice(text: str) -> CatalogChoice:
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match:
        try:
            return CatalogChoice.model_validate(json.loads(match.group(0)))
        except (ValueError, ValidationError):
            pass
    raise ModelRetry('Answer with the final_result tool, or with only a JSON object '
                     '{"db_id": "<one candidate id>", "reasoning": "<one sentence>"}.')


async def _validate_choice(ctx: RunContext[CatalogDeps], choice: CatalogChoice) -> CatalogChoice:
    db_id = choice.db_id.strip()
    if db_id not in ctx.deps.candidates:
        raise ModelRetry(f"'{db_id}' is not one of the candidates; answer with one of: "
                         f"{', '.join(ctx.deps.candidates)}.")
    return choice.model_copy(update={"db_id": db_id})


def build_catalog_agent(retries: int) -> Agent[CatalogDeps, CatalogChoice]:
    agent: Agent[CatalogDeps, CatalogChoice] = Agent(
        deps_type=CatalogDeps,
        output_type=[ToolOutput(CatalogChoice, name="final_result"),
                     TextOutput(_parse_text_choice)],
        tools=tools_for("catalog"), retries=retries, name="catalog")
    agent.output_validator(_validate_choice)
    return agent


async def choose_database(ops: OpsContext, question: str, *, model: Model,
                          usage: RunUsage, top: int = 5, retries: int = 3,
                          **run_kwargs: Any) -> CatalogChoice:
    """The database for ``question``: without a model call when only one is configured."""
    configs = list(ops.configs)  # the caller's databases
    if not configs:
        raise AccessDeniedError(f"No database is open to {ops.configs.scoped_for or 'you'}; "
                                f"ask an administrator to add you to a group that has one.")
    own = [config for config in configs if not config.is_bundled_sample]
    if len(own) <= 1:
        only = (own or configs)[0]
        return CatalogChoice(db_id=only.db_id, reasoning="the only configured database")

    ranked = await run_in_worker(rank_databases, ops, question)
    candidates = ranked[:top]
    descriptions = {config.db_id: config.description or "" for config in configs}
    deps = CatalogDeps(ops=ops, candidates=[c.db_id for c in candidates])
    result = await run_agent(build_catalog_agent(retries), question, model=model, deps=deps,
                             instructions=catalog_instructions(candidates, descriptions),
                             usage=usage, **run_kwargs)
    return result.output
