"""Query operations: run read-only SQL into workspace files, and look rows up by key.

``db_execute_sql_op`` is the whole workflow the MCP tool ``db_execute_sql`` and the agents call:
parser guard in the backend's dialect, engine-guarded streamed execution, CSV + metadata written
atomically, and a short preview for the model. ``db_get_row_by_id_op`` reads one row by primary
key (composite keys too) and the rows its outbound foreign keys point at.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from nl2sql.errors import Nl2SqlError, QueryExecutionError, QueryTimeoutError, require_text
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.params import (DbId, FollowForeignKeys, NlQuery, OutputFile, Overwrite,
                                      RowId, SqlQuery, TableName)
from nl2sql.workspace.csv_dialect import format_value
from nl2sql.workspace.preview import format_preview, plain_number
from nl2sql.workspace.results import (CSV_SUFFIX, METADATA_SUFFIX, CsvResultWriter, ResultMetadata,
                            new_result_id, refuse_existing_result,
                            resolve_workspace_path, safe_name_from_query, storage_error)
from nl2sql.workspace.saved_query_store import saved_query_index
from nl2sql._helpers import say, shorten

if TYPE_CHECKING:  # SQLAlchemy loads on the first query, not when the tools are listed
    from nl2sql.db.base import DbOperations

_RENDER_CELL_CHARS = 200


class QueryResult(ResultMetadata):
    """The metadata of a saved result plus the preview text shown to the model or person."""

    preview: str = ""
    #: For an empty result: a compared value its column does not hold (``unknown_values_hint``;
    #: also the preview's last line).
    hint: str | None = None

    def render(self) -> str:
        return self.preview


class RowResult(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    db_id: str
    table: str
    row_id: dict[str, Any]  # primary key column -> value
    found: bool
    row: dict[str, Any] | None = None
    # Outbound foreign keys, one level: key (the referenced table's name) -> row or None.
    related: dict[str, dict[str, Any] | None] = Field(default_factory=dict)
    # The same keys -> "order_id -> orders.order_id", to say how each row is related.
    related_via: dict[str, str] = Field(default_factory=dict)

    def render(self) -> str:
        key = ", ".join(f"{k}={v!r}" for k, v in self.row_id.items())
        if not self.found or self.row is None:
            return f"No row in {self.table} where {key}."
        lines = [f"{self.table} where {key}:", *_render_fields(self.row, "  ")]
        if self.related:
            lines.append("Related rows (outbound foreign keys):")
            for name, row in self.related.items():
                lines.append(f"  {name} ({self.related_via.get(name, '')}):")
                lines.extend(_render_fields(row, "    ") if row else ["    (no matching row)"])
        return "\n".join(lines)


def db_execute_sql_op(ctx: OpsContext, db_id: DbId, query: SqlQuery, output_file: OutputFile = None,
                      nl_query: NlQuery = None, overwrite: Overwrite = False, *,
                      name_from: str | None = None,
                      answer_id: str | None = None) -> QueryResult:
    """Validate ``query`` as read-only, run it, and save ``{name}.csv`` + metadata.

    Only adds files: an existing result is replaced only with ``overwrite``; a derived name
    (from ``name_from``, default the query) that is taken gets a numbered suffix; an explicit
    ``output_file`` that is taken is refused (checked before the query runs, and again when the
    files are published). ``answer_id``: the id written into the metadata (a new one when
    None)."""
    from nl2sql.sql_guard import validate_read_only

    if nl_query is not None:
        require_text(nl_query, "nl_query")
    say(f"Running the query on database '{db_id}'…")
    connection = ctx.connection(db_id)
    config = ctx.config(db_id)
    validated = validate_read_only(query, connection.sqlglot_dialect,
                                   allowed_functions=config.allowed_functions)
    stem = output_file.removesuffix(CSV_SUFFIX).removesuffix(METADATA_SUFFIX) \
        if output_file else safe_name_from_query(name_from or query)
    csv_path = resolve_workspace_path(ctx.workspace_root, stem + CSV_SUFFIX, resolved=True)
    if output_file and not overwrite:
        refuse_existing_result(csv_path)  # early: no query runs for a name that is taken
    operations = operations_for_query(ctx, db_id)
    what = f"the result {csv_path.name}"
    try:
        writer = CsvResultWriter(csv_path, max_bytes=config.max_result_bytes)
    except OSError as exc:
        raise storage_error(exc, ctx.workspace, what) from None
    try:
        stats = operations.execute_select_query(validated, writer, max_rows=config.max_rows,
                                                timeout_seconds=config.query_timeout_seconds)
        metadata = ResultMetadata(
            sql_query=query, row_count=stats.row_count, column_count=len(stats.columns),
            csv_filename=csv_path.relative_to(ctx.workspace_root).as_posix(),
            db_id=db_id, natural_language_query=nl_query, id=answer_id or new_result_id(),
            columns=stats.columns,
            elapsed_seconds=round(stats.elapsed_seconds, 4), truncated=stats.truncated,
            max_rows=config.max_rows, truncated_by=stats.truncated_by,
            max_result_bytes=config.max_result_bytes,
            column_types=writer.column_types(stats.column_types), time_zone=stats.time_zone)
        writer.publish(metadata, overwrite=overwrite, rename=not output_file)
    except OSError as exc:  # disk full, permissions...: one sentence, no temporary file left
        writer.discard()
        raise storage_error(exc, ctx.workspace, what) from None
    except BaseException as error:
        writer.discard()
        if isinstance(error, QueryExecutionError) and not isinstance(error, QueryTimeoutError):
            _add_hint(ctx, db_id, validated.expression, error)
        raise
    # Into the saved-query index now, so the next saved_queries_list need not list the folder.
    saved_query_index(ctx.workspace_root, ctx.store).record(writer.metadata_path,
                                                            writer.trace.marks)
    preview = format_preview(metadata, writer.preview)
    hint = _empty_result_hint(ctx, db_id, validated.expression) if not metadata.row_count \
        else ""
    return QueryResult(**metadata.model_dump(), preview=f"{preview}\n{hint}" if hint else preview,
                       hint=hint or None)


def _empty_result_hint(ctx: OpsContext, db_id: str, expression: Any) -> str:
    """A value an empty result's query compares a column with that the column does not hold,
    with the closest it does (``unknown_values_hint``)."""
    from nl2sql.operations.query_hints import unknown_values_hint  # as in _add_hint

    try:
        return unknown_values_hint(ctx.db_info(db_id), expression)
    except Nl2SqlError:  # no schema cache: nothing known to compare with
        return ""


def _add_hint(ctx: OpsContext, db_id: str, expression: Any, error: QueryExecutionError) -> None:
    """A table or column the refused query names and the schema lacks, with the closest it
    has, added to ``error`` (nothing without a schema cache: the refusal stands as written);
    for a syntax error, the names it writes unquoted that the engine takes for keywords."""
    # Here, not at the top: it imports sqlglot, which the MCP server's start-up leaves to the
    # first query (tests/test_mcp_stdio.py::test_start_up_imports_stay_light).
    from nl2sql.operations.query_hints import keyword_names_hint, refused_query_hint

    try:
        hint = refused_query_hint(ctx.db_info(db_id), expression, error.message)
    except Nl2SqlError:
        hint = ""
    if not hint and "syntax error" in error.message.lower():
        connection = ctx.connection(db_id)
        try:
            hint = keyword_names_hint(expression, error.message, connection.keywords(),
                                      connection.config.backend.label)
        except Exception:  # noqa: BLE001 - a hint never hides the refusal it explains
            hint = ""
    if hint:
        error.message = f"{error.message} {hint}"


def db_get_row_by_id_op(ctx: OpsContext, db_id: DbId, table: TableName, row_id: RowId,
                        follow_foreign_keys: FollowForeignKeys = True) -> RowResult:
    """The row of ``table`` with primary key ``row_id`` and, one level deep, its parents."""
    from nl2sql.db.lookup import primary_key_values, resolve_table

    operations = ctx.operations(db_id)
    info = resolve_table(operations.db_info, table)
    key = primary_key_values(info, row_id)
    row = operations.fetch_row_by_id(info.name, key)
    result = RowResult(db_id=db_id, table=info.name, row_id=key, found=row is not None,
                       row=_jsonable(row) if row is not None else None)
    if row is None or not follow_foreign_keys:
        return result
    for fk in info.foreign_keys:
        if operations.db_info.table(fk.referenced_table) is None:
            continue  # a table outside the cached schema: nothing validated to read
        name = fk.referenced_table
        if name in result.related:
            name = f"{fk.referenced_table} via {', '.join(fk.columns)}"
        values = [row.get(c) for c in fk.columns]
        implied = " (implied key, not declared)" if (fk.model_extra or {}).get("inferred") else ""
        result.related_via[name] = (f"{', '.join(fk.columns)} -> {fk.referenced_table}."
                                    f"{', '.join(fk.referenced_columns)}{implied}")
        related = None if any(v is None for v in values) else operations.fetch_related_row(
            fk.referenced_table, fk.referenced_columns, values)
        result.related[name] = _jsonable(related) if related is not None else None
    return result


def operations_for_query(ctx: OpsContext, db_id: str) -> DbOperations:
    """Running SQL needs no schema cache: without one, identifier lookups are simply empty."""
    return ctx.query_operations(db_id)


#: Bytes of a binary value a row by id shows (then its size).
_ROW_BINARY_BYTES = 32


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    """Row values JSON can carry: binary spelt as a result's CSV spells it (``\\x`` and hex),
    a long one cut after 32 bytes with its size; the rest unchanged."""
    out = {}
    for name, value in row.items():
        if isinstance(value, (bytes, bytearray, memoryview)):
            data = bytes(value)
            value = format_value(data[:_ROW_BINARY_BYTES])
            if len(data) > _ROW_BINARY_BYTES:
                value += f"… ({len(data):,} bytes)"
        out[name] = value
    return out


def _render_fields(row: dict[str, Any], indent: str) -> list[str]:
    """Each value as a result's CSV and preview write it (a number one way, a list or a JSON
    value as JSON), so a row reads the same here as in a query's result."""
    lines = []
    for name, value in row.items():
        text = format_value(value)
        if text is None:
            text = "NULL"
        elif isinstance(value, (float, Decimal)):
            text = plain_number(text)
        text = text.replace("\n", "\\n")
        lines.append(f"{indent}{name}: {shorten(text, _RENDER_CELL_CHARS)}")
    return lines
