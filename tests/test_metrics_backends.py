"""Metric queries equal hand-written SQL on every backend, from a dbt model and from a Cube
model of the same Chinook tables: by a dimension through one and two joins, by year, by month,
a ratio under a filter, a running total. The metric query runs through ``metrics_query_op`` (the
guard, the engine's read-only layers, a result file); its rows and the hand-written query's are
compared with the evaluation's rules (``compare_results``). One database per backend serves
every case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from metrics_samples import chinook_model, gold_failures

from conftest import BACKENDS, SampleDb, build_cache, sample_fixture, spark_config, write_dbs_yaml
from nl2sql.config.registry import DbConnectionConfig, DbConnectionConfigs
from nl2sql.operations.ops_context import OpsContext

chinook = sample_fixture("chinook", BACKENDS)

#: (case, dbt query, Cube query (None: a dbt case), hand-written SQL in PostgreSQL's names;
#: {month}/{year} of the invoice date, {dow}/{quarter}/{year_number} its parts).
CASES: list[tuple[str, dict[str, Any], dict[str, Any] | None, str]] = [
    ("by a dimension through a join",
     {"metrics": ["revenue"], "dimensions": ["customer__country"]},
     {"metrics": ["invoices.revenue"], "dimensions": ["customers.country"]},
     "SELECT c.country, SUM(i.total) FROM invoice i JOIN customer c "
     "ON c.customer_id = i.customer_id GROUP BY c.country"),
    ("by a dimension two joins away",
     {"metrics": ["units_sold"], "dimensions": ["genre__name"]},
     {"metrics": ["invoice_lines.units"], "dimensions": ["genres.name"]},
     "SELECT g.name, SUM(l.quantity) FROM invoice_line l JOIN track t ON t.track_id = l.track_id "
     "LEFT JOIN genre g ON g.genre_id = t.genre_id GROUP BY g.name"),
    ("by year",
     {"metrics": ["revenue"], "dimensions": ["metric_time__year"]},
     {"metrics": ["invoices.revenue"], "dimensions": ["invoices.invoice_date.year"]},
     "SELECT {year} AS y, SUM(total) FROM invoice GROUP BY {year}"),
    ("two metrics by month",
     {"metrics": ["revenue", "invoice_count"], "dimensions": ["metric_time__month"]},
     {"metrics": ["invoices.revenue", "invoices.count"],
      "dimensions": ["invoices.invoice_date.month"]},
     "SELECT {month} AS m, SUM(total), COUNT(*) FROM invoice GROUP BY {month}"),
    ("a ratio with a filter, by year",
     {"metrics": ["average_invoice"], "dimensions": ["metric_time__year"],
      "where": ["{{ Dimension('invoice__billing_country') }} = 'USA'"]},
     {"metrics": ["invoices.average_invoice"], "dimensions": ["invoices.invoice_date.year"],
      "where": ["invoices.billing_country = 'USA'"]},
     "SELECT {year} AS y, SUM(total) * 1.0 / COUNT(*) FROM invoice "
     "WHERE billing_country = 'USA' GROUP BY {year}"),
    ("a running total by month",
     {"metrics": ["cumulative_revenue"], "dimensions": ["metric_time__month"]},
     {"metrics": ["invoices.cumulative_revenue"], "dimensions": ["invoices.invoice_date.month"]},
     "SELECT {month} AS m, SUM(SUM(total)) OVER (ORDER BY {month}) FROM invoice GROUP BY {month}"),
    ("by a date part: the ISO weekday",
     {"metrics": ["revenue"], "dimensions": ["metric_time__extract_dow"]}, None,
     "SELECT {dow} AS d, SUM(total) FROM invoice GROUP BY {dow}"),
    ("one year by quarter number, date parts through the invoice's date",
     {"metrics": ["units_sold"], "dimensions": ["invoice__invoice_date__extract_quarter"],
      "where": ["{{ TimeDimension('metric_time', date_part_name='year') }} = 2023"]}, None,
     "SELECT {quarter} AS q, SUM(l.quantity) FROM invoice_line l JOIN invoice i "
     "ON i.invoice_id = l.invoice_id WHERE {year_number} = 2023 GROUP BY {quarter}"),
    ("a metric filter: the revenue of customers whose revenue is over 40, by country",
     {"metrics": ["revenue"], "dimensions": ["customer__country"],
      "where": ["{{ Metric('revenue', group_by=['customer']) }} > 40"]}, None,
     "SELECT c.country, SUM(i.total) FROM invoice i JOIN customer c "
     "ON c.customer_id = i.customer_id WHERE i.customer_id IN (SELECT customer_id FROM invoice "
     "GROUP BY customer_id HAVING SUM(total) > 40) GROUP BY c.country"),
]


def check_cases(config: DbConnectionConfig, backend: str, naming: str, folder: Path) -> None:
    """Every case, from each format, equals its hand-written query on ``config``'s database."""
    build_cache(config, folder / "data")
    failures = []
    for kind in ("dbt", "cube"):
        model = chinook_model(folder / kind, kind, naming)
        entry = config.model_copy(update={"semantic_model": model})
        registry = DbConnectionConfigs.load(write_dbs_yaml(folder, [entry]),
                                            data_dir=folder / "data",
                                            workspace=folder / "workspace")
        ops = OpsContext(registry)
        try:
            failures += gold_failures(ops, config.db_id, kind, CASES, backend, naming)
        finally:
            ops.close()
    assert not failures, "\n\n".join(failures)


def test_metric_queries_equal_hand_written_sql(chinook: SampleDb, tmp_path: Path) -> None:
    check_cases(chinook.config, chinook.backend, chinook.naming, tmp_path)


@pytest.mark.spark
@pytest.mark.slow
def test_metric_queries_equal_hand_written_sql_on_spark(spark_server, spark_chinook,  # noqa: ANN001
                                                         tmp_path: Path) -> None:
    config = spark_config("chinook", spark_server.remote, spark_chinook, query_timeout_seconds=60)
    check_cases(config, "spark", "sqlite", tmp_path)
