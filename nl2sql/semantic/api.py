"""``compile_for``: a metric query compiled for one configured database (its backend's dialect
and time SQL, its schema cache's spelling of names)."""

from __future__ import annotations

from nl2sql.config.registry import DbConnectionConfig
from nl2sql.errors import MetricQueryError
from nl2sql.schema.models import DbInfo
from nl2sql.semantic.compiler import CompiledQuery, MetricQuery, compile_query
from nl2sql.semantic.loading import semantic_model
from nl2sql.semantic.sources import Sources


def compile_for(config: DbConnectionConfig, query: MetricQuery,
                catalog: DbInfo | None = None) -> CompiledQuery:
    """``query`` compiled to the SQL of ``config``'s backend; ``catalog`` (the schema cache)
    spells table and column names as the database does."""
    model = semantic_model(config)
    if model is None:
        raise MetricQueryError(f"Database '{config.db_id}' has no metrics: it has no "
                               f"'semantic_model:' in dbs.yaml; write SQL instead.",
                               db_id=config.db_id)
    backend = config.backend
    dialect = backend.sqlglot_dialect
    sources = Sources(model, dialect, catalog, folds_case=backend.folds_unquoted_case)
    try:
        return compile_query(model, query, dialect=dialect,
                             metric_sql=backend.load("metric_sql")(dialect), sources=sources)
    except MetricQueryError as error:
        error.db_id = config.db_id
        raise
