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
    description="A result file in the workspace, as listed by saved_queries_list or returned "
                "by db_execute_sql, e.g. 'top_customers.csv'. Paths outside the workspace are "
                "refused.")]
RowCount = Annotated[int, Field(ge=1, le=1000, description="How many rows to show (1-1000).")]
SqlQuery = Annotated[str, Field(description=(
    "One read-only SQL query (SELECT, WITH ... SELECT, VALUES) in the database's dialect. "
    "Quote identifiers exactly as db_show_schema shows them."))]
OutputFile = Annotated[str | None, Field(description=(
    "Optional file name for the result in the workspace, e.g. 'top_customers.csv'; derived "
    "from the query when omitted. An existing result is never replaced unless overwrite is "
    "true (a derived name gets a _2, _3... suffix instead)."))]
Overwrite = Annotated[bool, Field(description=(
    "Replace an existing result file named by output_file (default false: the call is "
    "refused and nothing is changed)."))]
NlQuery = Annotated[str | None, Field(description=(
    "The question in plain language this query answers; saved with the result so "
    "saved_queries_list can find it later."))]
TableName = Annotated[str, Field(description="Table name as db_show_schema shows it.")]
RowId = Annotated[int | str | list[int | str] | dict[str, int | str], Field(description=(
    "The primary key value, e.g. 42 or 'ALFKI'. For a composite key: a list of values in "
    "key order, or an object {column: value}."))]
FollowForeignKeys = Annotated[bool, Field(description=(
    "Also fetch the rows this row's foreign keys point to."))]
SearchWords = Annotated[str | None, Field(description=(
    "Words to look for in the saved questions and SQL (all must match, prefixes count: "
    "'cust' finds 'customers'). Omit to list the newest."))]
Question = Annotated[str, Field(description="The question in plain language.")]
OptionalDbId = Annotated[str | None, Field(description=(
    "A database id from db_list. Omit it to rank the databases for the question instead."))]
TableNames = Annotated[list[str] | None, Field(description=(
    "Only these tables (names as db_show_schema or db_search_schema show them). Omit for the "
    "whole schema."))]
ChartKindName = Annotated[Literal["line", "bar", "scatter", "card"] | None, Field(description=(
    "Chart kind; omit to choose from the result's shape."))]
ColumnName = Annotated[str | None, Field(description=(
    "A column of the CSV; omit to choose from the result's shape."))]
