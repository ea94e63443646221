"""dbt's latest YAML spec (dbt 1.12, Fusion: ``semantic_model:`` on a model, entities and
dimensions on its columns, simple metrics with ``agg`` under the model, other metrics with
their parameters as keys of their own): the bundled bookstore's semantic model written that
way answers every metric query as the legacy file does, on the same SQLite database.

What it found: a project in the latest spec had no metrics at all (its files hold ``models:``,
which were skipped as plain dbt models), and a ratio of one metric filtered over itself
(``numerator: {name: order_count, filter: ...}, denominator: order_count``, in either spec)
was 1.0: both sides were keyed by the metric's name, so the denominator's took the
numerator's place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nl2sql.config.bundled import bookstore_semantic_model_path
from nl2sql.errors import MetricQueryError
from nl2sql.operations.metrics import metrics_list_op, metrics_query_op
from nl2sql.operations.ops_context import OpsContext

#: The bookstore's semantic model (data/bookstore/semantic_model.yml) in the latest spec, with
#: each of its forms: an entity or a dimension as a type alone or as a block with a name of its
#: own, a derived dimension, a disabled semantic model, a plain model beside them.
LATEST = """
models:
  - name: order_items
    description: One line of an order.
    semantic_model: {enabled: true}
    primary_entity: order_item
    agg_time_dimension: order__ordered_at
    columns:
      - {name: order_id, entity: {type: foreign, name: order}}
      - {name: book_id, entity: {type: foreign, name: book}}
    metrics:
      - {name: revenue, type: simple, agg: sum, expr: quantity * unit_price, label: Revenue,
         filter: "{{ Dimension('order__status') }} != 'cancelled'"}
      - {name: books_sold, type: simple, agg: sum, expr: quantity,
         filter: "{{ Dimension('order__status') }} != 'cancelled'"}
      - {name: order_lines_count, type: simple, agg: count, expr: book_id}
  - name: orders
    semantic_model: true
    agg_time_dimension: ordered_at
    columns:
      - {name: order_id, entity: {type: primary, name: order}}
      - {name: customer_id, entity: {type: foreign, name: customer}}
      - {name: ordered_at, granularity: day, dimension: {type: time}}
      - {name: status, dimension: categorical}
      - {name: channel, dimension: {type: categorical, name: sales_channel}}
    derived_semantics:
      dimensions:
        - {name: is_open, type: categorical,
           expr: "CASE WHEN status IN ('pending', 'paid') THEN 'yes' ELSE 'no' END"}
    metrics:
      - {name: order_count, type: simple, agg: count, expr: order_id}
      - name: paid_share
        type: ratio
        numerator: {name: order_count, filter: "{{ Dimension('order__status') }} = 'paid'"}
        denominator: order_count
  - name: customers
    semantic_model: {enabled: true, name: customers}
    agg_time_dimension: joined_on
    columns:
      - {name: customer_id, entity: {type: primary, name: customer}}
      - {name: country, dimension: categorical}
      - {name: joined_on, granularity: day, dimension: {type: time}}
    metrics:
      - {name: new_customers, type: simple, agg: count, expr: customer_id}
  - name: books
    semantic_model: {enabled: true}
    columns:
      - {name: book_id, entity: {type: primary, name: book}}
      - {name: genre, dimension: categorical}
  - name: returns
    semantic_model: {enabled: false}
    columns:
      - {name: return_id, entity: primary}
  - name: authors
    description: a plain dbt model, no semantics
metrics:
  - name: average_order_value
    type: ratio
    numerator: revenue
    denominator: {name: order_count, filter: "{{ Dimension('order__status') }} != 'cancelled'"}
  - {name: cumulative_revenue, type: cumulative, input_metric: revenue, period_agg: last}
  - name: revenue_change
    type: derived
    expr: revenue - previous_revenue
    input_metrics:
      - {name: revenue}
      - {name: revenue, alias: previous_revenue, offset_window: 1 month}
"""

#: The latest spec's queries and the legacy file's same-named ones (the legacy file spells
#: ``sales_channel`` as ``channel``).
QUERIES = [
    ({"metrics": ["revenue", "books_sold"], "dimensions": ["customer__country"]}, None),
    ({"metrics": ["average_order_value"], "dimensions": ["metric_time__quarter"]}, None),
    ({"metrics": ["cumulative_revenue"], "dimensions": ["metric_time__month"]}, None),
    ({"metrics": ["revenue_change"], "dimensions": ["metric_time__month"]}, None),
    ({"metrics": ["new_customers"], "dimensions": ["metric_time__year"]}, None),
    ({"metrics": ["order_count"], "dimensions": ["order__sales_channel"],
      "where": ["{{ TimeDimension('metric_time', 'year') }} >= '2024-01-01'"]},
     {"metrics": ["order_count"], "dimensions": ["order__channel"],
      "where": ["{{ TimeDimension('metric_time', 'year') }} >= '2024-01-01'"]}),
    ({"metrics": ["revenue"], "dimensions": ["book__genre"], "order_by": ["-revenue"]}, None),
]


@pytest.fixture
def ops(bookstore_ops: OpsContext) -> OpsContext:
    return bookstore_ops


def _use(ops: OpsContext, model: Path) -> None:
    config = ops.config("bookstore").model_copy(update={"semantic_model": model})
    ops.configs.databases["bookstore"] = config


def _rows(ops: OpsContext, query: dict) -> list[str]:
    result = metrics_query_op(ops, "bookstore", **query)
    return (ops.workspace / result.csv_filename).read_text().splitlines()[1:]


def test_the_latest_spec_answers_as_the_legacy_file(ops: OpsContext, tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "_models.yml").write_text(LATEST)
    (folder / "sources.yml").write_text("sources:\n  - name: raw\n")  # not semantic: skipped
    _use(ops, bookstore_semantic_model_path())
    legacy = [_rows(ops, old or new) for new, old in QUERIES]
    _use(ops, folder)
    listed = metrics_list_op(ops, "bookstore")
    assert listed.problems == []
    assert {m.name for m in listed.metrics} == {
        "revenue", "books_sold", "order_lines_count", "order_count", "paid_share",
        "new_customers", "average_order_value", "cumulative_revenue", "revenue_change"}
    dimensions = {d for m in listed.metrics if m.name == "order_count" for d in m.dimensions}
    assert {"order__sales_channel", "order__is_open", "customer__country"} <= dimensions
    assert not any(d.startswith("return") for d in dimensions)  # its semantic model is off
    for (query, _), expected in zip(QUERIES, legacy):
        assert _rows(ops, query) == expected and expected, query


def test_a_ratio_of_a_metric_filtered_over_itself(ops: OpsContext, tmp_path: Path) -> None:
    """``paid_share`` = paid orders / all orders (it was 1.0: one key for both sides)."""
    model = tmp_path / "latest.yml"
    model.write_text(LATEST)
    _use(ops, model)
    rows = dict(line.split(",") for line in _rows(
        ops, {"metrics": ["paid_share"], "dimensions": ["order__sales_channel"]}))
    counts = dict(line.split(",") for line in _rows(
        ops, {"metrics": ["order_count"], "dimensions": ["order__sales_channel"]}))
    paid = dict(line.split(",") for line in _rows(
        ops, {"metrics": ["order_count"], "dimensions": ["order__sales_channel"],
              "where": ["order__status = 'paid'"]}))
    assert rows.keys() == counts.keys() and len(rows) > 1
    for channel, share in rows.items():
        assert float(share) == pytest.approx(int(paid.get(channel, 0)) / int(counts[channel]))
        assert 0 < float(share) < 1


def test_mistakes_in_the_latest_spec_are_named(ops: OpsContext, tmp_path: Path) -> None:
    model = tmp_path / "latest.yml"
    count = "      - {name: order_count, type: simple, agg: count, expr: order_id}\n"
    model.write_text(LATEST.replace(count, count + (
        "      - {name: mode_value, type: simple, agg: mode, expr: order_id}\n")) + """
  - {name: loose, type: simple, agg: sum, expr: quantity}
  - {name: share_to_date, type: cumulative, input_metric: paid_share}
  - {name: no_inputs, type: derived, expr: a + b}
""")
    _use(ops, model)
    problems = "\n".join(metrics_list_op(ops, "bookstore").problems)
    assert ("metric 'loose': a simple metric needs type_params.measure; in the latest spec, "
            "agg and expr under its model's metrics:") in problems
    assert ("metric 'share_to_date': input_metric 'paid_share' is a ratio metric; a "
            "cumulative metric adds up a simple one") in problems
    assert "metric 'no_inputs': a derived metric needs an expr and its input metrics" in problems
    assert ("metric 'mode_value': measure 'mode_value' aggregates with 'mode', which "
            "nl2sql does not compile") in problems
    with pytest.raises(MetricQueryError, match="Metric 'share_to_date' cannot be used"):
        metrics_query_op(ops, "bookstore", metrics=["share_to_date"])
    assert _rows(ops, {"metrics": ["books_sold"]})[0].isdigit()  # the rest answers


def _semantic_model(name: str, table: str, time: str | None, entities: list[tuple[str, str, str]],
                    dimensions: list[tuple[str, str]]) -> dict:
    return {"name": name, "node_relation": {"alias": table, "schema_name": "main"},
            "defaults": {"agg_time_dimension": time} if time else None, "measures": [],
            "entities": [{"name": n, "type": t, "expr": e} for n, t, e in entities],
            "dimensions": [{"name": n, "type": t, "expr": None,
                            "type_params": {"time_granularity": "day"} if t == "time" else None}
                           for n, t in dimensions]}


def _simple(name: str, model: str, agg: str, expr: str, where: str | None = None) -> dict:
    return {"name": name, "type": "simple", "label": name,
            "filter": {"where_filters": [{"where_sql_template": where}]} if where else None,
            "type_params": {"measure": None, "expr": expr, "metric_aggregation_params": {
                "semantic_model": model, "agg": agg, "agg_params": None,
                "agg_time_dimension": None, "non_additive_dimension": None}}}


def test_a_manifest_of_the_latest_spec(ops: OpsContext, tmp_path: Path) -> None:
    """dbt 1.12 and Fusion write the latest spec's simple metrics into semantic_manifest.json
    with no measure: ``type_params.metric_aggregation_params`` names the semantic model and the
    aggregation, and a cumulative metric's ``cumulative_type_params.metric`` its input."""
    cancelled = "{{ Dimension('order__status') }} != 'cancelled'"
    manifest = {
        "semantic_models": [
            _semantic_model("order_items", "order_items", "order__ordered_at",
                            [("order", "foreign", "order_id")], []),
            _semantic_model("orders", "orders", "ordered_at",
                            [("order", "primary", "order_id"),
                             ("customer", "foreign", "customer_id")],
                            [("ordered_at", "time"), ("status", "categorical")]),
            _semantic_model("customers", "customers", None,
                            [("customer", "primary", "customer_id")], [("country", "categorical")]),
        ],
        "metrics": [
            _simple("revenue", "order_items", "sum", "quantity * unit_price", cancelled),
            _simple("order_count", "orders", "count", "order_id"),
            {"name": "average_order_value", "type": "ratio", "filter": None, "type_params": {
                "measure": None, "numerator": {"name": "revenue", "filter": None, "alias": None},
                "denominator": {"name": "order_count", "alias": None, "filter": {
                    "where_filters": [{"where_sql_template": cancelled}]}}}},
            {"name": "cumulative_revenue", "type": "cumulative", "filter": None, "type_params": {
                "measure": None, "cumulative_type_params": {
                    "window": None, "grain_to_date": None, "period_agg": "last",
                    "metric": {"name": "revenue", "filter": None, "alias": None}}}},
        ],
        "project_configuration": {"time_spine_table_configurations": []},
    }
    queries = [{"metrics": ["revenue", "order_count"], "dimensions": ["customer__country"]},
               *(query for query, _ in QUERIES[1:3])]
    _use(ops, bookstore_semantic_model_path())
    legacy = [_rows(ops, query) for query in queries]
    path = tmp_path / "target" / "semantic_manifest.json"
    path.parent.mkdir()
    path.write_text(json.dumps(manifest))
    _use(ops, path)
    assert metrics_list_op(ops, "bookstore").problems == []
    for query, expected in zip(queries, legacy):
        assert _rows(ops, query) == expected and expected, query


def test_a_metrics_time_granularity_is_the_grain_of_a_bare_metric_time(
        ops: OpsContext, tmp_path: Path) -> None:
    """dbt 1.9's ``time_granularity: month`` on a metric: "revenue over time" grouped by
    ``metric_time`` (no grain) is monthly, as MetricFlow answers, not one row per day; a grain
    named in the query still wins, and a grain that is none is a named problem."""
    text = bookstore_semantic_model_path().read_text()
    marker = "  - name: revenue\n    label: Revenue\n"
    assert marker in text
    model = tmp_path / "monthly.yml"
    model.write_text(text.replace(marker, marker + "    time_granularity: month\n")
                     + "  - {name: odd, type: simple, time_granularity: fortnight,\n"
                       "     type_params: {measure: revenue}}\n")
    _use(ops, model)
    problems = metrics_list_op(ops, "bookstore").problems
    assert any("metric 'odd': time_granularity 'fortnight' is not one of" in p for p in problems)
    months = [line.split(",")[0] for line in _rows(ops, {"metrics": ["revenue"],
                                                         "dimensions": ["metric_time"]})]
    assert months and all(day.endswith("-01") for day in months)
    assert len(months) == len(set(months)) < 40  # one row a month, not one a day
    days = _rows(ops, {"metrics": ["revenue"], "dimensions": ["metric_time__day"]})
    assert len(days) > len(months)


def test_an_input_offset_to_the_start_of_a_period_is_its_value_there(
        ops: OpsContext, tmp_path: Path) -> None:
    """``offset_to_grain: month`` (the value as of the month's start) was dropped, and the
    derived metric answered the plain value under its name; then a named problem; now, as
    MetricFlow reads it, each period's value minus the metric on the day its month (quarter)
    began: by day, by week (the month of the week's Monday) and by month (the quarter's first
    day), none when that day sold nothing."""
    model = tmp_path / "offsets.yml"
    model.write_text(bookstore_semantic_model_path().read_text() + """
  - name: revenue_since_month_start
    type: derived
    type_params:
      expr: revenue - month_start_revenue
      metrics:
        - {name: revenue}
        - {name: revenue, alias: month_start_revenue, offset_to_grain: month}
  - name: revenue_since_quarter_start
    type: derived
    type_params:
      expr: revenue - quarter_start_revenue
      metrics:
        - {name: revenue}
        - {name: revenue, alias: quarter_start_revenue, offset_to_grain: quarter}
  - name: both_offsets
    type: derived
    type_params:
      expr: revenue
      metrics:
        - {name: revenue, offset_to_grain: month, offset_window: 1 month}
""")
    _use(ops, model)
    listed = metrics_list_op(ops, "bookstore")
    assert [p for p in listed.problems if "both_offsets" in p] == [
        f"{model}: metric 'both_offsets': input 'revenue': offset_window and offset_to_grain "
        f"together; use one"]

    def values(metric: str, grain: str) -> dict[str, float | None]:
        rows = _rows(ops, {"metrics": [metric], "dimensions": [f"metric_time__{grain}"]})
        return {day: round(float(value), 6) if value else None
                for day, value in (row.split(",") for row in rows)}

    def minus(values: dict[str, float | None], start: dict[str, str]) -> dict[str, float | None]:
        """Each period's value minus the day's revenue on ``start[period]`` (None: none)."""
        return {period: None if daily.get(start[period]) is None or value is None
                else round(value - daily[start[period]], 6) for period, value in values.items()}

    daily = values("revenue", "day")
    since = values("revenue_since_month_start", "day")
    assert since == minus(daily, {day: day[:8] + "01" for day in daily})
    assert sum(v is not None for v in since.values()) > 10  # some months sold on the 1st
    weekly = values("revenue", "week")
    assert values("revenue_since_month_start", "week") == minus(
        weekly, {week: week[:8] + "01" for week in weekly})
    monthly = values("revenue", "month")
    assert values("revenue_since_quarter_start", "month") == minus(
        monthly, {m: f"{m[:5]}{(int(m[5:7]) - 1) // 3 * 3 + 1:02d}-01" for m in monthly})

def test_a_derived_metric_of_one_shifted_input_is_last_years_value(
        ops: OpsContext, tmp_path: Path) -> None:
    """``expr: revenue_last_year`` over the one input ``revenue`` shifted a year: refused ("needs
    an input without an offset_window"), and an expression that was one input alone read the
    unshifted column; each year lists the year before's revenue now."""
    model = tmp_path / "last_year.yml"
    model.write_text(bookstore_semantic_model_path().read_text() + """
  - name: revenue_last_year
    type: derived
    type_params:
      expr: revenue_last_year
      metrics:
        - {name: revenue, alias: revenue_last_year, offset_window: 1 year}
""")
    _use(ops, model)
    years = dict(row.split(",") for row in _rows(ops, {"metrics": ["revenue"],
                                                       "dimensions": ["metric_time__year"]}))
    last = dict(row.split(",") for row in _rows(ops, {"metrics": ["revenue_last_year"],
                                                      "dimensions": ["metric_time__year"]}))
    assert len(years) > 1 and last.keys() == years.keys()
    assert last == {year: years.get(f"{int(year[:4]) - 1}{year[4:]}", "") for year in years}


def test_a_derived_metric_that_is_one_filtered_input(ops: OpsContext, tmp_path: Path) -> None:
    """``expr: web_revenue`` over ``revenue`` filtered to the web channel (a common dbt way to
    name a filtered metric): the expression, one input alone, was left as the bare name ("no such
    column: web_revenue"), not that input's value; it is the web channel's revenue now."""
    model = tmp_path / "web.yml"
    model.write_text(bookstore_semantic_model_path().read_text() + """
  - name: web_revenue
    type: derived
    type_params:
      expr: web_revenue
      metrics:
        - {name: revenue, alias: web_revenue, filter: "{{ Dimension('order__channel') }} = 'web'"}
""")
    _use(ops, model)
    by_channel = dict(row.split(",") for row in _rows(ops, {"metrics": ["revenue"],
                                                            "dimensions": ["order__channel"]}))
    assert _rows(ops, {"metrics": ["web_revenue"]}) == [by_channel["web"]]


def test_a_metric_filtered_on_another_metric_per_customer(ops: OpsContext,
                                                          tmp_path: Path) -> None:
    """dbt's metric filters, ``{{ Metric('order_count', group_by=['customer']) }} >= 3`` (the
    revenue of repeat customers): named as not supported; now each order is kept when its
    customer's order count holds, equal to the same filter written by hand as the customers'
    ids. A metric filtered on its own value says so."""
    model = tmp_path / "repeat.yml"
    model.write_text(bookstore_semantic_model_path().read_text() + """
  - name: repeat_customer_revenue
    type: simple
    type_params: {measure: revenue}
    filter:
      - "{{ Dimension('order__status') }} != 'cancelled'"
      - "{{ Metric('order_count', group_by=['customer']) }} >= 3"
  - {name: customer_count, type: simple, type_params: {measure: customers}}
  - name: self_filtered
    type: simple
    type_params: {measure: orders}
    filter: "{{ Metric('self_filtered', group_by=['customer']) }} >= 3"
""")
    _use(ops, model)
    counts = dict(row.split(",") for row in _rows(ops, {"metrics": ["order_count"],
                                                        "dimensions": ["customer"]}))
    repeat = [customer for customer, count in counts.items() if int(count) >= 3]
    assert 0 < len(repeat) < len(counts)
    by_hand = _rows(ops, {"metrics": ["revenue"],
                          "where": [f"customer IN ({', '.join(repeat)})"]})
    assert _rows(ops, {"metrics": ["repeat_customer_revenue"]}) == by_hand
    assert _rows(ops, {"metrics": ["revenue"],  # the plain name a tool call writes
                       "where": ["customer__order_count >= 3"]}) == by_hand
    # and a group-by: customers per number of orders (MetricFlow's metrics as dimensions)
    histogram = _rows(ops, {"metrics": ["customer_count"],
                            "dimensions": ["customer__order_count"]})
    assert {row.split(",")[0]: int(row.split(",")[1]) for row in histogram if row[0] != ","} == {
        str(n): list(map(int, counts.values())).count(n) for n in set(map(int, counts.values()))}
    with pytest.raises(MetricQueryError, match="Metric 'self_filtered' is filtered on its own "
                                               "value"):
        metrics_query_op(ops, "bookstore", metrics=["self_filtered"])
