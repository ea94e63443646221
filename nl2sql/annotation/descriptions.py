"""LLM descriptions: tables and their columns (one request per table, chunked when wide) and
the database as a whole (one request).

Descriptions imported from database comments are kept unless ``rewrite`` is set; ``user``
descriptions are never replaced.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field, create_model
from pydantic_ai import Agent

from nl2sql.annotation import prompt_text
from nl2sql.llm.prompt_files import render_prompt
from nl2sql.annotation.runner import StepRunner, answer_keys, keyed_model, keyed_values
from nl2sql.schema.models import ColumnInfo, DbInfo, TableInfo

TABLE_STEP = "table_descriptions"
DATABASE_STEP = "database_description"
DB_SAMPLE_TABLES = 8
DB_SAMPLE_ROWS = 2


class DatabaseDescription(BaseModel):
    description: str = Field(min_length=1, description="2 to 4 sentences about the database.")


@dataclass
class DescriptionRequest:
    """One request: a table's description (maybe) and a chunk of its columns."""

    table: TableInfo
    describe_table: bool
    columns: list[ColumnInfo]


def needs_text(text: str | None, source: str | None, rewrite: bool) -> bool:
    return not (text and text.strip()) or (rewrite and source == "comment")


def table_changed(table: TableInfo, previous: DbInfo | None) -> bool:
    """True when a previous cache exists and this table is new or structurally different."""
    if previous is None:
        return False
    before = previous.table(table.name)
    return before is None or before.fingerprint() != table.fingerprint()


def plan_table_requests(db_info: DbInfo, previous: DbInfo | None, *, rewrite: bool = False,
                        max_columns: int = 60) -> list[DescriptionRequest]:
    """The requests the step needs: none for a table that is unchanged and fully described."""
    requests = []
    for table in db_info.tables:
        changed = table_changed(table, previous)
        describe_table = (needs_text(table.description, table.description_source, rewrite)
                          or (changed and table.description_source == "llm"))
        columns = [c for c in table.columns
                   if needs_text(c.description, c.description_source, rewrite)]
        if not describe_table and not columns:
            continue
        chunks = [columns[i:i + max_columns] for i in range(0, len(columns), max_columns)] or [[]]
        for index, chunk in enumerate(chunks):
            requests.append(DescriptionRequest(table, describe_table and index == 0, chunk))
    return requests


def table_description_agent() -> Agent[None, str]:
    # The output type is built per request (one required field per column): see _output_type.
    return Agent(name="table_descriptions", retries=2)


def _output_type(request: DescriptionRequest, keys: dict[str, str]) -> type[BaseModel]:
    fields: dict[str, object] = {}
    if request.describe_table:
        fields["table_description"] = (str, Field(min_length=1, description=(
            f"1 to 3 sentences: what one row of {request.table.name} is and what it is for.")))
    if request.columns:
        columns = keyed_model("ColumnDescriptions", keys, str,
                              "Description of the column {column}.")
        fields["columns"] = (columns, Field(description="One description per requested column."))
    return create_model("TableAnnotation", **fields)  # type: ignore[call-overload]


def _task(request: DescriptionRequest, keys: dict[str, str]) -> str:
    lines = []
    if request.describe_table:
        lines.append(f"- `table_description`: what one row of `{request.table.name}` represents "
                     f"and what the table is used for.")
    if request.columns:
        listed = ", ".join(name if key == name else f"{name} (answer key: {key})"
                           for name, key in keys.items())
        lines.append(f"- `columns`: a description for each of these columns: {listed}.")
    return "\n".join(lines)


def table_prompt(db_info: DbInfo, request: DescriptionRequest, keys: dict[str, str]) -> str:
    table = request.table
    return render_prompt(
        "annotation/table_descriptions", db_id=db_info.db_id, db_type=db_info.db_type,
        table_name=table.name, table_kind="view" if table.is_view else "table",
        row_count=table.row_count if table.row_count is not None else "unknown",
        columns=prompt_text.columns_text(table), foreign_keys=prompt_text.foreign_keys_text(table),
        samples=prompt_text.samples_text(table), other_tables=prompt_text.other_tables_text(db_info, table),
        task=_task(request, keys))


async def describe_table(runner: StepRunner, agent: Agent[None, str], db_info: DbInfo,
                         request: DescriptionRequest) -> None:
    """Send one request and write its descriptions into the table (source ``llm``)."""
    keys = answer_keys([c.name for c in request.columns])
    answer = await runner.run(agent, table_prompt(db_info, request, keys), step=TABLE_STEP,
                              output_type=_output_type(request, keys))
    if request.describe_table:
        request.table.description = answer.table_description.strip()
        request.table.description_source = "llm"
        request.table.description_model = None  # labelled with this run's model on save
    if request.columns:
        texts = keyed_values(answer.columns, keys)
        for column in request.columns:
            column.description = texts[column.name].strip()
            column.description_source = "llm"
            column.description_model = None


# -- database description -----------------------------------------------------------------

def needs_database_description(db_info: DbInfo, previous: DbInfo | None, *,
                               rewrite: bool = False) -> bool:
    if needs_text(db_info.description, db_info.description_source, rewrite):
        return True
    if db_info.description_source != "llm" or previous is None:
        return False
    # A model-written description is refreshed when tables were added or removed.
    return {t.name for t in db_info.tables} != {t.name for t in previous.tables}


def database_description_agent() -> Agent[None, DatabaseDescription]:
    return Agent(output_type=DatabaseDescription, name="database_description", retries=2)


def database_prompt(db_info: DbInfo) -> str:
    samples = []
    for table in [t for t in db_info.tables if t.sample_data_csv][:DB_SAMPLE_TABLES]:
        lines = (table.sample_data_csv or "").strip().splitlines()[:DB_SAMPLE_ROWS + 1]
        samples.append(f"{table.name}:\n" + "\n".join(lines))
    return render_prompt(
        "annotation/database_description", db_id=db_info.db_id, db_type=db_info.db_type,
        table_count=len(db_info.tables),
        tables="\n".join(prompt_text.table_summary(t) for t in db_info.tables) or "(no tables)",
        samples="\n\n".join(samples) or "(no sample rows)")


async def describe_database(runner: StepRunner, agent: Agent[None, DatabaseDescription],
                            db_info: DbInfo) -> None:
    answer = await runner.run(agent, database_prompt(db_info), step=DATABASE_STEP)
    db_info.description = answer.description.strip()
    db_info.description_source = "llm"
    db_info.description_model = None
