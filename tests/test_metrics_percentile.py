"""dbt's ``percentile`` and ``median`` measures (the median invoice, the 90th percentile of
invoice totals, interpolated or a value of the rows): a project that had one got it named as a
problem, and the question went to hand-written SQL. They compile to each engine's exact
percentile aggregate and equal a hand-written query on PostgreSQL, DuckDB and Spark; on SQLite
and MySQL/MariaDB, which have none, the metric query says so in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from metrics_samples import gold_failures, ops_with_model

from conftest import BACKENDS, SampleDb, sample_fixture, spark_config
from nl2sql.config.registry import DbConnectionConfig
from nl2sql.errors import MetricQueryError
from nl2sql.operations.metrics import metrics_list_op, metrics_query_op
from nl2sql.operations.ops_context import OpsContext

chinook = sample_fixture("chinook", BACKENDS)

MODEL = """
semantic_models:
  - name: invoices
    model: ref('invoice')
    defaults: {agg_time_dimension: invoice_date}
    entities:
      - {name: invoice, type: primary, expr: invoice_id}
    dimensions:
      - {name: invoice_date, type: time, expr: invoice_date, type_params: {time_granularity: day}}
      - {name: billing_country, type: categorical, expr: billing_country}
    measures:
      - {name: median_total, agg: median, expr: total}
      - name: p90_total
        agg: percentile
        expr: total
        agg_params: {percentile: 0.9, use_approximate_percentile: false}
      - name: p90_total_of_the_rows
        agg: percentile
        expr: total
        agg_params: {percentile: 0.9, use_discrete_percentile: true}
      - {name: p_missing, agg: percentile, expr: total}
metrics:
  - {name: median_invoice, type: simple, type_params: {measure: median_total}}
  - {name: p90_invoice, type: simple, type_params: {measure: p90_total}}
  - {name: p90_invoice_of_the_rows, type: simple, type_params: {measure: p90_total_of_the_rows}}
  - {name: broken_percentile, type: simple, type_params: {measure: p_missing}}
"""

#: The same figures as each engine's users write them.
GOLD = {
    "postgres": ("percentile_cont(0.5) WITHIN GROUP (ORDER BY total)",
                 "percentile_cont(0.9) WITHIN GROUP (ORDER BY total)",
                 "percentile_disc(0.9) WITHIN GROUP (ORDER BY total)"),
    "duckdb": ("median(total)", "quantile_cont(total, 0.9)", "quantile_disc(total, 0.9)"),
    "spark": ("median(total)", "percentile(total, 0.9)",
              "percentile_disc(0.9) WITHIN GROUP (ORDER BY total)"),
}


def _cases(backend: str) -> list[tuple[str, dict[str, object], None, str]]:
    median, p90, p90_rows = GOLD[backend]
    return [
        ("the median invoice by country",
         {"metrics": ["median_invoice"], "dimensions": ["invoice__billing_country"]}, None,
         f"SELECT billing_country, {median} FROM invoice GROUP BY billing_country"),
        ("the 90th percentile, interpolated and of the rows, by year",
         {"metrics": ["p90_invoice", "p90_invoice_of_the_rows"],
          "dimensions": ["metric_time__year"]}, None,
         f"SELECT {{year}} AS y, {p90}, {p90_rows} FROM invoice GROUP BY {{year}}"),
        ("the median over a filter",
         {"metrics": ["median_invoice"],
          "where": ["{{ Dimension('invoice__billing_country') }} = 'USA'"]}, None,
         f"SELECT {median} FROM invoice WHERE billing_country = 'USA'"),
    ]


def check(config: DbConnectionConfig, backend: str, naming: str, folder: Path) -> None:
    ops = ops_with_model(config, folder, MODEL, naming)
    try:
        listed = metrics_list_op(ops, config.db_id)
        assert [m.name for m in listed.metrics] == [
            "median_invoice", "p90_invoice", "p90_invoice_of_the_rows"]
        assert any("measure 'p_missing' (percentile) needs agg_params" in problem
                   for problem in listed.problems), listed.problems
        if backend not in GOLD:
            with pytest.raises(MetricQueryError, match="this database has no percentile "
                                                       "aggregate"):
                metrics_query_op(ops, config.db_id, ["median_invoice"])
            return
        failures = gold_failures(ops, config.db_id, "dbt", _cases(backend), backend, naming)
        assert not failures, "\n\n".join(failures)
    finally:
        ops.close()


def test_percentile_measures_equal_hand_written_sql(chinook: SampleDb, tmp_path: Path) -> None:
    check(chinook.config, chinook.backend, chinook.naming, tmp_path)


@pytest.mark.spark
def test_percentile_measures_on_spark(spark_server, spark_chinook,  # noqa: ANN001
                                      tmp_path: Path) -> None:
    config = spark_config("chinook", spark_server.remote, spark_chinook, query_timeout_seconds=60)
    check(config, "spark", "sqlite", tmp_path)


def test_the_latest_spec_reads_a_metrics_own_percentile(bookstore_ops: OpsContext,
                                                        tmp_path: Path) -> None:
    """A latest-spec simple metric with ``agg: percentile`` under its model reads its
    ``agg_params`` the same way (the bookstore is SQLite: the query says it has none)."""
    (tmp_path / "_models.yml").write_text("""
models:
  - name: order_items
    semantic_model: {enabled: true}
    primary_entity: order_item
    columns:
      - {name: order_id, entity: {type: foreign, name: order}}
    metrics:
      - {name: p90_quantity, type: simple, agg: percentile, expr: quantity,
         agg_params: {percentile: 0.9}}
      - {name: p_nothing, type: simple, agg: percentile, expr: quantity,
         agg_params: {percentile: 90}}
""")
    config = bookstore_ops.config("bookstore").model_copy(update={"semantic_model": tmp_path})
    bookstore_ops.configs.databases["bookstore"] = config
    listed = metrics_list_op(bookstore_ops, "bookstore")
    assert [m.name for m in listed.metrics] == ["p90_quantity"]
    assert any("'p_nothing' (percentile) needs agg_params" in p for p in listed.problems)
    with pytest.raises(MetricQueryError, match="measure 'p90_quantity' \\(percentile\\): this "
                                               "database has no percentile aggregate"):
        metrics_query_op(bookstore_ops, "bookstore", ["p90_quantity"])
