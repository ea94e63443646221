"""The top-level keys of JSON columns: what a query can ask of a document (``prefs->>'lang'``).

Three sample rows show the keys of three documents; an events table whose payload changes with
the event type hides most of them, and a model guessing ``payload->>'amount'`` finds nothing.
Annotation reads the keys of the first ``JSON_ROWS`` rows of each JSON column (PostgreSQL
``json``/``jsonb``, MySQL and DuckDB ``JSON``, a MariaDB column checked by ``json_valid``), most
frequent first, where the backend can (``DbSchemaInspector.json_keys_sql``), by the same
admission as samples (a table whose reading runs a user function is not read).
"""

from __future__ import annotations

import logging
import re

from sqlalchemy import column, select, table
from sqlalchemy.exc import DBAPIError

from nl2sql.db.base import DbConnection
from nl2sql.inspection.base import create_inspector
from nl2sql.inspection.samples import readable_columns, refusal_reason
from nl2sql.inspection.statistics import EnumScreeningSettings
from nl2sql.schema.models import MAX_JSON_KEYS, ColumnInfo, TableInfo

__all__ = ["JSON_ROWS", "MAX_KEYS", "is_json_column", "read_json_keys"]

log = logging.getLogger(__name__)

#: Rows whose documents are read per column: fewer than enum screening's sample (a document
#: can be kilobytes: 10,000 of them are tens of megabytes for the server to parse, within
#: the statement time limit, which ends a slower read with one warning).
JSON_ROWS = 10_000
#: Keys kept per column, most frequent first: the schema shows ``MAX_JSON_KEYS``, and one more
#: says there are more.
MAX_KEYS = MAX_JSON_KEYS + 1
_JSON_TYPES = {"JSON", "JSONB"}
#: MariaDB's JSON is LONGTEXT with this check (``json_valid(`payload`)``).
_JSON_VALID = re.compile(r"^\s*json_valid\s*\(\s*[`\"]?(?P<name>[^`\")]+)[`\"]?\s*\)\s*$",
                         re.IGNORECASE)


def is_json_column(column_info: ColumnInfo, table_info: TableInfo) -> bool:
    """A column holding JSON documents: of a JSON type, or checked by ``json_valid``."""
    if column_info.data_type.upper() in _JSON_TYPES:
        return True
    return any((found := _JSON_VALID.match(check.sql)) is not None
               and found["name"] == column_info.name for check in table_info.check_constraints)


def read_json_keys(connection: DbConnection, tables: list[TableInfo],
                   settings: EnumScreeningSettings | None = None) -> None:
    """Set ``json_keys`` on the JSON columns of ``tables`` (not views, not secret columns, not
    an unreadable table), one statement per column; a refused statement is one warning."""
    settings = settings or EnumScreeningSettings()
    inspector = create_inspector(connection)
    template = inspector.json_keys_sql
    for table_info, columns in readable_columns(connection, tables if template else [],
                                                is_json_column, "JSON keys"):
        schema = table_info.schema_name or inspector.schema
        for column_info in columns:
            base = table(table_info.relation_name, column(column_info.name), schema=schema)
            try:
                with connection.connect() as conn:
                    rows = select(base.c[column_info.name].label("j")).limit(
                        min(JSON_ROWS, settings.sample_size))
                    rows_sql = str(rows.compile(dialect=conn.dialect,
                                                compile_kwargs={"literal_binds": True}))
                    found = conn.exec_driver_sql(
                        template.format(rows=rows_sql, keys=MAX_KEYS)).all()
            except DBAPIError as exc:
                log.warning("no JSON keys for %s.%s: %s", table_info.name, column_info.name,
                            refusal_reason(exc))
                continue
            column_info.json_keys = [str(key) for key, _count in found] or None
