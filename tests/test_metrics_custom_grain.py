"""dbt's custom granularities (dbt 1.9): a time spine model whose other columns label each day,
a fiscal quarter starting in February say, grouped by as ``metric_time__fiscal_quarter`` (or
through a dimension, ``order__ordered_on__fiscal_quarter``) and filtered on. "Revenue by fiscal
quarter" was an unknown group-by; each day's rows now take the spine's label for that day, on
every backend, equal to the fiscal quarters counted in Python."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from metrics_samples import as_numbers, ops_with_model

from conftest import BACKENDS, spark_db
from nl2sql.config.registry import DbConnectionConfig
from nl2sql.errors import MetricQueryError
from nl2sql.evaluation.scoring import run_query
from nl2sql.operations.metrics import metrics_list_op, metrics_query_op

#: (order_id, day, amount)
ORDERS = [(1, "2024-01-15", 10), (2, "2024-01-31", 20), (3, "2024-02-01", 30),
          (4, "2024-03-10", 40), (5, "2024-04-30", 50), (6, "2024-05-01", 60),
          (7, "2024-06-15", 70), (8, "2024-07-31", 80)]


def fiscal_quarter(day: dt.date) -> str:
    """The fiscal year starts on 1 February: FY25-Q1 is February to April 2024."""
    months = (day.month - 2) % 12
    return f"FY{(day.year + (day.month >= 2)) % 100:02d}-Q{months // 3 + 1}"


SPINE_DAYS = [dt.date(2024, 1, 1) + dt.timedelta(n) for n in range(240)]
SCRIPT = "\n".join([
    "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, ordered_on DATE, amount INTEGER);",
    "INSERT INTO orders VALUES " + ", ".join(f"({i}, '{d}', {a})" for i, d, a in ORDERS) + ";",
    "CREATE TABLE time_spine_daily (date_day DATE PRIMARY KEY, fiscal_qtr VARCHAR(8));",
    "INSERT INTO time_spine_daily VALUES " + ", ".join(
        f"('{d}', '{fiscal_quarter(d)}')" for d in SPINE_DAYS) + ";",
])

MODEL = """
semantic_models:
  - name: orders
    model: ref('orders')
    defaults: {agg_time_dimension: ordered_on}
    entities:
      - {name: order, type: primary, expr: order_id}
    dimensions:
      - {name: ordered_on, type: time, type_params: {time_granularity: day}}
    measures:
      - {name: revenue, agg: sum, expr: amount}
metrics:
  - {name: revenue, type: simple, type_params: {measure: revenue}}
  - name: running_revenue
    type: cumulative
    type_params: {measure: revenue}
models:
  - name: time_spine_daily
    time_spine:
      standard_granularity_column: date_day
      custom_granularities:
        - {name: fiscal_quarter, column_name: fiscal_qtr}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_revenue_by_fiscal_quarter_from_the_time_spine(
        backend: str, make_db: Callable[..., object], tmp_path: Path) -> None:
    check_time_spine(make_db(backend, "shop", script=SCRIPT).config,  # type: ignore[attr-defined]
                     tmp_path)


@pytest.mark.spark
def test_custom_granularities_on_spark(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    script = re.sub(r"'(\d{4}-\d\d-\d\d)'", r"DATE '\1'", SCRIPT.replace(" PRIMARY KEY", ""))
    config = spark_db(request, "shop", script=script).config
    check_time_spine(config, tmp_path / "dbt")
    check_cube(config, tmp_path / "cube")


def check_time_spine(config: DbConnectionConfig, folder: Path) -> None:
    ops = ops_with_model(config, folder, MODEL)
    expected = Counter()
    for _, day, amount in ORDERS:
        expected[fiscal_quarter(dt.date.fromisoformat(day))] += amount
    assert sorted(expected) == ["FY24-Q4", "FY25-Q1", "FY25-Q2"]

    def rows(**query: object) -> dict:
        result = metrics_query_op(ops, "shop", **query)  # type: ignore[arg-type]
        found = run_query(ops, "shop", result.sql_query, timeout=60, max_rows=100).rows
        return {row[0]: row[1] for row in as_numbers(found)}

    try:
        listed = metrics_list_op(ops, "shop")
        assert listed.problems == [] and listed.custom_grains == ["fiscal_quarter"]
        assert "a time dimension takes a grain: __day ... __year for dbt, .day ... .year for " \
            "Cube; custom: fiscal_quarter)" in listed.render()
        for name in ("metric_time__fiscal_quarter", "order__ordered_on__fiscal_quarter"):
            assert rows(metrics=["revenue"], dimensions=[name]) == dict(expected), name
        assert rows(metrics=["revenue"], dimensions=["metric_time__fiscal_quarter"],
                    where=["metric_time__fiscal_quarter = 'FY25-Q1'"]) == {"FY25-Q1": 120}
        assert rows(metrics=["revenue"], dimensions=["metric_time__fiscal_quarter"], where=[
            "{{ TimeDimension('metric_time', 'fiscal_quarter') }} = 'FY25-Q2'"]) == {
            "FY25-Q2": 210}
        with pytest.raises(MetricQueryError, match="runs over periods: group by a grain"):
            metrics_query_op(ops, "shop", ["running_revenue"], ["metric_time__fiscal_quarter"])
    finally:
        ops.close()


CUBES = """
cubes:
  - name: orders
    sql_table: orders
    dimensions:
      - {name: order_id, sql: order_id, type: number, primary_key: true}
      - name: ordered_on
        sql: ordered_on
        type: time
        granularities:
          - {name: fiscal_quarter, interval: 1 quarter, offset: 1 month}
          - {name: sunday_week, interval: 1 week, offset: -1 day}
      - name: odd_day
        sql: ordered_on
        type: time
        granularities:
          - {name: fortnight, interval: 2 weeks, origin: '2024-01-01'}
    measures:
      - {name: revenue, sql: amount, type: sum}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_cube_custom_granularities_start_periods_at_their_offset(
        backend: str, make_db: Callable[..., object], tmp_path: Path) -> None:
    """Cube's ``granularities`` on a time dimension (a fiscal quarter from 1 February, weeks
    from Sunday): each period's first day, as Cube groups them; the 31st of a month less a month
    does not spill into the next quarter."""
    check_cube(make_db(backend, "shop", script=SCRIPT).config,  # type: ignore[attr-defined]
               tmp_path)


def check_cube(config: DbConnectionConfig, folder: Path) -> None:
    ops = ops_with_model(config, folder, CUBES)

    def rows(grain: str) -> dict[str, float]:
        result = metrics_query_op(ops, "shop", ["orders.revenue"], [f"orders.ordered_on.{grain}"])
        found = run_query(ops, "shop", result.sql_query, timeout=60, max_rows=100).rows
        return {str(row[0])[:10]: row[1] for row in as_numbers(found)}

    def quarter_start(day: dt.date) -> str:  # fiscal quarters from 1 February
        months = (day.year * 12 + day.month - 2) // 3 * 3 + 1
        return str(dt.date(months // 12, months % 12 + 1, 1))

    try:
        listed = metrics_list_op(ops, "shop")
        assert listed.custom_grains == ["fiscal_quarter", "sunday_week"]
        problems = listed.problems
        assert len(problems) == 1 and "dimension 'odd_day': granularity 'fortnight': interval " \
            "'2 weeks' is not one day/week/month/quarter/year" in problems[0]
        quarters, weeks = Counter(), Counter()
        for _, day, amount in ORDERS:
            date = dt.date.fromisoformat(day)
            quarters[quarter_start(date)] += amount
            weeks[str(date - dt.timedelta((date.weekday() + 1) % 7))] += amount
        assert rows("fiscal_quarter") == dict(quarters)
        assert sorted(quarters) == ["2023-11-01", "2024-02-01", "2024-05-01"]
        assert rows("sunday_week") == dict(weeks)
    finally:
        ops.close()
