"""Minimal stand-in for ``nl2sql.sql_guard.validate_read_only`` (used only while the guard
package is not installed): one statement, and that statement a plain query."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from nl2sql.errors import QueryRejectedError


def validate_read_only(sql: str, dialect: str) -> exp.Expression:
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except sqlglot.errors.ParseError as exc:
        raise QueryRejectedError(f"The SQL does not parse: {str(exc).splitlines()[0]}; "
                                 f"fix the syntax.", sql=sql) from None
    if len(statements) != 1:
        raise QueryRejectedError("Send exactly one SQL statement.", sql=sql)
    statement = statements[0]
    if not isinstance(statement, exp.Query) or any(
            isinstance(node, (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Into))
            for node in statement.walk()):
        raise QueryRejectedError("Only a read-only SELECT query is allowed.", sql=sql)
    return statement
