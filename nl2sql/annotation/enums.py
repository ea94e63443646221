"""LLM enum classification of the columns the statistics screen kept as candidates.

Only undecided candidates are sent (``enum_candidates`` set, ``enum_decision`` None); clear-cut
columns stay decided by statistics. One request per table (chunked when there are many
candidates); the model sees the table's columns, row and distinct counts and the values with
their counts, and answers ``is_enum`` with a reason for each column.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field
from pydantic_ai import Agent

from nl2sql.annotation import prompt_text
from nl2sql.llm.prompt_files import render_prompt
from nl2sql.annotation.runner import StepRunner, answer_keys, keyed_model, keyed_values
from nl2sql.schema.models import ColumnInfo, DbInfo, TableInfo

STEP = "enum_classification"


class EnumVerdict(BaseModel):
    is_enum: bool = Field(description="True when the column holds a small fixed set of categories.")
    reasoning: str = Field(description="One short sentence explaining the decision.")


@dataclass
class EnumRequest:
    table: TableInfo
    columns: list[ColumnInfo]


def undecided_candidates(table: TableInfo) -> list[ColumnInfo]:
    return [c for c in table.columns if c.enum_candidates is not None and c.enum_decision is None]


def plan_enum_requests(db_info: DbInfo, *, max_columns: int = 60) -> list[EnumRequest]:
    requests = []
    for table in db_info.tables:
        columns = undecided_candidates(table)
        for i in range(0, len(columns), max_columns):
            requests.append(EnumRequest(table, columns[i:i + max_columns]))
    return requests


def enum_agent() -> Agent[None, str]:
    # The output type is built per request: one required verdict per candidate column.
    return Agent(name="enum_classification", retries=2)


def _candidate_block(column: ColumnInfo, key: str, row_count: int | None) -> str:
    rows = row_count if row_count is not None else "unknown"
    distinct = column.distinct_count if column.distinct_count is not None else "unknown"
    header = f"### {column.name} ({column.data_type})"
    if key != column.name:
        header += f" -- answer key: {key}"
    return (f"{header}\nrows: {rows}, distinct values: {distinct}\n"
            f"values: {prompt_text.value_counts_text(column.enum_candidates or [])}")


def enum_prompt(db_info: DbInfo, request: EnumRequest, keys: dict[str, str]) -> str:
    table = request.table
    blocks = [_candidate_block(c, keys[c.name], table.row_count) for c in request.columns]
    return render_prompt(
        "annotation/enum_classification", db_id=db_info.db_id, db_type=db_info.db_type,
        table_name=table.name,
        row_count=table.row_count if table.row_count is not None else "unknown",
        columns=prompt_text.columns_text(table), candidates="\n\n".join(blocks))


async def classify_enums(runner: StepRunner, agent: Agent[None, str], db_info: DbInfo,
                         request: EnumRequest) -> None:
    """Send one request and record the decisions (``enum_decision="llm"``)."""
    keys = answer_keys([c.name for c in request.columns])
    output_type = keyed_model("EnumVerdicts", keys, EnumVerdict, "Decision for the column {column}.")
    answer = await runner.run(agent, enum_prompt(db_info, request, keys), step=STEP,
                              output_type=output_type)
    verdicts: dict[str, EnumVerdict] = keyed_values(answer, keys)
    for column in request.columns:
        verdict = verdicts[column.name]
        column.is_enum = verdict.is_enum
        column.enum_decision = "llm"
        column.enum_model = None  # labelled with this run's model on save
        column.enum_reasoning = verdict.reasoning.strip()
        column.enum_values = ([v.value for v in column.enum_candidates or [] if v.value is not None]
                              if verdict.is_enum else [])
