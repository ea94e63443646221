"""A dbt cumulative metric grouped by a grain coarser than a day is dbt's value for each
period's first day (``period_agg: first``, its default), or its last day (``last``): checked
against the bookstore's orders added up in Python, for a running total, a trailing window and
a period to date.

What it found: every cumulative metric was the value at each period's end, whatever its
``period_agg``: a dbt project's ``cumulative_revenue`` by month was another number than the
team's Semantic Layer gives for it (dbt takes the month's first day by default)."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable

import pytest

from conftest import build_cache
from nl2sql.errors import MetricQueryError
from nl2sql.operations.metrics import metrics_query_op
from nl2sql.operations.ops_context import OpsContext

MODEL = """
semantic_models:
  - name: orders
    model: ref('orders')
    defaults: {agg_time_dimension: ordered_at}
    entities: [{name: order, type: primary, expr: order_id}]
    dimensions:
      - {name: ordered_at, type: time, type_params: {time_granularity: day}}
    measures:
      - {name: orders, agg: count, expr: order_id}
metrics:
  - {name: orders_to_date, type: cumulative, type_params: {measure: orders}}
  - name: orders_to_period_end
    type: cumulative
    type_params: {measure: orders, cumulative_type_params: {period_agg: last}}
  - {name: orders_two_months, type: cumulative,
     type_params: {measure: orders, cumulative_type_params: {window: 2 months}}}
  - {name: orders_month_to_date, type: cumulative,
     type_params: {measure: orders, cumulative_type_params: {grain_to_date: month}}}
  - {name: orders_average, type: cumulative,
     type_params: {measure: orders, cumulative_type_params: {period_agg: average}}}
"""


@pytest.fixture(scope="module")
def ops(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    folder = tmp_path_factory.mktemp("period_agg")
    ops = OpsContext.load(None, data_dir=folder / "data", workspace=folder / "ws")
    build_cache(ops.config("bookstore"), ops.data_dir)
    (folder / "model.yml").write_text(MODEL)
    ops.configs.databases["bookstore"] = ops.config("bookstore").model_copy(
        update={"semantic_model": folder / "model.yml"})
    yield ops
    ops.close()


@pytest.fixture(scope="module")
def days(ops: OpsContext) -> list[dt.date]:
    """Each order's day, read with sqlite3 (not through nl2sql)."""
    with sqlite3.connect(ops.config("bookstore").path) as conn:
        return [dt.date.fromisoformat(text[:10])
                for (text,) in conn.execute("SELECT ordered_at FROM orders")]


def _values(ops: OpsContext, metric: str, grain: str) -> dict[dt.date, int | None]:
    """Each period's value; None where no row adds up (a period to date whose first day
    comes before any of its period's orders)."""
    result = metrics_query_op(ops, "bookstore", metrics=[metric],
                              dimensions=[f"metric_time__{grain}"])
    lines = (ops.workspace / result.csv_filename).read_text().splitlines()[1:]
    return {dt.date.fromisoformat(day): int(float(count)) if count else None
            for day, count in (line.split(",") for line in lines)}


def _start(day: dt.date, grain: str) -> dt.date:
    if grain == "week":
        return day - dt.timedelta(days=day.weekday())
    if grain == "quarter":
        return day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
    return day.replace(day=1) if grain == "month" else day.replace(month=1, day=1) \
        if grain == "year" else day


def _end(start: dt.date, grain: str) -> dt.date:
    if grain == "week":
        return start + dt.timedelta(days=6)
    months = {"month": 1, "quarter": 3, "year": 12}[grain]
    month = start.month - 1 + months
    return dt.date(start.year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)


def _months_before(day: dt.date, months: int) -> dt.date:
    month = day.year * 12 + day.month - 1 - months
    return day.replace(year=month // 12, month=month % 12 + 1)


Counted = Callable[[dt.date], bool]


@pytest.mark.parametrize(("metric", "grain", "anchor", "since"), [
    ("orders_to_date", "month", "first", None),
    ("orders_to_date", "quarter", "first", None),
    ("orders_to_date", "day", "first", None),  # no period to pick a day in: the day's own
    ("orders_to_period_end", "month", "last", None),
    ("orders_to_period_end", "year", "last", None),
    ("orders_two_months", "month", "first", "window"),
    ("orders_month_to_date", "week", "first", "month"),
    ("orders_month_to_date", "month", "first", "month"),
])
def test_each_period_takes_the_day_dbt_takes(ops: OpsContext, days: list[dt.date], metric: str,
                                             grain: str, anchor: str, since: str | None) -> None:
    values = _values(ops, metric, grain)
    assert set(values) == {_start(day, grain) for day in days}  # the periods with orders
    for start, value in values.items():
        at = start if anchor == "first" or grain == "day" else _end(start, grain)
        lower: Counted = (lambda day: day > _months_before(at, 2)) if since == "window" else \
            (lambda day: day >= at.replace(day=1)) if since == "month" else (lambda day: True)
        counted = sum(1 for day in days if day <= at and lower(day))
        assert value == (counted or None), (start, value)
    if anchor == "first" and grain != "day":  # not what the period's end gives
        ends = {start: sum(1 for day in days if day <= _end(start, grain)) for start in values}
        assert values != ends


def test_an_average_over_a_period_is_named(ops: OpsContext) -> None:
    with pytest.raises(MetricQueryError, match="period_agg average is not compiled; group by "
                                               "metric_time__day"):
        metrics_query_op(ops, "bookstore", metrics=["orders_average"],
                         dimensions=["metric_time__month"])
    assert _values(ops, "orders_average", "day")  # by day there is nothing to average


def test_two_first_day_metrics_read_the_days_once(ops: OpsContext) -> None:
    result = metrics_query_op(ops, "bookstore", metrics=["orders_to_date", "orders_two_months"],
                              dimensions=["metric_time__quarter"])
    assert result.sql_query.count("days AS (") == 1 and "days_2" not in result.sql_query
    lines = (ops.workspace / result.csv_filename).read_text().splitlines()[1:]
    together = {line.split(",")[0]: line.split(",")[1:] for line in lines}
    for column, metric in enumerate(("orders_to_date", "orders_two_months")):
        alone = _values(ops, metric, "quarter")
        assert {dt.date.fromisoformat(k): int(v[column]) if v[column] else None
                for k, v in together.items()} == alone
