"""``annotate-schema``'s check of a database's governed metrics: each metric is compiled and run
for zero rows (``SELECT * FROM (<compiled>) LIMIT 0``: the database binds every table, column
and function, and reads nothing), through the same read-only path as any query. A metric that
fails is one line (file, metric, reason) and the others are checked on; a metric that reads a
table schema drift changed is named too, with what changed, whether it still runs or not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from nl2sql.annotation.drift import SchemaDrift
from nl2sql.config.registry import DbConnectionConfig
from nl2sql.db.base import DbOperations
from nl2sql.errors import Nl2SqlError, QueryTimeoutError
from nl2sql.semantic import (Metric, MetricQuery, SemanticModel, compile_for, measures_of,
                             semantic_model)
from nl2sql.semantic.model import GRAINS, DbtSavedQuery
from nl2sql.semantic.sources import Sources
from nl2sql.schema.models import DbInfo
from nl2sql.verified.questions import tables_read


@dataclass
class MetricsCheck:
    """What the check found: how many metrics run, one line per problem or drifted metric."""

    checked: int = 0
    running: int = 0
    lines: list[str] = field(default_factory=list)
    broken_dimensions: int = 0  # group-bys (and tables) that do not run
    saved_checked: int = 0  # dbt's saved queries, read or not
    saved_running: int = 0

    def summary(self) -> str:
        broken = self.checked - self.running
        return (f"metrics: {self.running} of {self.checked} compile and run"
                + (f"; {broken} broken (named below, the others stay usable)" if broken else "")
                + (f"; {self.broken_dimensions} group-by(s) broken (named below)"
                   if self.broken_dimensions else "")
                + (f"; saved queries: {self.saved_running} of {self.saved_checked} run"
                   if self.saved_checked else ""))


def check_metrics(config: DbConnectionConfig, operations: DbOperations, info: DbInfo,
                  drift: SchemaDrift | None = None) -> MetricsCheck | None:
    """Compile and run every metric of ``config``'s semantic model (None without one)."""
    try:
        model = semantic_model(config)
    except Nl2SqlError as exc:
        return MetricsCheck(lines=[str(exc)])
    if model is None:
        return None
    result = MetricsCheck(lines=[problem.line() for problem in model.problems])
    result.checked = len(model.metrics) + sum(1 for p in model.problems if p.kind == "metric")
    touched = drift.touched() if drift is not None else {}
    dialect = config.backend.sqlglot_dialect
    for metric in model.metrics.values():
        where = f"{metric.file}: metric '{metric.name}'"
        # what the metric reads: its measures' tables until it compiles, then its SQL's
        reads = [model.tables[table].relation or "" for table, _ in measures_of(model, metric)]
        changed = [touched[t.casefold()] for t in reads if t.casefold() in touched]
        try:
            compiled = compile_for(config, check_query(model, metric), info)
            changed = [touched[t.casefold()] for t in tables_read(compiled.sql, dialect, info)
                       if t.casefold() in touched]
            operations.count_rows(zero_rows(compiled.sql, dialect), limit=1)
        except QueryTimeoutError:
            result.running += 1  # slow today says nothing about the definition
            continue
        except Nl2SqlError as exc:
            drifted = f" (schema drift: {'; '.join(changed)})" if changed else ""
            result.lines.append(f"{where}: {exc}{drifted}")
            continue
        result.running += 1
        if changed:
            result.lines.append(f"{where} reads tables that changed ({'; '.join(changed)}); "
                                f"it still runs: check that it still means the same.")
    broken = check_dimensions(config, operations, info, model)
    result.broken_dimensions = len(broken)
    result.lines += broken
    result.saved_checked = len(model.saved_metric_queries) + sum(
        1 for p in model.problems if p.kind == "saved query")
    for saved in model.saved_metric_queries.values():
        try:
            compiled = compile_for(config, saved_query(saved), info)
            operations.count_rows(zero_rows(compiled.sql, dialect), limit=1)
        except QueryTimeoutError:
            pass  # slow today says nothing about the definition
        except Nl2SqlError as exc:
            result.lines.append(f"{saved.file}: saved query '{saved.name}': {exc}")
            continue
        result.saved_running += 1
    return result


def saved_query(saved: DbtSavedQuery) -> MetricQuery:
    """The metric query a saved query stands for."""
    return MetricQuery(saved.metrics, saved.group_by, saved.where, saved.order_by, saved.limit)


def check_dimensions(config: DbConnectionConfig, operations: DbOperations, info: DbInfo,
                     model: SemanticModel) -> list[str]:
    """One line per table or dimension of ``model`` that does not run: the metrics are checked
    without group-bys, so a dimension's SQL (or a table that only lends dimensions) would
    otherwise fail first when someone groups by it. Each runs as ``SELECT <dimension> FROM
    <table>`` for zero rows."""
    dialect = config.backend.sqlglot_dialect
    sources = Sources(model, dialect, info, folds_case=config.backend.folds_unquoted_case)
    lines = []
    for table in model.tables.values():
        kind = "cube" if table.naming == "cube" else "semantic model"
        where = f"{table.file}: {kind} '{table.name}'"
        try:
            relation = sources.relation(table, "checked_table")
        except Nl2SqlError as exc:  # names the semantic model (or cube) itself
            lines.append(f"{table.file}: {exc}")
            continue
        for dimension in table.dimensions.values():
            what = f"dimension '{dimension.name}'"
            try:
                value = sources.table_expr(table, dimension.expr, "checked_table", what)
                select = exp.select(value).from_(relation.copy()).limit(0)
                operations.count_rows(select.sql(dialect=dialect), limit=1)
            except QueryTimeoutError:
                continue
            except Nl2SqlError as exc:
                reason = str(exc)  # a column the schema cache lacks is named with ``what``
                reason = reason if reason.startswith(what) else f"{what}: {reason}"
                lines.append(f"{where}: {reason}")
    return lines


def check_query(model: SemanticModel, metric: Metric) -> MetricQuery:
    """The query a metric is checked with: no group-by, or its time at the finest grain when
    it needs periods (an offset input, a cumulative window): ``metric_time__day``, or for a
    Cube measure its cube's first time dimension."""
    needs_time = metric.window is not None or any(
        item.offset is not None or item.offset_to_grain is not None
        for item in metric.input_metrics())
    if not needs_time:
        return MetricQuery((metric.name,))
    if metric.naming == "cube" and metric.measure is not None:
        cube = model.tables[metric.measure[0]]
        times = [name for name, dim in cube.dimensions.items() if dim.is_time]
        return MetricQuery((metric.name,), (f"{cube.name}.{times[0]}.{GRAINS[0]}",)
                           if times else ())
    return MetricQuery((metric.name,), (f"metric_time__{GRAINS[0]}",))


def zero_rows(sql: str, dialect: str) -> str:
    """``sql`` wrapped to bind everything and return no row."""
    query = sqlglot.parse_one(sql, read=dialect)
    return exp.select(exp.Star()).from_(query.subquery("checked")).limit(0).sql(dialect=dialect)


def drifted_metrics(config: DbConnectionConfig, drift: SchemaDrift, info: DbInfo) -> list[str]:
    """For ``annotate-schema --check``: the metrics that read a table drift changed."""
    touched = drift.touched()
    model = semantic_model(config) if touched else None
    if model is None:
        return []
    lines = []
    for metric in model.metrics.values():
        try:
            sql = compile_for(config, check_query(model, metric), info).sql
        except Nl2SqlError as exc:
            lines.append(f"  metric {metric.name}: {exc}")
            continue
        changed = [touched[t.casefold()] for t in tables_read(sql, config.backend.sqlglot_dialect,
                                                             info) if t.casefold() in touched]
        if changed:
            lines.append(f"  metric {metric.name} reads {'; '.join(changed)}")
    return lines
