"""Sample rows per table as a short CSV text (``TableInfo.sample_data_csv``).

A few rows show the model what the values look like (formats, casing, codes). The query reads
``rows`` rows in primary-key order when there is one (an index scan, cheap on any size; a
backend without indexes sorts only tables up to ``DbConnection.sample_order_max_rows``) and
otherwise in storage order; long values are cut to ``max_chars`` and line breaks flattened, so
one CSV line is one row.
"""

from __future__ import annotations

import csv
import io
import logging
from dataclasses import dataclass

from sqlalchemy import column, select, table
from sqlalchemy.exc import DBAPIError

from nl2sql.db.base import DbConnection
from nl2sql.models import TableInfo

log = logging.getLogger(__name__)

ELLIPSIS = "..."


@dataclass(frozen=True)
class SampleSettings:
    rows: int = 3
    max_chars: int = 60


def format_value(value: object, max_chars: int = 60) -> str:
    """One cell as text: NULL is empty, bytes are summarized, long text is cut."""
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(bytes(value))} bytes>"
    text = " ".join(str(value).split()) if any(c in str(value) for c in "\r\n\t") else str(value)
    if len(text) > max_chars:
        return text[: max(1, max_chars - len(ELLIPSIS))] + ELLIPSIS
    return text


def rows_to_csv(header: list[str], rows: list[tuple[object, ...]], max_chars: int = 60) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([format_value(v, max_chars) for v in row])
    return buffer.getvalue()


def collect_sample(connection: DbConnection, table_info: TableInfo,
                   settings: SampleSettings | None = None) -> str | None:
    """The first ``settings.rows`` rows of the table or view as CSV text (header included),
    or None when it has no columns, the setting is 0, or the database refuses the query."""
    settings = settings or SampleSettings()
    if settings.rows <= 0 or not table_info.columns:
        return None
    names = [c.name for c in table_info.columns]
    source = table(table_info.relation_name, *[column(n) for n in names],
                   schema=table_info.schema_name or connection.schema)
    query = select(*[source.c[n] for n in names]).limit(settings.rows)
    big = (connection.sample_order_max_rows is not None
           and (table_info.row_count is None
                or table_info.row_count > connection.sample_order_max_rows))
    if table_info.primary_key and not big:
        query = query.order_by(*[source.c[n] for n in table_info.primary_key])
    try:
        with connection.connect() as conn:
            rows = [tuple(row) for row in conn.execute(query)]
    except DBAPIError as exc:
        # A broken view or a permission gap must not stop the annotation of the other tables.
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
        log.warning("no sample rows for %s: %s", table_info.name, reason)
        return None
    return rows_to_csv(names, rows, settings.max_chars)
