"""The NL2SQL agent: writes SQL for one database, runs it, fixes it, and answers ``SqlAnswer``.

The final SQL must have run: an output validator executes it through ``db_execute_sql_op``
(guard, row cap, timeout, CSV + metadata with the question as ``natural_language_query``) and
sends the database's error back as ``ModelRetry`` when it fails. An empty result is sent back
once (the model may confirm it by answering the same SQL again). Every SQL run, by the tool or
the validator, is recorded as an attempt. The model may answer through the output tool (the
default) or with a JSON object as text; both go through the same validator. Where the database
has governed metrics it may instead answer with a metric query (the output tool
``query_metrics``, the registry's ``metrics_query``): the compiled SQL runs into the answer's
result file the same way, and the answer's receipt names the metrics (``answer_source``).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError
from pydantic_ai import Agent, ModelRetry, RunContext, TextOutput, ToolOutput
from pydantic_ai.capabilities import PrepareOutputTools, PrepareTools
from pydantic_ai.tools import ToolDefinition

from nl2sql.access.disclosure import shown_to
from nl2sql.agents.answer import Attempt
from nl2sql.agents.tools import (PinnedDeps, agent_error, answer_operations,
                                 pinned_answer_function, tools_for)
from nl2sql.errors import Nl2SqlError
from nl2sql.operations.queries import QueryResult, db_execute_sql_op
from nl2sql.operations.registry import OPERATIONS, Operation
from nl2sql._worker import run_in_worker


#: The output tool's name: the model answers by calling it with a ``SqlAnswer``.
FINAL_RESULT = "final_result"


class SqlAnswer(BaseModel):
    sql: str = Field(description="The read-only SQL query that answers the question; it is run "
                                 "to produce the result file.")
    explanation: str = Field(description="One or two sentences for a person: what the query "
                                         "returns and any assumption made.")


class MetricAnswer(SqlAnswer):
    """An answer a metric query gave (the output tool ``query_metrics``): ``sql`` is the
    compiled SQL, which already ran."""

    metrics: list[str]

    @property
    def source(self) -> str:
        return f"metric:{','.join(self.metrics)}"


def answer_source(output: SqlAnswer) -> str:
    """The receipt's ``source`` of an agent's answer: ``metric:<names>`` or ``model``."""
    return output.source if isinstance(output, MetricAnswer) else "model"


@dataclass
class Nl2SqlDeps(PinnedDeps):
    question: str = ""
    # The answer's result file: a new one named after the question at the first run of a final
    # SQL, replaced by later runs of this question only (never a file someone else wrote).
    output_file: str | None = None
    answer_id: str | None = None  # written into the result's metadata as "id"
    metrics: bool = False  # the database has governed metrics: the metric tools are offered
    attempts: list[Attempt] = field(default_factory=list)
    result: QueryResult | None = None
    empty_seen: set[str] = field(default_factory=set)

    def observe(self, op_name: str, arguments: dict[str, Any], error: Exception | None) -> None:
        if op_name == "db_execute_sql" and "query" in arguments:
            self.attempts.append(Attempt(sql=arguments["query"],
                                         error=str(error) if error else None))


_Output = TypeVar("_Output", bound=BaseModel)
_FENCE = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_json_text(text: str, output: type[_Output], example: str) -> _Output:
    """A model that answers in text: a JSON object for ``output``, bare or in a fenced block;
    anything else is sent back asking for the output tool or a JSON object like ``example``."""
    match = _FENCE.search(text) or _OBJECT.search(text)
    if match:
        try:
            return output.model_validate(json.loads(match.group(1) if match.re is _FENCE
                                                    else match.group(0)))
        except (ValueError, ValidationError):
            pass
    raise ModelRetry(f"Answer with the {FINAL_RESULT} tool, or with only a JSON object {example}.")


def parse_text_answer(text: str) -> SqlAnswer:
    """A model that answers in text: ``{"sql": ..., "explanation": ...}``."""
    return parse_json_text(text, SqlAnswer,
                           '{"sql": "<the query>", "explanation": "<one sentence>"}')


def build_sql_agent(retries: int) -> Agent[Nl2SqlDeps, SqlAnswer]:
    agent: Agent[Nl2SqlDeps, SqlAnswer] = Agent(
        deps_type=Nl2SqlDeps,
        output_type=[ToolOutput(SqlAnswer, name=FINAL_RESULT),
                     *(_answer_tool(op) for op in answer_operations("nl2sql")),
                     TextOutput(parse_text_answer)],
        tools=tools_for("nl2sql"), retries=retries, name="nl2sql",
        capabilities=[PrepareTools(_offered), PrepareOutputTools(_offered)])
    agent.output_validator(validate_answer)
    return agent


#: The tools (function and output tools) of operations that need governed metrics.
_METRIC_TOOLS = frozenset(name for op in OPERATIONS if op.needs_metrics
                          for name in (op.name, op.agent_answer) if name)


def _offered(ctx: RunContext[Nl2SqlDeps], tools: list[ToolDefinition]) -> list[ToolDefinition]:
    """The metric tools only for a database with metrics (and a run that may use them)."""
    if ctx.deps.metrics:
        return tools
    return [tool for tool in tools if tool.name not in _METRIC_TOOLS]


def _answer_tool(op: Operation) -> ToolOutput[MetricAnswer]:
    """``op`` (``metrics_query``) as the output tool ``query_metrics``: it runs the metric
    query into the answer's result file; its errors and a first empty result go back to the
    model."""

    async def call(ctx: RunContext[Nl2SqlDeps], arguments: dict[str, Any]) -> MetricAnswer:
        deps = ctx.deps
        run = functools.partial(op.function, deps.ops, deps.db_id, **arguments,
                                output_file=deps.output_file, nl_query=deps.question,
                                overwrite=deps.output_file is not None, answer_id=deps.answer_id)
        call_text = f"-- {op.agent_answer}({json.dumps(arguments, ensure_ascii=False)})"
        try:
            result = await run_in_worker(run, name=op.name)
        except Nl2SqlError as error:
            _record(deps, error.sql or call_text, shown_to(deps.ops, str(error)))
            raise agent_error(error, deps.ops) from None
        _record(deps, result.sql_query, None)
        deps.output_file = result.csv_filename
        _retry_first_empty(deps, call_text, result.row_count)
        deps.result = result
        return MetricAnswer(sql=result.sql_query, explanation=_metric_explanation(arguments),
                            metrics=result.metrics)

    return ToolOutput(pinned_answer_function(op, call), name=op.agent_answer,
                      description=op.description)


def _metric_explanation(arguments: dict[str, Any]) -> str:
    """What a metric answer computed, for a person (the SQL was compiled, not written)."""
    text = f"The governed metric(s) {', '.join(arguments.get('metrics') or [])}"
    if arguments.get("dimensions"):
        text += f" by {', '.join(arguments['dimensions'])}"
    if arguments.get("where"):
        text += f", where {' and '.join(arguments['where'])}"
    if arguments.get("order_by"):
        text += f", ordered by {', '.join(arguments['order_by'])}"
    if arguments.get("limit") is not None:
        text += f", first {arguments['limit']} rows"
    return text + "; the SQL was compiled from the semantic model."


def _retry_first_empty(deps: Nl2SqlDeps, key: str, row_count: int) -> None:
    """An empty result goes back to the model once (it may confirm it by answering again)."""
    if row_count == 0 and key not in deps.empty_seen:
        deps.empty_seen.add(key)
        raise ModelRetry(
            "The query ran but returned no rows. If the question expects rows, check the "
            "filters against the stored values (case, spelling, date format) and the joins; "
            "if no rows is the right answer, give the same answer again.")


async def validate_answer(ctx: RunContext[Nl2SqlDeps], answer: SqlAnswer) -> SqlAnswer:
    """Run the final SQL; its errors (and a first empty result) go back to the model. A metric
    answer ran already."""
    if isinstance(answer, MetricAnswer):
        return answer
    deps = ctx.deps
    sql = answer.sql.strip().rstrip(";").strip()
    if not sql:
        raise ModelRetry("The answer has no SQL; give the query that answers the question.")
    run = functools.partial(db_execute_sql_op, deps.ops, deps.db_id, sql,
                            output_file=deps.output_file, nl_query=deps.question,
                            overwrite=deps.output_file is not None, name_from=deps.question,
                            answer_id=deps.answer_id)
    try:
        result = await run_in_worker(run, name="db_execute_sql")
    except Nl2SqlError as error:
        _record(deps, sql, shown_to(deps.ops, str(error)))
        raise agent_error(error, deps.ops) from None
    _record(deps, sql, None)
    deps.output_file = result.csv_filename
    _retry_first_empty(deps, sql, result.row_count)
    deps.result = result
    return answer.model_copy(update={"sql": sql})


def _record(deps: Nl2SqlDeps, sql: str, error: str | None) -> None:
    """The validator's run is an attempt; a repeat of the last successful tool run is not."""
    last = deps.attempts[-1] if deps.attempts else None
    if last is not None and last.sql.strip().rstrip(";").strip() == sql and last.error is None \
            and error is None:
        deps.attempts[-1] = Attempt(sql=sql)
        return
    deps.attempts.append(Attempt(sql=sql, error=error))
