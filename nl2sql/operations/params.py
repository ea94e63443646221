"""Parameter types of the operations, with the descriptions models and people read.

The ``*_op`` functions annotate their public parameters with these types, so every face that
adapts an operation (the MCP tools, the agent tools) shows the same names, types, bounds and
descriptions without repeating them. Plain pydantic ``Annotated`` types: importing this module
loads nothing heavy.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

DbId = Annotated[str, Field(description="A database id from db_list, e.g. 'bookstore'.")]
CsvFile = Annotated[str, Field(
    description="A result file in the workspace, e.g. 'top_customers.csv'.")]
RowCount = Annotated[int, Field(ge=1, le=1000, description="How many rows to show (1-1000).")]
SqlQuery = Annotated[str, Field(description=(
    "One read-only query in the database's dialect, identifiers as db_show_schema shows "
    "them."))]
OutputFile = Annotated[str | None, Field(description=(
    "File name for the result, e.g. 'top_customers.csv' (default: from the query)."))]
Overwrite = Annotated[bool, Field(description=(
    "Replace an existing output_file (else such a call is refused)."))]
NlQuery = Annotated[str | None, Field(description=(
    "The question this query answers, saved with the result for saved_queries_list."))]
TableName = Annotated[str, Field(description="Table name as db_show_schema shows it.")]
RowId = Annotated[int | str | list[int | str] | dict[str, int | str], Field(description=(
    "The primary key value, e.g. 42 or 'ALFKI'; a composite key as a list in key order or "
    "{column: value}."))]
FollowForeignKeys = Annotated[bool, Field(description=(
    "Also fetch the rows this row's foreign keys point to."))]
SearchWords = Annotated[str | None, Field(description=(
    "Words to find in saved questions and SQL (prefixes count). Omit for the newest."))]
Question = Annotated[str, Field(description="The question in plain language.")]
OptionalDbId = Annotated[str | None, Field(description=(
    "A database id from db_list; omit to rank the databases."))]
TableNames = Annotated[list[str] | None, Field(description=(
    "Only these tables; omit for the whole schema."))]
ChartKindName = Annotated[Literal["line", "bar", "scatter", "card"] | None, Field(description=(
    "Chart kind; omit to choose from the result's shape."))]
ColumnName = Annotated[str | None, Field(description=(
    "A column of the CSV; omit to choose from the result's shape."))]
MetricNames = Annotated[list[str], Field(min_length=1, description=(
    "Metric names from metrics_list."))]
GroupByNames = Annotated[list[str] | None, Field(description=(
    "Group-bys from metrics_list, e.g. ['customer__country', 'metric_time__month']; a date "
    "part: 'metric_time__extract_dow' (1 Monday-7 Sunday), _year, _quarter, _month, _day, "
    "_doy."))]
MetricFilters = Annotated[list[str] | None, Field(description=(
    "Conditions on group-bys, e.g. [\"customer__country = 'US'\"]; a true/false group-by "
    "(a Cube segment) alone, e.g. [\"orders.completed\"]; dbt: a metric per entity, e.g. "
    "[\"customer__order_count >= 3\"]."))]
MetricOrder = Annotated[list[str] | None, Field(description=(
    "Columns to sort by, '-revenue' descending."))]
RowLimit = Annotated[int | None, Field(ge=0, description="Most rows.")]
