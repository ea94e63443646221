"""dbt's slowly changing dimensions: a table keeping versions of its rows (a natural entity,
dimensions with ``validity_params: {is_start: true}`` / ``{is_end: true}``): "revenue by sales
tier" joined each sale to every version of its seller's tier, counting it once per version;
it is now joined to the version valid on the sale's date, as MetricFlow does. Equal to a
hand-written query on every backend, and the tiers add up to the total."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from metrics_samples import as_numbers, differs_from_gold, ops_with_model

from conftest import BACKENDS
from nl2sql.evaluation.scoring import run_query
from nl2sql.operations.metrics import metrics_list_op, metrics_query_op

SCRIPT = """
CREATE TABLE sales_person_tiers (sales_person_id INTEGER NOT NULL, tier VARCHAR(10) NOT NULL,
                                 start_date DATE NOT NULL, end_date DATE);
INSERT INTO sales_person_tiers VALUES (1, 'junior', '2023-01-01', '2024-01-01'),
    (1, 'senior', '2024-01-01', NULL), (2, 'junior', '2023-01-01', NULL),
    (3, 'junior', '2023-01-01', '2023-07-01'), (3, 'senior', '2023-07-01', '2024-03-01'),
    (3, 'lead', '2024-03-01', NULL);
CREATE TABLE sales (sale_id INTEGER PRIMARY KEY, sales_person_id INTEGER NOT NULL,
                    sale_date DATE NOT NULL, amount INTEGER NOT NULL);
INSERT INTO sales VALUES (1, 1, '2023-05-01', 100), (2, 1, '2024-02-01', 200),
    (3, 2, '2023-03-01', 10), (4, 2, '2024-06-01', 20), (5, 3, '2023-02-01', 1000),
    (6, 3, '2023-08-01', 2000), (7, 3, '2024-03-01', 3000), (8, 3, '2024-12-31', 4000);
"""

MODEL = """
semantic_models:
  - name: sales
    model: ref('sales')
    defaults: {agg_time_dimension: sale_date}
    entities:
      - {name: sale, type: primary, expr: sale_id}
      - {name: sales_person, type: foreign, expr: sales_person_id}
    dimensions:
      - {name: sale_date, type: time, type_params: {time_granularity: day}}
    measures:
      - {name: revenue, agg: sum, expr: amount}
  - name: tiers
    model: ref('sales_person_tiers')
    entities:
      - {name: sales_person, type: natural, expr: sales_person_id}
    dimensions:
      - name: tier_start
        type: time
        expr: start_date
        type_params: {time_granularity: day, validity_params: {is_start: true}}
      - name: tier_end
        type: time
        expr: end_date
        type_params: {time_granularity: day, validity_params: {is_end: true}}
      - {name: tier, type: categorical}
metrics:
  - {name: revenue, type: simple, type_params: {measure: revenue}}
"""

GOLD = ("SELECT t.tier, SUM(s.amount) FROM sales s LEFT JOIN sales_person_tiers t ON "
        "t.sales_person_id = s.sales_person_id AND t.start_date <= s.sale_date AND "
        "(t.end_date > s.sale_date OR t.end_date IS NULL) GROUP BY t.tier")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sale_meets_the_version_of_its_sellers_tier_valid_that_day(
        backend: str, make_db: Callable[..., object], tmp_path: Path) -> None:
    config = make_db(backend, "crm", script=SCRIPT).config  # type: ignore[attr-defined]
    ops = ops_with_model(config, tmp_path, MODEL)
    try:
        assert metrics_list_op(ops, "crm").problems == []
        query = {"metrics": ["revenue"], "dimensions": ["sales_person__tier"]}
        assert differs_from_gold(ops, "crm", query, GOLD) is None
        result = metrics_query_op(ops, "crm", **query)
        ours = as_numbers(run_query(ops, "crm", result.sql_query, timeout=60, max_rows=100).rows)
        assert sorted(ours) == [("junior", 1130), ("lead", 7000), ("senior", 2200)]
    finally:
        ops.close()
