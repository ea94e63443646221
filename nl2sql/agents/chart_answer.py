"""``Answer.chart()``: an answer's result file as a chart, titled with its question, axis titles
from the annotated schema of its database (when the cache is there)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nl2sql.charts.chart import Chart, chart_csv
from nl2sql.charts.labels import schema_of
from nl2sql.context_engine.api import resolve_configs
from nl2sql.errors import Nl2SqlError
from nl2sql.operations.ops_context import OpsContext


def chart_answer(csv_path: str | Path, *, question: str, db_id: str, sql: str, row_count: int,
                 config: Any, title: str | None, **choices: Any) -> Chart:
    """The chart of one answer's result; ``choices``: ``chart_csv``'s kind, x, y, colour,
    width and height. ``config`` as for ``ask()``, to find the schema cache."""
    try:
        ops: OpsContext | None = OpsContext(resolve_configs(config))
    except Nl2SqlError:  # no usable dbs.yaml: axis titles are the column names
        ops = None
    db_info, dialect = schema_of(ops, db_id) if ops else (None, None)
    return chart_csv(Path(csv_path), title=title or question, sql=sql, db_info=db_info,
                     dialect=dialect, total_rows=row_count, **choices)
