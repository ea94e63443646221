"""The operations layer: every ``*_op`` the MCP server, the CLI and the agents adapt.

Each takes an ``OpsContext`` first and returns a pydantic model with ``render() -> str``.
Names are imported on first use (PEP 562), so importing ``nl2sql.operations.ops_context`` (as the
MCP server does at start-up) does not load SQLAlchemy, sqlglot and every operation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nl2sql._helpers import lazy_exports

if TYPE_CHECKING:
    from nl2sql.operations.charts import csv_chart_op
    from nl2sql.operations.ops_context import OpsContext
    from nl2sql.operations.csv_files import csv_head_op, csv_tail_op
    from nl2sql.operations.databases import db_list_op, db_show_schema_op
    from nl2sql.operations.metrics import metrics_list_op, metrics_query_op
    from nl2sql.operations.queries import db_execute_sql_op, db_get_row_by_id_op
    from nl2sql.operations.saved_queries import (saved_queries_list_op, saved_query_accept_op,
                                                 saved_query_get_details_op)
    from nl2sql.operations.search import db_search_schema_op

_WHERE = {
    "OpsContext": "ops_context",
    "csv_chart_op": "charts",
    "csv_head_op": "csv_files",
    "csv_tail_op": "csv_files",
    "db_execute_sql_op": "queries",
    "db_get_row_by_id_op": "queries",
    "db_list_op": "databases",
    "db_search_schema_op": "search",
    "db_show_schema_op": "databases",
    "metrics_list_op": "metrics",
    "metrics_query_op": "metrics",
    "saved_queries_list_op": "saved_queries",
    "saved_query_accept_op": "saved_queries",
    "saved_query_get_details_op": "saved_queries",
}
__all__ = sorted(_WHERE)


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
