"""dbt conversion metrics ("what share of visits led to a purchase within 7 days"): the base
events an entity followed by a conversion event within the window, each conversion counted
once, for the latest base event before it (MetricFlow's matching). They were a named problem
("not compiled"); now each backend answers them, equal to the same rule applied in Python to
the rows, by group-bys of the base events (its own dimensions, a joined table's, the month).
"""

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
from nl2sql.evaluation.scoring import run_query
from nl2sql.operations.metrics import metrics_list_op, metrics_query_op

USERS = [(1, "US"), (2, "US"), (3, "FR"), (4, "FR"), (5, "DE")]
#: (visit_id, user_id, day, referrer, product)
VISITS = [(1, 1, "2024-01-01", "search", "book"), (2, 1, "2024-01-05", "ads", "book"),
          (3, 2, "2024-01-03", "search", "pen"), (4, 2, "2024-01-03", "search", "pen"),
          (5, 3, "2024-01-10", "ads", "book"), (6, 3, "2024-02-20", "search", "pen"),
          (7, 4, "2024-01-30", "ads", "book"), (8, 5, "2024-02-01", "search", "book"),
          (9, 5, "2024-02-02", "ads", "pen"), (10, 1, "2024-02-10", "search", "pen")]
#: (buy_id, user_id, day, product, amount)
BUYS = [(1, 1, "2024-01-06", "book", 10), (2, 1, "2024-01-07", "pen", 3),
        (3, 2, "2024-01-03", "pen", 3), (4, 3, "2024-01-25", "book", 12),
        (5, 4, "2024-02-05", "book", 11), (6, 5, "2024-02-02", "book", 9),
        (7, 5, "2024-02-20", "pen", 2), (8, 2, "2023-12-30", "pen", 4),
        (9, 1, "2024-02-17", "pen", 3)]

SCRIPT = "\n".join([
    "CREATE TABLE users (user_id INTEGER PRIMARY KEY, country VARCHAR(2) NOT NULL);",
    "CREATE TABLE visits (visit_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, "
    "visit_date DATE NOT NULL, referrer VARCHAR(10) NOT NULL, product VARCHAR(10) NOT NULL);",
    "CREATE TABLE buys (buy_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, "
    "buy_date DATE NOT NULL, product VARCHAR(10) NOT NULL, amount INTEGER NOT NULL);",
    "INSERT INTO users VALUES " + ", ".join(f"({u}, '{c}')" for u, c in USERS) + ";",
    "INSERT INTO visits VALUES " + ", ".join(
        f"({v}, {u}, '{d}', '{r}', '{p}')" for v, u, d, r, p in VISITS) + ";",
    "INSERT INTO buys VALUES " + ", ".join(
        f"({b}, {u}, '{d}', '{p}', {a})" for b, u, d, p, a in BUYS) + ";",
])

SEMANTIC_MODELS = """
semantic_models:
  - name: visits
    model: ref('visits')
    defaults: {agg_time_dimension: visit_date}
    entities:
      - {name: visit, type: primary, expr: visit_id}
      - {name: user, type: foreign, expr: user_id}
    dimensions:
      - {name: visit_date, type: time, type_params: {time_granularity: day}}
      - {name: referrer, type: categorical}
      - {name: product, type: categorical}
    measures:
      - {name: visits, agg: count, expr: visit_id}
  - name: buys
    model: ref('buys')
    defaults: {agg_time_dimension: buy_date}
    entities:
      - {name: buy, type: primary, expr: buy_id}
      - {name: user, type: foreign, expr: user_id}
    dimensions:
      - {name: buy_date, type: time, type_params: {time_granularity: day}}
      - {name: product, type: categorical}
    measures:
      - {name: buys, agg: count, expr: buy_id}
      - {name: spend, agg: sum, expr: amount}
  - name: users
    model: ref('users')
    entities:
      - {name: user, type: primary, expr: user_id}
    dimensions:
      - {name: country, type: categorical}
"""

MODEL = SEMANTIC_MODELS + """
metrics:
  - {name: visits, type: simple, type_params: {measure: visits}}
  - name: visit_to_buy_rate_7d
    type: conversion
    type_params:
      conversion_type_params:
        entity: user
        base_measure: {name: visits}
        conversion_measure: {name: buys}
        window: 7 days
  - name: same_product_spend
    type: conversion
    type_params:
      conversion_type_params:
        entity: user
        calculation: conversions
        base_measure: {name: visits, filter: "{{ Dimension('visit__referrer') }} = 'search'"}
        conversion_measure: {name: spend}
        constant_properties:
          - {base_property: product, conversion_property: product}
  - name: by_a_visitless_entity
    type: conversion
    type_params:
      conversion_type_params:
        entity: buy
        base_measure: {name: visits}
        conversion_measure: {name: buys}
"""


def _day(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def expected(group: Callable[[tuple], tuple], *, window_days: int | None = 7,
             same_product: bool = False, referrer: str | None = None,
             value: Callable[[tuple], float] = lambda buy: 1) -> dict[tuple, tuple[int, float]]:
    """Per group of the base events: (visits, conversions), by the rule written out: each buy
    goes to the latest visit of its user on or before its day (within the window; of the same
    product), ties to the smallest group."""
    country = dict(USERS)
    visits = [(*v, country[v[1]]) for v in VISITS if referrer is None or v[3] == referrer]
    counts: Counter[tuple] = Counter(group(v) for v in visits)
    converted: Counter[tuple] = Counter()
    for buy in BUYS:
        day = _day(buy[2])
        matches = [v for v in visits if v[1] == buy[1] and _day(v[2]) <= day
                   and (window_days is None or day < _day(v[2]) + dt.timedelta(window_days))
                   and (not same_product or v[4] == buy[3])]
        if matches:
            latest = max(_day(v[2]) for v in matches)
            converted[min(group(v) for v in matches if _day(v[2]) == latest)] += value(buy)
    return {key: (counts[key], converted[key]) for key in counts}


def _rows(ops, query: dict) -> dict[tuple, tuple]:  # noqa: ANN001
    result = metrics_query_op(ops, "shop", **query)
    rows = as_numbers(run_query(ops, "shop", result.sql_query, timeout=60, max_rows=100).rows)
    width = len(query.get("dimensions", []))
    return {tuple(str(v)[:7] if isinstance(v, (dt.date, str)) and str(v)[:2] == "20" else v
                  for v in row[:width]): tuple(row[width:]) for row in rows}


@pytest.mark.parametrize("backend", BACKENDS)
def test_conversion_metrics_follow_each_visit_to_its_purchase(
        backend: str, make_db: Callable[..., object], tmp_path: Path) -> None:
    check(make_db(backend, "shop", script=SCRIPT).config, tmp_path)  # type: ignore[attr-defined]


@pytest.mark.spark
def test_conversion_metrics_on_spark(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    script = re.sub(r"'(\d{4}-\d\d-\d\d)'", r"DATE '\1'",
                    SCRIPT.replace(" PRIMARY KEY", "").replace(" NOT NULL", ""))
    check(spark_db(request, "shop", script=script).config, tmp_path)


def check(config: DbConnectionConfig, folder: Path) -> None:
    ops = ops_with_model(config, folder, MODEL)
    try:
        listing = metrics_list_op(ops, "shop")
        assert len(listing.problems) == 1
        assert "metric 'by_a_visitless_entity': entity 'buy' is not an entity of 'visits'" \
            in listing.problems[0]

        by_referrer = _rows(ops, {"metrics": ["visit_to_buy_rate_7d", "visits"],
                                  "dimensions": ["visit__referrer"]})
        want = expected(lambda v: (v[3],))
        assert by_referrer == {key: (conv / count, count) for key, (count, conv) in want.items()}
        # user 2's buy on the day of two search visits counts once; user 1's buy 7 days after
        # a search visit is outside a 7-day window (MetricFlow: base day > buy day - 7 days)
        assert by_referrer[("search",)] == (1 / 6, 6)

        by_country_month = _rows(ops, {"metrics": ["visit_to_buy_rate_7d"],
                                       "dimensions": ["user__country", "metric_time__month"]})
        want = expected(lambda v: (v[5], v[2][:7]))
        assert by_country_month == {key: (conv / count,) for key, (count, conv) in want.items()}

        spend = _rows(ops, {"metrics": ["same_product_spend"], "dimensions": ["visit__product"]})
        want = expected(lambda v: (v[4],), window_days=None, same_product=True,
                        referrer="search", value=lambda buy: buy[4])
        assert spend == {key: (conv,) for key, (_, conv) in want.items()}
        assert spend[("pen",)] == (3 + 3,)  # user 1's pen buy 9 comes after the pen visit

        total = _rows(ops, {"metrics": ["visit_to_buy_rate_7d"]})
        assert total == {(): (5 / len(VISITS),)}
    finally:
        ops.close()


LATEST_SPEC = """
models:
  - name: visits
    semantic_model: true
    agg_time_dimension: visit_date
    columns:
      - {name: visit_id, entity: {name: visit, type: primary}}
      - {name: user_id, entity: {name: user, type: foreign}}
      - {name: visit_date, dimension: time, granularity: day}
      - {name: referrer, dimension: categorical}
    metrics:
      - {name: visits, type: simple, agg: count, expr: visit_id}
      - name: visit_to_buy_rate_7d
        type: conversion
        entity: user
        base_metric: visits
        conversion_metric: {name: buys, filter: "{{ Dimension('buy__product') }} = 'book'"}
        window: 7 days
  - name: buys
    semantic_model: true
    agg_time_dimension: buy_date
    columns:
      - {name: buy_id, entity: {name: buy, type: primary}}
      - {name: user_id, entity: {name: user, type: foreign}}
      - {name: buy_date, dimension: time, granularity: day}
      - {name: product, dimension: categorical}
    metrics:
      - {name: buys, type: simple, agg: count, expr: buy_id}
"""


def test_the_latest_spec_names_simple_metrics_and_their_filters(
        make_db: Callable[..., object], tmp_path: Path) -> None:
    config = make_db("sqlite", "shop", script=SCRIPT).config  # type: ignore[attr-defined]
    ops = ops_with_model(config, tmp_path, LATEST_SPEC)
    try:
        assert metrics_list_op(ops, "shop").problems == []
        rows = _rows(ops, {"metrics": ["visit_to_buy_rate_7d"], "dimensions": ["visit__referrer"]})
        books = [b for b in BUYS if b[3] == "book"]
        want = Counter()
        for buy in books:
            matches = [v for v in VISITS if v[1] == buy[1] and _day(v[2]) <= _day(buy[2])
                       < _day(v[2]) + dt.timedelta(7)]
            if matches:
                want[max(matches, key=lambda v: v[2])[3]] += 1
        visits = Counter(v[3] for v in VISITS)
        assert rows == {(r,): (want[r] / visits[r],) for r in visits}
    finally:
        ops.close()


EVENTS = """
semantic_models:
  - name: events
    model: ref('events')
    defaults: {agg_time_dimension: happened_on}
    entities:
      - {name: event, type: primary, expr: event_id}
      - {name: user, type: foreign, expr: user_id}
    dimensions:
      - {name: happened_on, type: time, type_params: {time_granularity: day}}
      - {name: kind, type: categorical}
    measures:
      - {name: events, agg: count, expr: event_id}
      - {name: users, agg: count_distinct, expr: user_id}
metrics:
  - name: signup_to_purchase_7d
    type: conversion
    type_params:
      conversion_type_params:
        entity: user
        base_measure: {name: events, filter: "{{ Dimension('event__kind') }} = 'signup'"}
        conversion_measure: {name: users, filter: "{{ Dimension('event__kind') }} = 'purchase'"}
        window: 7 days
"""


def test_one_events_table_its_kinds_as_base_and_conversion(
        make_db: Callable[..., object], tmp_path: Path) -> None:
    """The common shape of a product's events: one table, a kind per row; the base and the
    conversion are its measures under filters, the conversions counted as distinct users (two
    purchases of one user count once)."""
    script = ("CREATE TABLE events (event_id INTEGER PRIMARY KEY, user_id INTEGER, "
              "kind VARCHAR(10), happened_on DATE);\n"
              "INSERT INTO events VALUES (1, 1, 'signup', '2024-01-01'), "
              "(2, 1, 'purchase', '2024-01-03'), (3, 2, 'signup', '2024-01-02'), "
              "(4, 2, 'purchase', '2024-01-20'), (5, 3, 'signup', '2024-01-05'), "
              "(6, 3, 'purchase', '2024-01-05'), (7, 3, 'purchase', '2024-01-06');")
    config = make_db("sqlite", "shop", script=script).config  # type: ignore[attr-defined]
    ops = ops_with_model(config, tmp_path, EVENTS)
    try:
        assert _rows(ops, {"metrics": ["signup_to_purchase_7d"]}) == {(): (2 / 3,)}
    finally:
        ops.close()
