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
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import column, select, table
from sqlalchemy.exc import DBAPIError

from nl2sql.db.base import DbConnection
from nl2sql.errors import QueryRejectedError
from nl2sql.inspection.base import create_inspector
from nl2sql.inspection.statistics import Relation
from nl2sql.schema.models import ColumnInfo, TableInfo
from nl2sql.schema.secret_columns import WITHHELD
from nl2sql.sql_guard.user_functions import UserFunctions
from nl2sql.workspace import csv_dialect

log = logging.getLogger(__name__)

ELLIPSIS = "..."


@dataclass(frozen=True)
class SampleSettings:
    rows: int = 3
    max_chars: int = 60


def format_value(value: object, max_chars: int = 60) -> str:
    """One cell as a query's result writes it (``csv_dialect``: JSON as JSON, ``t``/``f``,
    ``2024-01-31 13:45:00+00``), not as Python prints it (``{'a': None}``, ``True``, ``1 day,
    2:03:04``): NULL is empty, bytes are summarized, long text is cut."""
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(bytes(value))} bytes>"
    text = csv_dialect.format_value(value) or ""
    if any(c in text for c in "\r\n\t"):
        text = " ".join(text.split())
    if len(text) > max_chars:
        return text[: max(1, max_chars - len(ELLIPSIS))] + ELLIPSIS
    return text


def collect_sample(connection: DbConnection, table_info: TableInfo,
                   settings: SampleSettings | None = None) -> str | None:
    """The first ``settings.rows`` rows of the table or view as CSV text (header included),
    or None when it has no columns, the setting is 0, or the database refuses the query."""
    settings = settings or SampleSettings()
    read = _read_columns(table_info)
    if settings.rows <= 0 or not read or runs_user_function(connection, table_info):
        return None
    names = [c.name for c in table_info.columns]
    source = table(table_info.relation_name, *[column(n) for n in names],
                   schema=table_info.schema_name or connection.schema)
    inspector = create_inspector(connection)
    query = select(*[inspector.sample_column(source.c[name], table_info.column(name).data_type)
                     for name in read]).limit(settings.rows)
    order = _sample_order(connection, table_info)
    if order:
        query = query.order_by(*[source.c[n] for n in order])
    try:
        with connection.connect() as conn:
            rows = [tuple(row) for row in conn.execute(query)]
    except DBAPIError as exc:
        # A broken view or a permission gap must not stop the annotation of the other tables.
        reason = refusal_reason(exc)
        if inspector.refuses_for_good(exc, table_info):  # not a timeout, not a column grant
            table_info.unreadable = reason
        log.warning("no sample rows for %s: %s", table_info.name, reason)
        return None
    return _sample_csv(table_info, rows, settings.max_chars)


def _read_columns(table_info: TableInfo) -> list[str]:
    """The columns whose values the sample rows show: all but the secret ones."""
    return [c.name for c in table_info.columns if not c.secret]


def _sample_csv(table_info: TableInfo, rows: list[tuple[object, ...]], max_chars: int) -> str:
    """Rows of ``_read_columns`` as the sample CSV of every column (header included), a
    secret one's cells ``WITHHELD``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([c.name for c in table_info.columns])
    for row in rows:
        cells = iter(row)
        writer.writerow([WITHHELD if c.secret else format_value(next(cells), max_chars)
                         for c in table_info.columns])
    return buffer.getvalue()


def refusal_reason(exc: DBAPIError) -> str:
    """The database's first line for a query it refused (``permission denied for table t``)."""
    return str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__


def runs_user_function(connection: DbConnection, table_info: TableInfo,
                       what: str = "sample rows", functions: UserFunctions | None = None) -> bool:
    """Whether reading the table or view would run a user-defined function dbs.yaml does not
    allow (a view calling one, a row-level security policy, a column of a type with a user
    cast or domain check): it is not sampled or screened (one warning, "no ``what`` for"; the
    table's ``unreadable`` says why), by the same rule as queries. ``functions``: the catalogue
    as just read (default: read now)."""
    try:
        if functions is None:
            connection.check_relation(table_info.name)
        else:
            connection.relation_admission(table_info.name)(functions)
    except QueryRejectedError as exc:
        table_info.unreadable = str(exc)
        log.warning("no %s for %s: %s", what, table_info.name, exc)
        return True
    return False


def readable_columns(connection: DbConnection, tables: list[TableInfo],
                     pick: Callable[[ColumnInfo, TableInfo], bool],
                     what: str) -> list[tuple[TableInfo, list[ColumnInfo]]]:
    """The tables (not views, not empty, not known unreadable) with the columns ``pick``
    chooses among their non-secret ones, whose reading the guard admits (the catalogue read
    once; a table whose reading would run a user function is one warning, "no ``what``")."""
    jobs = [(t, columns) for t in tables if not t.is_view and t.row_count != 0
            and not t.unreadable  # the samples' step said why
            and (columns := [c for c in t.columns if not c.secret and pick(c, t)])]
    functions = connection.user_functions() if jobs else None
    return [(t, columns) for t, columns in jobs
            if not runs_user_function(connection, t, what, functions)]


def _sample_order(connection: DbConnection, table_info: TableInfo) -> list[str]:
    """The primary key, unless sorting by it would be a full sort of a big table."""
    big = (connection.sample_order_max_rows is not None
           and (table_info.row_count is None
                or table_info.row_count > connection.sample_order_max_rows))
    return [] if big else table_info.primary_key


def collect_samples(connection: DbConnection, tables: list[TableInfo],
                    settings: SampleSettings | None = None, *,
                    on_done: Callable[[list[str]], object] | None = None
                    ) -> dict[str, str | None]:
    """``collect_sample`` of each table (by name), with the same results, in few statements
    where the backend reads many tables in one (``DbSchemaInspector.batch_size``): tables
    known to be empty (an exact row count of 0) are not queried at all, the others go in
    batches. A batch the database refuses (a broken view, a permission gap) is retried table
    by table, so only the failing table goes without samples, with its warning. ``on_done``
    gets the names of the tables whose samples are read, as they are (for progress)."""
    settings = settings or SampleSettings()
    done = on_done or (lambda names: None)
    inspector = create_inspector(connection)
    samples: dict[str, str | None] = {}
    batched: list[TableInfo] = []
    functions = connection.user_functions() if tables and settings.rows > 0 else None
    for table_info in tables:
        schema = table_info.schema_name or connection.schema
        if settings.rows <= 0 or not _read_columns(table_info) or \
                runs_user_function(connection, table_info, functions=functions):
            samples[table_info.name] = None
        elif (table_info.row_count == 0 and not table_info.row_count_is_estimate
              and not table_info.is_view):
            samples[table_info.name] = _sample_csv(table_info, [], settings.max_chars)
        elif inspector.batch_size <= 0 or schema is None:
            samples[table_info.name] = collect_sample(connection, table_info, settings)
        else:
            batched.append(table_info)
            continue
        done([table_info.name])
    for start in range(0, len(batched), max(1, inspector.batch_size)):
        chunk = batched[start:start + inspector.batch_size]
        relations = [Relation(t.name, t.schema_name or connection.schema or "", t.relation_name,
                              _read_columns(t), _sample_order(connection, t))
                     for t in chunk]
        try:
            with connection.connect() as conn:
                found = inspector.sample_rows_many(conn, relations, settings.rows)
        except DBAPIError:
            for table_info in chunk:
                samples[table_info.name] = collect_sample(connection, table_info, settings)
            done([t.name for t in chunk])
            continue
        for table_info, relation in zip(chunk, relations):
            samples[relation.key] = _sample_csv(table_info, found[relation.key],
                                                settings.max_chars)
        done([t.name for t in chunk])
    return samples
