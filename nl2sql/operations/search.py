"""``db_search_schema_op``: the part of a big schema a question needs (context engine), or the
databases ranked for it; and the token cap that keeps ``db_show_schema`` answers readable."""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict

from nl2sql.context_engine.prompt_context import WHOLE_SCHEMA_FITS, PromptContext
from nl2sql.errors import ConfigError, require_question
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.first_use import prepare_context_engine
from nl2sql.operations.params import OptionalDbId, Question

#: Environment variable: the most tokens (chars/4) one db_show_schema answer may have.
ENV_SCHEMA_TOKEN_CAP = "NL2SQL_SCHEMA_TOKEN_CAP"
#: Below Claude Code's default limit of 25,000 tokens for one tool result.
DEFAULT_SCHEMA_TOKEN_CAP = 20_000


def schema_token_cap() -> int:
    raw = os.environ.get(ENV_SCHEMA_TOKEN_CAP)
    if not raw:
        return DEFAULT_SCHEMA_TOKEN_CAP
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(f"{ENV_SCHEMA_TOKEN_CAP} must be a positive number of tokens, not "
                          f"'{raw}'.")
    return value


class SchemaSearch(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    context: PromptContext
    ranked_only: bool

    def render(self) -> str:
        ctx = self.context
        if self.ranked_only:
            lines = ["Databases ranked for the question (best first; call db_search_schema "
                     "again with the db_id to get its tables):"]
            lines += [f"- {c.db_id} (score {c.score:.2f}): {c.reason}" for c in ctx.candidates]
            return "\n".join(lines)
        if not ctx.pruned:  # db_show_schema's schema, with only what the question adds to it
            lines = [f"The whole schema of {ctx.db_id} fits ({ctx.schema_tokens:,} tokens); "
                     f"it is the same as db_show_schema's."]
            relevant = [t for t in ctx.tables if t.reason != WHOLE_SCHEMA_FITS]
            if relevant:
                lines += ["", "Tables the question points to:"]
                lines += [f"- {t.name}: {t.reason}" for t in relevant]
            if ctx.value_hints:
                lines += ["", "Values the question names:"]
                lines += [f"- {hint.render()}" for hint in ctx.value_hints]
            lines += ctx.glossary_lines()
            return "\n".join([*lines, "", ctx.schema_sql.rstrip()])
        return ctx.model_copy(update={"candidates": []}).render()


def db_search_schema_op(ctx: OpsContext, question: Question,
                        db_id: OptionalDbId = None) -> SchemaSearch:
    """The tables of ``db_id`` that matter for ``question`` (with reasons, join tables and the
    stored values it names) within the token budget; without ``db_id``, the ranked databases."""
    prepare_context_engine()  # before its first import: concurrent first calls
    from nl2sql.context_engine.engine import engine_for  # not at start-up: semantic models

    engine = engine_for(ctx.configs)
    if db_id is None:
        question = require_question(question)
        return SchemaSearch(context=PromptContext(question=question, db_id=None,
                                            candidates=engine.rank(question)),
                            ranked_only=True)
    return SchemaSearch(context=engine.context(question, db_id=db_id), ranked_only=False)
