"""Compiling metric queries (the bundled bookstore's dbt model, SQLite): deterministic SQL,
errors a model or a person can act on, the read-only path (no side door), and reading semantic
models where parts are broken (a broken metric is named, the others stay usable)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import build_cache
from nl2sql.config.bundled import bookstore_semantic_model_path
from nl2sql.errors import MetricQueryError, QueryRejectedError, SemanticModelError
from nl2sql.semantic import MetricQuery, compile_for
from nl2sql.semantic import loading
from nl2sql.semantic.names import read_templates
from nl2sql.operations.metrics import metrics_list_op, metrics_query_op
from nl2sql.operations.ops_context import OpsContext


@pytest.fixture
def ops(tmp_path: Path):  # noqa: ANN201
    ops = OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    build_cache(ops.config("bookstore"), ops.data_dir)
    yield ops
    ops.close()


def _rows(ops: OpsContext, **query: object) -> list[list[str]]:
    result = metrics_query_op(ops, "bookstore", **query)  # type: ignore[arg-type]
    lines = (ops.workspace / result.csv_filename).read_text().splitlines()
    return [line.split(",") for line in lines[1:]]


def test_the_same_query_compiles_to_the_same_sql(ops: OpsContext) -> None:
    query = MetricQuery(("average_order_value", "revenue_change", "books_sold"),
                        ("metric_time__month", "customer__country"),
                        ("order__channel = 'web'",), ("-books_sold",), 10)
    config = ops.config("bookstore")
    first = compile_for(config, query, ops.db_info("bookstore")).sql
    loading._CACHE.clear()  # read the files again
    assert compile_for(config, query, ops.db_info("bookstore")).sql == first
    assert first.count("WITH") == 1 and "LIMIT 10" in first


def test_filters_templates_and_order(ops: OpsContext) -> None:
    assert read_templates("{{ Dimension('customer__country') }} = 'US' AND "
                          "{{ TimeDimension('metric_time', 'month') }} > '2024-01-01' AND "
                          "{{ Entity('customer') }} > 3 AND "
                          "{{ Dimension('order__ordered_at').grain('year') }} = '2024-01-01'") == (
        "customer__country = 'US' AND metric_time__month > '2024-01-01' AND customer > 3 AND "
        "order__ordered_at__year = '2024-01-01'")
    # MetricFlow's keyword arguments and entity paths, and the 2023 lower-case spelling
    assert read_templates("{{ TimeDimension('metric_time', grain='Month') }} = '2024-01-01' AND "
                          "{{ TimeDimension('metric_time', time_granularity_name='year') }} "
                          "> '2023-01-01' AND "
                          "{{ Dimension('customer__country', entity_path=['order']) }} = 'US' "
                          "AND {{dimension('status', entity_path=['order'])}} = 'paid' AND "
                          "{{ Dimension('customer__country').descending(True) }} > 'A'") == (
        "metric_time__month = '2024-01-01' AND metric_time__year > '2023-01-01' AND "
        "order__customer__country = 'US' AND order__status = 'paid' AND "
        "customer__country > 'A'")
    rows = _rows(ops, metrics=["order_count"], dimensions=["order__status"],
                 where=["{{ Dimension('order__channel') }} = 'web'",
                        "order__status IN ('paid', 'shipped') OR order__status = 'cancelled'"],
                 order_by=["order_count desc"], limit=2)
    assert len(rows) == 2 and int(rows[0][1]) >= int(rows[1][1])
    assert {row[0] for row in rows} <= {"paid", "shipped", "cancelled"}


def test_a_filter_at_a_grain_keeps_the_whole_period(ops: OpsContext) -> None:
    """``TimeDimension('metric_time', grain='month') = '<month>'`` holds for every day of the
    month (the keyword was dropped: the filter then held for the month's first day alone)."""
    months = _rows(ops, metrics=["order_count"], dimensions=["metric_time__month"])
    month, count = max(months, key=lambda row: int(row[1]))
    for template in ("{{ TimeDimension('metric_time', grain='month') }}",
                     "{{ TimeDimension('metric_time', 'month') }}",
                     "{{ Dimension('metric_time').grain('month') }}"):
        assert _rows(ops, metrics=["order_count"], where=[f"{template} = '{month}'"]) == [[count]]
    assert int(count) > 1


@pytest.mark.parametrize(("query", "message"), [
    ({"metrics": ["revenu"]}, "Unknown metric 'revenu'. Did you mean 'revenue'?"),
    ({"metrics": ["revenue"], "dimensions": ["customer__contry"]},
     "Unknown group-by 'customer__contry'. Did you mean 'customer__country'?"),
    ({"metrics": ["revenue"], "dimensions": ["customer__country__month"]},
     "country is not a time dimension"),
    ({"metrics": ["return_count"], "dimensions": ["book__genre"]},
     "no many-to-one join path leads from it to 'books'"),
    ({"metrics": ["revenue"], "where": ["customer__country IN (SELECT country FROM authors)"]},
     "without subqueries or aggregates"),
    ({"metrics": ["revenue"], "where": ["customer__country = 'x'; DROP TABLE books"]},
     "does not parse"),
    ({"metrics": ["revenue"], "where": ["nobody__here = 1"]}, "Unknown group-by 'nobody__here'"),
    ({"metrics": ["revenue"],
      "where": ["{{ TimeDimension('metric_time', 'day', date_part_name='year') }} = 2024"]},
     "cannot be read: a grain and a date part"),
    ({"metrics": ["revenue"], "where": ["{{ Dimension('order__ordered_at').date_part('age') }} > 1"]},
     "date part 'age' is not one of year, quarter, month, day, dow, doy"),
    ({"metrics": ["revenue"], "dimensions": ["customer__country__extract_year"]},
     "country is not a time dimension; drop the date part"),
    ({"metrics": ["revenue"], "where": ["{{ Metric('revenue', ['customer__country']) }} > 10"]},
     "cannot be read: Metric() takes a metric's name and group_by: one entity (['customer'])"),
    ({"metrics": ["revenue"], "where": ["{{ Metric('revenu', group_by=['customer']) }} > 10"]},
     "Unknown group-by 'customer__revenu'"),
    ({"metrics": ["revenue"], "where": ["{{ Metric('revenue', ['customer', 'book']) }} > 1"]},
     "Metric() takes a metric's name and group_by: one entity (['customer'])"),
    ({"metrics": ["revenue"], "where": ["{{ Dimension('customer__country', 'x', 'y', 'z') }} = 1"]},
     "cannot be read: Dimension() takes from 1 to 3 positional arguments"),
    ({"metrics": ["revenue"], "where": ["{{ TimeDimension('metric_time', 'fort night') }} > 1"]},
     "grain 'fort night' is not one of day, week, month, quarter, year or a custom granularity"),
    ({"metrics": ["revenue"], "where": ["{{ TimeDimension('metric_time', 'fortnight') }} > 1"]},
     "Unknown group-by 'metric_time__fortnight'"),
    ({"metrics": ["revenue_change"]}, "needs one time group-by"),
    ({"metrics": ["revenue"], "order_by": ["-books_sold"]},
     "order_by '-books_sold' is not a metric or group-by of the query"),
    ({"metrics": ["revenue"], "dimensions": ["order__ordered_at__day"], "limit": -1},
     "limit must be 0 or more"),
])
def test_errors_say_what_to_do(ops: OpsContext, query: dict, message: str) -> None:
    with pytest.raises(MetricQueryError) as raised:
        metrics_query_op(ops, "bookstore", **query)
    assert message in str(raised.value) and raised.value.model_fixable
    assert "\n" not in str(raised.value)


def test_the_compiled_sql_takes_the_read_only_path(ops: OpsContext, tmp_path: Path) -> None:
    """A semantic model is text someone wrote: its SQL goes through the guard like any query."""
    model = tmp_path / "sneaky.yml"
    model.write_text("""
semantic_models:
  - name: books
    model: ref('books')
    entities: [{name: book, type: primary, expr: book_id}]
    measures:
      - {name: loaded, agg: sum, expr: "load_extension('/tmp/x.so')"}
metrics:
  - {name: loaded, type: simple, type_params: {measure: loaded}}
""")
    config = ops.config("bookstore").model_copy(update={"semantic_model": model})
    ops.configs.databases["bookstore"] = config
    with pytest.raises(QueryRejectedError):
        metrics_query_op(ops, "bookstore", metrics=["loaded"])


def test_a_broken_metric_is_named_and_the_others_stay_usable(ops: OpsContext,
                                                             tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "bookstore.yml").write_text(bookstore_semantic_model_path().read_text())
    (folder / "more.yml").write_text("""
metrics:
  - {name: half, type: ratio, type_params: {numerator: revenue}}
  - {name: ghost, type: simple, type_params: {measure: no_such_measure}}
  - {name: loop_a, type: derived, type_params: {expr: loop_b + 1, metrics: [loop_b]}}
  - {name: loop_b, type: derived, type_params: {expr: loop_a + 1, metrics: [loop_a]}}
  - {name: conversion, type: conversion, type_params: {}}
  - {name: funnel, type: funnel, type_params: {}}
  - {name: revenue, type: simple, type_params: {measure: copies}}
""")
    (folder / "broken.yaml").write_text("metrics: [\n  - name: x\n")
    (folder / "notes.yml").write_text("models:\n  - name: not_semantic\n")
    config = ops.config("bookstore").model_copy(update={"semantic_model": folder})
    ops.configs.databases["bookstore"] = config
    listed = metrics_list_op(ops, "bookstore")
    problems = "\n".join(listed.problems)
    assert "more.yml: metric 'half': 'type_params.denominator' must name a metric" in problems
    assert "metric 'ghost': measure 'no_such_measure' is in no semantic model" in problems
    assert "depends on itself (loop_a -> loop_b -> loop_a)" in problems
    assert "metric 'conversion': a conversion metric needs the entity" in problems
    assert "metric 'funnel': metric type 'funnel' is not compiled" in problems
    assert "metric 'revenue': defined twice" in problems
    assert "broken.yaml: file: " in problems and "notes.yml" not in problems
    assert all("\n" not in line and "Traceback" not in line for line in listed.problems)
    assert "revenue" in {m.name for m in listed.metrics}  # the first definition is kept
    assert {"half", "ghost", "loop_a"}.isdisjoint(m.name for m in listed.metrics)
    assert "Not usable (fix the semantic model):" in listed.render()
    with pytest.raises(MetricQueryError, match="Metric 'half' cannot be used: 'type_params"):
        metrics_query_op(ops, "bookstore", metrics=["half"])
    assert _rows(ops, metrics=["books_sold"])[0][0].isdigit()  # the rest answers


def test_a_missing_semantic_model_and_a_database_without_one(ops: OpsContext,
                                                              tmp_path: Path) -> None:
    ops.configs.databases["bookstore"] = ops.config("bookstore").model_copy(
        update={"semantic_model": tmp_path / "nope"})
    with pytest.raises(SemanticModelError, match="nope does not exist; fix 'semantic_model:'"):
        metrics_list_op(ops, "bookstore")
    ops.configs.databases["bookstore"] = ops.config("bookstore").model_copy(
        update={"semantic_model": None})
    assert metrics_list_op(ops, "bookstore").metrics == []
    with pytest.raises(MetricQueryError, match="has no 'semantic_model:' in dbs.yaml"):
        metrics_query_op(ops, "bookstore", metrics=["revenue"])


def test_names_are_spelled_as_the_database_spells_them(ops: OpsContext, tmp_path: Path) -> None:
    """``ref('BOOKS')`` and ``expr: Price`` read books.price; an unknown column is named."""
    model = tmp_path / "upper.yml"
    model.write_text("""
semantic_models:
  - name: catalogue
    model: ref('BOOKS')
    entities: [{name: book, type: primary, expr: Book_Id}]
    dimensions: [{name: genre, type: categorical, expr: GENRE}]
    measures:
      - {name: price_total, agg: sum, expr: Price}
      - {name: bad, agg: sum, expr: pryce}
metrics:
  - {name: price_total, type: simple, type_params: {measure: price_total}}
  - {name: bad, type: simple, type_params: {measure: bad}}
""")
    ops.configs.databases["bookstore"] = ops.config("bookstore").model_copy(
        update={"semantic_model": model})
    result = metrics_query_op(ops, "bookstore", metrics=["price_total"],
                              dimensions=["book__genre"])
    assert "FROM books AS catalogue" in result.sql_query and result.row_count == 7
    with pytest.raises(MetricQueryError, match="column 'pryce' is not in table 'books'"):
        metrics_query_op(ops, "bookstore", metrics=["bad"])


def test_fill_nulls_with_fills_the_periods_without_rows(ops: OpsContext, tmp_path: Path) -> None:
    """dbt's ``fill_nulls_with`` (on the measure input, or the metric's own key in the latest
    spec) is the value where no row adds up: a month with orders and no returns (was empty)."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "bookstore.yml").write_text(bookstore_semantic_model_path().read_text())
    (folder / "filled.yml").write_text("""
metrics:
  - {name: returns_or_zero, type: simple,
     type_params: {measure: {name: returns, fill_nulls_with: 0}}}
""")
    ops.configs.databases["bookstore"] = ops.config("bookstore").model_copy(
        update={"semantic_model": folder})
    rows = _rows(ops, metrics=["order_count", "return_count", "returns_or_zero"],
                 dimensions=["metric_time__month"])
    assert any(row[2] == "" for row in rows)  # months without returns
    assert all(row[3] == (row[2] or "0") for row in rows)
    (folder / "filled.yml").write_text("""
metrics:
  - {name: returns_or_zero, type: simple, type_params: {measure: {name: returns,
                                                                  fill_nulls_with: none}}}
""")
    loading._CACHE.clear()  # read the files again at once
    problems = metrics_list_op(ops, "bookstore").problems
    assert any("metric 'returns_or_zero': fill_nulls_with 'none' is not a number" in p
               for p in problems)
