"""Metric operations: the governed metrics of a database (``metrics_list``) and a metric query
compiled from its semantic model and run (``metrics_query``).

The compiled SQL goes through ``db_execute_sql_op``, the same read-only path as any query (the
guard in the backend's dialect, the engine's read-only layers, the row and time bounds, the
result CSV and its metadata): compiling chooses the SQL, never how it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from nl2sql.context_engine.prompt_context import SavedMetricQuery
from nl2sql.errors import SchemaCacheMissingError
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.params import (DbId, GroupByNames, MetricFilters, MetricNames,
                                      MetricOrder, RowLimit)
from nl2sql.operations.queries import QueryResult, db_execute_sql_op
from nl2sql.schema.models import DbInfo

if TYPE_CHECKING:
    from nl2sql.semantic.compiler import CompiledQuery


class MetricSummary(BaseModel):
    """One metric as ``metrics_list`` shows it: the contract's ``{name, label, description,
    dimensions}``."""

    model_config = ConfigDict(defer_build=True)

    name: str
    label: str
    description: str
    dimensions: list[str]


class MetricsList(BaseModel):
    model_config = ConfigDict(defer_build=True)

    db_id: str
    metrics: list[MetricSummary] = Field(default_factory=list)
    #: The team's saved metric queries (dbt ``saved_queries:``), ready to run.
    saved_metric_queries: list[SavedMetricQuery] = Field(default_factory=list)
    #: What in the semantic model cannot be used (one line each: file, entry, reason).
    problems: list[str] = Field(default_factory=list)
    has_semantic_model: bool = False
    #: Custom granularities, grains beside day ... year: the dbt time spine's (of any time
    #: dimension: ``metric_time__fiscal_quarter``) and Cube time dimensions' own
    #: (``orders.created_at.fiscal_year``).
    custom_grains: list[str] = Field(default_factory=list)

    def render(self) -> str:
        if not self.has_semantic_model:
            return (f"Database {self.db_id} has no semantic model ('semantic_model:' in "
                    f"dbs.yaml): no governed metrics; write SQL.")
        custom = f"; custom: {', '.join(self.custom_grains)}" if self.custom_grains else ""
        lines = [f"{len(self.metrics)} metric(s) of {self.db_id} (query them with "
                 f"metrics_query; a time dimension takes a grain: __day ... __year for dbt, "
                 f".day ... .year for Cube{custom}):"]
        for metric in self.metrics:
            about = f": {metric.description.strip()}" if metric.description.strip() else ""
            label = f" ({metric.label})" if metric.label and metric.label != metric.name else ""
            lines.append(f"- {metric.name}{label}{about}")
            lines.append(f"  group by: {', '.join(metric.dimensions) or '(nothing)'}")
        if self.saved_metric_queries:
            lines.append(f"{len(self.saved_metric_queries)} saved metric query(ies) (run one with "
                         f"these arguments, changing only what the question asks):")
            lines += [f"- {query.render()}" for query in self.saved_metric_queries]
        if self.problems:
            lines.append("Not usable (fix the semantic model):")
            lines += [f"- {line}" for line in self.problems]
        return "\n".join(lines)


class MetricQueryResult(QueryResult):
    """A metric query's saved result, with the metrics it answers; the compiled SQL is its
    ``sql_query``."""

    metrics: list[str] = Field(default_factory=list)

    def render(self) -> str:
        return (f"Metric query on {', '.join(self.metrics)}, compiled from the semantic model:\n"
                f"```sql\n{self.sql_query}\n```\n{self.preview}")


def metrics_list_op(ctx: OpsContext, db_id: DbId) -> MetricsList:
    """Every usable metric of ``db_id`` with the group-bys it takes."""
    from nl2sql.semantic import describe, semantic_model

    model = semantic_model(ctx.config(db_id))
    if model is None:
        return MetricsList(db_id=db_id)
    return MetricsList(
        db_id=db_id, has_semantic_model=True, problems=[p.line() for p in model.problems],
        metrics=[MetricSummary(**info.as_dict()) for info in describe(model)],
        saved_metric_queries=[SavedMetricQuery.of(query)
                              for query in model.saved_metric_queries.values()],
        custom_grains=sorted({grain for spine in model.time_spines for grain in spine.grains} |
                             {own for table in model.tables.values()
                              for dimension in table.dimensions.values()
                              for own, _, _ in dimension.granularities}))


def metrics_query_op(ctx: OpsContext, db_id: DbId, metrics: MetricNames,
                     dimensions: GroupByNames = None, where: MetricFilters = None,
                     order_by: MetricOrder = None, limit: RowLimit = None, *,
                     output_file: str | None = None, nl_query: str | None = None,
                     overwrite: bool = False,
                     answer_id: str | None = None) -> MetricQueryResult:
    """Compile the metric query and run it like ``db_execute_sql`` (a result file and its
    metadata; the compiled SQL is the metadata's ``sql_query``). The keyword-only arguments
    are ``db_execute_sql_op``'s (the agent's answer and Python callers set them)."""
    compiled = compile_metric_query(ctx, db_id, metrics, dimensions, where, order_by, limit)
    result = db_execute_sql_op(ctx, db_id, compiled.sql, output_file, nl_query, overwrite,
                               name_from=nl_query or "_".join([*compiled.metrics,
                                                               *(dimensions or ())]),
                               answer_id=answer_id)
    return MetricQueryResult(**result.model_dump(), metrics=list(compiled.metrics))


def compile_metric_query(ctx: OpsContext, db_id: str, metrics: list[str],
                         dimensions: list[str] | None = None, where: list[str] | None = None,
                         order_by: list[str] | None = None,
                         limit: int | None = None) -> CompiledQuery:
    """The SQL of a metric query (``metrics_query``'s arguments), not run; a
    ``MetricQueryError`` says what in the query the semantic model does not have."""
    from nl2sql.semantic import MetricQuery, compile_for

    query = MetricQuery(tuple(metrics), tuple(dimensions or ()), tuple(where or ()),
                        tuple(order_by or ()), limit)
    return compile_for(ctx.config(db_id), query, catalog=schema_cache(ctx, db_id))


def schema_cache(ctx: OpsContext, db_id: str) -> DbInfo | None:
    """The schema cache, when there is one: it spells the semantic model's names as the
    database does (and catches a name it lacks before the query runs)."""
    try:
        return ctx.db_info(db_id)
    except SchemaCacheMissingError:
        return None
