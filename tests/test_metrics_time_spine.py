"""dbt's ``join_to_timespine``: "revenue per day" charted from a metric query skipped the days
without an invoice (most of Chinook's days), so a line chart drew straight across them and a
"days with no sales" question had no rows to count. A metric with ``join_to_timespine: true``
now lists every period from the first to the last (``fill_nulls_with: 0`` there), by day, week
and month, beside another group-by (a missing period gets one row, its other group-bys NULL, as
MetricFlow's spine gives it), and under a running total; the periods with rows keep their
values. A filter on the time spans its dates: "every day of December" lists the days after the
last invoice too. Checked against the plain metric's rows on every backend and Spark."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from metrics_samples import CHINOOK_MODELS, MODEL_FILES, as_numbers, ops_with_model

from conftest import BACKENDS, SampleDb, sample_fixture, spark_config
from nl2sql.config.registry import DbConnectionConfig
from nl2sql.evaluation.scoring import run_query
from nl2sql.operations.metrics import metrics_query_op

chinook = sample_fixture("chinook", BACKENDS)

FILLED = """
  - name: daily_revenue
    type: simple
    type_params: {measure: {name: revenue, fill_nulls_with: 0, join_to_timespine: true}}
  - name: filled_running_revenue
    type: cumulative
    type_params:
      measure: {name: revenue, fill_nulls_with: 0, join_to_timespine: true}
      cumulative_type_params: {period_agg: last}
"""


def _day(value: object) -> dt.date:
    return dt.date.fromisoformat(str(value)[:10])


def _rows(ops, query: dict) -> list[tuple]:  # noqa: ANN001
    result = metrics_query_op(ops, "chinook", **query)
    return as_numbers(run_query(ops, "chinook", result.sql_query, timeout=60,
                                max_rows=10_000).rows)


def _periods(first: dt.date, last: dt.date, grain: str) -> list[dt.date]:
    found, day = [], first
    while day <= last:
        found.append(day)
        day = day + dt.timedelta(7 if grain == "week" else 1) if grain != "month" else \
            dt.date(day.year + day.month // 12, day.month % 12 + 1, 1)
    return found


def check(config: DbConnectionConfig, naming: str, folder: Path,
          grains: tuple[str, ...] = ("day", "week", "month")) -> None:
    """Every period of each of ``grains`` (the first is "day"), by month beside a country (when
    month is one of them), and a running total by day."""
    model = (CHINOOK_MODELS / MODEL_FILES["dbt"]).read_text(encoding="utf-8") + FILLED
    ops = ops_with_model(config, folder, model, naming)
    try:
        for grain in grains:
            time = f"metric_time__{grain}"
            plain = {_day(t): v for t, v in _rows(ops, {"metrics": ["revenue"],
                                                         "dimensions": [time]})}
            filled = {_day(t): v for t, v in _rows(ops, {"metrics": ["daily_revenue"],
                                                          "dimensions": [time]})}
            every = _periods(min(plain), max(plain), grain)
            assert sorted(filled) == every, grain
            assert {t: v for t, v in filled.items() if t in plain} == plain
            assert all(filled[t] == 0 for t in every if t not in plain)
            if grain == "day":
                assert len(every) > 3 * len(plain)  # most days have no invoice
                running = [v for _, v in _rows(ops, {"metrics": ["filled_running_revenue"],
                                                     "dimensions": [time]})]
                assert len(running) == len(every) and running == sorted(running) and running[0] > 0
                # every day of December, up to the 31st: past the last invoice (the 22nd)
                december = {_day(t): v for t, v in _rows(ops, {
                    "metrics": ["daily_revenue"], "dimensions": [time],
                    "where": [f"{time} >= '2025-12-01'", f"{time} <= '2025-12-31'"]})}
                assert sorted(december) == _periods(dt.date(2025, 12, 1), dt.date(2025, 12, 31),
                                                    "day")
                assert december == {t: filled.get(t, 0) for t in december}
                assert max(plain) == dt.date(2025, 12, 22) and december[max(december)] == 0

        if "month" not in grains:  # a second engine's dialect: the spine's SQL is shared
            return
        by_country = _rows(ops, {"metrics": ["daily_revenue", "revenue"],
                                 "dimensions": ["metric_time__month", "customer__country"]})
        plain = [(_day(t), c, v) for t, c, _, v in by_country if v is not None]
        assert len(plain) == len(_rows(ops, {"metrics": ["revenue"], "dimensions": [
            "metric_time__month", "customer__country"]}))
        months = {_day(t) for t, _, _, _ in by_country}
        assert sorted(months) == _periods(min(months), max(months), "month")
        assert all(c is None and v == 0 for t, c, v, _ in by_country
                   if _day(t) not in {p[0] for p in plain})

    finally:
        ops.close()


def test_every_period_is_listed_with_its_fill(chinook: SampleDb, tmp_path: Path) -> None:
    check(chinook.config, chinook.naming, tmp_path)


@pytest.mark.spark
def test_every_period_is_listed_on_spark(spark_server, spark_chinook,  # noqa: ANN001
                                         tmp_path: Path) -> None:
    config = spark_config("chinook", spark_server.remote, spark_chinook, query_timeout_seconds=60)
    check(config, "sqlite", tmp_path, grains=("day", "week"))
