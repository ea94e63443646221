"""The operations layer: every ``*_op`` the MCP server, the CLI and the agents adapt.

Each takes an ``OpsContext`` first and returns a pydantic model with ``render() -> str``.
"""

from __future__ import annotations

from nl2sql.operations.context import OpsContext
from nl2sql.operations.csv_files import csv_head_op, csv_tail_op
from nl2sql.operations.databases import db_list_op, db_show_schema_op
from nl2sql.operations.queries import db_execute_sql_op, db_get_row_by_id_op
from nl2sql.operations.saved_queries import saved_queries_list_op, saved_query_get_details_op

__all__ = [
    "OpsContext",
    "csv_head_op",
    "csv_tail_op",
    "db_execute_sql_op",
    "db_get_row_by_id_op",
    "db_list_op",
    "db_show_schema_op",
    "saved_queries_list_op",
    "saved_query_get_details_op",
]
