"""Example queries: the model writes question + SQL pairs; each one is checked by the read-only
guard, executed, and kept only when it returns rows. Failures go back to the model as feedback
(an output validator raising ``ModelRetry`` with the database's error) up to a retry limit;
what still fails is dropped, so a weak model ends with fewer examples, never with broken ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from pydantic import BaseModel, Field
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.exceptions import UnexpectedModelBehavior

from nl2sql.annotation import prompt_text
from nl2sql.llm.prompt_files import render_prompt
from nl2sql.annotation.runner import StepRunner
from nl2sql.db.base import DbConnection, DbOperations, create_operations
from nl2sql.errors import QueryExecutionError, QueryRejectedError
from nl2sql.schema.models import DbInfo, ExampleQuery

STEP = "example_queries"
ROW_LIMIT = 1_000          # rows fetched to check a query; ExampleQuery.row_count is capped here
ERROR_CHARS = 300
#: Extra field on DbInfo: the schema fingerprint the examples were last generated for.
MARKER = "example_queries_schema"


class ExampleQueryDraft(BaseModel):
    question: str = Field(description="A question a user might ask, in plain language.")
    sql: str = Field(description="One read-only SELECT statement that answers the question.")


class ExampleQueryBatch(BaseModel):
    queries: list[ExampleQueryDraft]


@dataclass
class ExampleDeps:
    operations: DbOperations
    wanted: int
    accepted: list[ExampleQuery] = field(default_factory=list)
    #: Why drafts were turned down (one of the ``REJECTED_*`` reasons) -> how many.
    rejected: Counter[str] = field(default_factory=Counter)


REJECTED_EMPTY = "empty"
REJECTED_GUARD = "refused by the read-only check"
REJECTED_ERROR = "failed in the database"
REJECTED_NO_ROWS = "returned no rows"
REJECTED_DUPLICATE = "duplicates"


def examples_up_to_date(db_info: DbInfo, previous: DbInfo | None) -> bool:
    """True when examples were generated for exactly this schema (0 requests needed)."""
    marker = getattr(db_info, MARKER, None) or getattr(previous, MARKER, None)
    return marker == db_info.fingerprint()


def run_example_query(operations: DbOperations, sql: str, limit: int = ROW_LIMIT) -> int:
    """Check ``sql`` with the read-only guard and execute it under the database's time limit
    and a row cap; the number of rows (at most ``limit``)."""
    return operations.count_rows(sql, limit=limit)


def check_example(deps: ExampleDeps, draft: ExampleQueryDraft) -> tuple[ExampleQuery | None, str]:
    """(kept example, '') or (None, why it was refused)."""
    if not draft.question.strip() or not draft.sql.strip():
        deps.rejected[REJECTED_EMPTY] += 1
        return None, "the question or the SQL is empty"
    try:
        rows = run_example_query(deps.operations, draft.sql)
    except QueryRejectedError as exc:
        deps.rejected[REJECTED_GUARD] += 1
        return None, f"refused by the read-only check: {str(exc)[:ERROR_CHARS]}"
    except QueryExecutionError as exc:
        deps.rejected[REJECTED_ERROR] += 1
        return None, f"the database rejected it: {str(exc)[:ERROR_CHARS]}"
    if rows == 0:
        deps.rejected[REJECTED_NO_ROWS] += 1
        return None, "it returned no rows; use values that occur in the data"
    return ExampleQuery(question=draft.question.strip(), sql=draft.sql.strip(), row_count=rows), ""


def example_agent(retries: int = 3) -> Agent[ExampleDeps, ExampleQueryBatch]:
    agent = Agent(output_type=ExampleQueryBatch, deps_type=ExampleDeps, name="example_queries",
                  retries={"output": retries, "tools": retries})

    @agent.output_validator
    def _validate(ctx: RunContext[ExampleDeps], batch: ExampleQueryBatch) -> ExampleQueryBatch:
        deps = ctx.deps
        failures = []
        seen = {q.sql for q in deps.accepted} | {q.question.lower() for q in deps.accepted}
        for number, draft in enumerate(batch.queries, 1):
            if len(deps.accepted) >= deps.wanted:
                break
            if draft.sql.strip() in seen or draft.question.strip().lower() in seen:
                deps.rejected[REJECTED_DUPLICATE] += 1
                failures.append(f"{number}. {draft.question!r}: a duplicate of a kept example")
                continue
            example, reason = check_example(deps, draft)
            if example is None:
                failures.append(f"{number}. {draft.question!r}: {reason}\n   SQL: {draft.sql}")
            else:
                deps.accepted.append(example)
                seen |= {example.sql, example.question.lower()}
        missing = deps.wanted - len(deps.accepted)
        if missing > 0 and ctx.retry < ctx.max_retries:
            # Kept examples are remembered in deps; the answer only needs the replacements.
            problems = "\n".join(failures) or f"only {len(batch.queries)} queries were given"
            raise ModelRetry(f"{len(deps.accepted)} examples are kept. These failed:\n{problems}"
                             f"\nAnswer with {missing} new example(s) (question + sql), fixing "
                             f"the errors above; do not repeat the kept ones.")
        return batch

    return agent


def existing_text(examples: list[ExampleQuery]) -> str:
    return "\n".join(f"- {q.question}" for q in examples) or "(none)"


async def generate_examples(runner: StepRunner, agent: Agent[ExampleDeps, ExampleQueryBatch],
                            db_info: DbInfo, connection: DbConnection, *, wanted: int,
                            rejected: Counter[str] | None = None) -> int:
    """Re-check the cached examples, ask the model for the missing ones; returns how many were
    added. Updates ``db_info.example_queries`` and the schema marker; the reasons drafts were
    turned down are added to ``rejected``."""
    deps = ExampleDeps(create_operations(connection, db_info), wanted,
                       rejected=rejected if rejected is not None else Counter())
    for example in db_info.example_queries:  # schema changed: keep only what still works
        kept, _reason = check_example(deps, ExampleQueryDraft(question=example.question,
                                                               sql=example.sql))
        if kept is not None and len(deps.accepted) < wanted:
            deps.accepted.append(kept)
    before = len(deps.accepted)
    missing = wanted - before
    if missing > 0:
        prompt = render_prompt(
            "annotation/example_queries", db_id=db_info.db_id, db_type=db_info.db_type,
            dialect=connection.sqlglot_dialect, count=missing,
            schema=prompt_text.schema_text(db_info), existing=existing_text(deps.accepted))
        try:
            await runner.run(agent, prompt, step=STEP, deps=deps)
        except UnexpectedModelBehavior:
            pass  # answers that never fit the output schema: keep what was validated
    db_info.example_queries = deps.accepted[:wanted]
    setattr(db_info, MARKER, db_info.fingerprint())
    return len(db_info.example_queries) - before
