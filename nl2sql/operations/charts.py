"""``csv_chart_op``: a result CSV in the workspace drawn as a chart (PNG), saved beside it.

The chart (``nl2sql.charts``) is chosen from the result's shape unless ``kind``, ``x`` or ``y``
say otherwise; its title is the saved question, its axis titles come from the annotated schema
of the result's database. The PNG is written to ``{name}.chart.png`` next to ``{name}.csv``
(replaced by the next chart of the same result: a name derived from the CSV's, never chosen by
the caller). ``nl2sql.charts`` (sqlglot, and matplotlib when drawing) is imported on the first
call, not when the MCP server starts.
"""

from __future__ import annotations


from pydantic import BaseModel, ConfigDict

from nl2sql.errors import ChartError
from nl2sql.operations.csv_files import require_result_of
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.params import ChartKindName, ColumnName, CsvFile
from nl2sql.workspace.results import (read_metadata_for_csv, resolve_workspace_path,
                                      result_lock, write_and_rename)

CHART_SUFFIX = ".chart.png"


class ChartFile(BaseModel):
    """A chart of a result file: the PNG, where it was saved, and what it shows."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    csv_file: str
    chart_file: str
    description: str
    png: bytes

    def render(self) -> str:
        return f"{self.description} Saved as {self.chart_file}."


def csv_chart_op(ctx: OpsContext, csv_file: CsvFile, kind: ChartKindName = None,
                 x: ColumnName = None, y: ColumnName = None, *,
                 db_id: str | None = None) -> ChartFile:
    """Chart the result ``csv_file`` and save the PNG beside it (with ``db_id``: only a result
    of that database)."""
    from nl2sql.charts import chart_csv
    from nl2sql.charts.labels import schema_of

    path = resolve_workspace_path(ctx.workspace_root, csv_file, must_exist=True, resolved=True)
    with result_lock(path.parent, shared=True):  # the CSV and its metadata from one run
        require_result_of(db_id, path, ctx.workspace)
        metadata = read_metadata_for_csv(path, ctx.workspace)
        db_info, dialect = schema_of(ctx, metadata.db_id if metadata else None)
        chart = chart_csv(path, kind=kind, x=x, y=y,
                          title=metadata.natural_language_query if metadata else None,
                          sql=metadata.sql_query if metadata else None, db_info=db_info,
                          dialect=dialect, total_rows=metadata.row_count if metadata else None)
    if chart.kind is None:
        raise ChartError(f"No chart for {csv_file}: {chart.reason}")
    png = chart.png()
    target = path.with_name(path.name.removesuffix(".csv") + CHART_SUFFIX)
    write_and_rename(target, png)
    return ChartFile(csv_file=csv_file, chart_file=target.relative_to(ctx.workspace_root)
                     .as_posix(), description=chart.describe(), png=png)

