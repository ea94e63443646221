"""A semantic model written for this check, not shipped and not the other tests' (Chinook's
catalogue and its sales staff: tracks, albums, artists, media types, invoices through customers
to their support reps), in dbt and in Cube syntax, on SQLite, PostgreSQL, MariaDB, DuckDB and
Spark.
Each metric query equals SQL written by hand with other techniques (window frames, LAG).

What it found: a share of two counts written as a derived metric (dbt ``expr: a / b``) or a
Cube ``number`` measure (``{long_tracks} / NULLIF({count}, 0)``, the form the docs show) was 0
on SQLite and PostgreSQL (integer division) and 0.25 on DuckDB and MariaDB; and a Cube measure
whose filter names another cube took its whole cube (every other measure) with it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from metrics_samples import gold_failures, spelled, write_model

import nl2sql
from conftest import SampleDb, build_cache, sample_fixture, spark_config, write_dbs_yaml
from nl2sql.config.registry import DbConnectionConfig, DbConnectionConfigs
from nl2sql.operations.metrics import metrics_list_op, metrics_query_op
from nl2sql.operations.ops_context import OpsContext
from nl2sql.semantic import semantic_model
from nl2sql.semantic.loading import load_semantic_model

chinook = sample_fixture("chinook", ["sqlite", "postgres", "mysql", "duckdb"])

#: In PostgreSQL's snake_case names (``spelled`` makes them PascalCase for the others), literals
#: in upper case.
DBT = """
semantic_models:
  - name: tracks
    model: ref('track')
    entities:
      - {name: track, type: primary, expr: track_id}
      - {name: album, type: foreign, expr: album_id}
      - {name: media_type, type: foreign, expr: media_type_id}
    dimensions:
      - {name: length, type: categorical,
         expr: "CASE WHEN milliseconds > 300000 THEN 'LONG' ELSE 'SHORT' END"}
      - {name: is_long, type: categorical, expr: "milliseconds > 300000"}
    measures:
      - {name: track_rows, agg: count, expr: track_id}
      - {name: total_ms, agg: sum, expr: milliseconds}
      - {name: long_rows, agg: sum_boolean, expr: "milliseconds > 300000"}
      - {name: composers, agg: count_distinct, expr: composer}
      - {name: mean_price, agg: average, expr: unit_price}
      - {name: longest_ms, agg: max, expr: milliseconds}
  - name: albums
    model: ref('album')
    entities:
      - {name: album, type: primary, expr: album_id}
      - {name: artist, type: foreign, expr: artist_id}
  - name: artists
    model: ref('artist')
    entities:
      - {name: artist, type: primary, expr: artist_id}
    dimensions:
      - {name: name, type: categorical}
  - name: media_types
    model: ref('media_type')
    entities:
      - {name: media_type, type: primary, expr: media_type_id}
    dimensions:
      - {name: name, type: categorical}
  - name: sales
    model: ref('invoice')
    defaults: {agg_time_dimension: sold_on}
    entities:
      - {name: sale, type: primary, expr: invoice_id}
      - {name: buyer, type: foreign, expr: customer_id}
    measures:
      - {name: sales_total, agg: sum, expr: total}
    dimensions:
      - {name: sold_on, type: time, expr: invoice_date, type_params: {time_granularity: day}}
  - name: buyers
    model: ref('customer')
    entities:
      - {name: buyer, type: primary, expr: customer_id}
      - {name: rep, type: foreign, expr: support_rep_id}
    dimensions:
      - {name: country, type: categorical}
  - name: reps
    model: ref('employee')
    entities:
      - {name: rep, type: primary, expr: employee_id}
    dimensions:
      - {name: last_name, type: categorical, expr: last_name}
metrics:
  - {name: tracks, label: Tracks, type: simple, type_params: {measure: track_rows}}
  - {name: long_tracks, type: simple, type_params: {measure: long_rows}}
  - name: long_share
    label: Share of long tracks
    type: derived
    type_params: {expr: long_tracks / tracks, metrics: [{name: long_tracks}, {name: tracks}]}
  - {name: total_ms, type: simple, type_params: {measure: total_ms}}
  - name: ms_per_track
    type: derived
    type_params: {expr: total_ms / tracks, metrics: [{name: total_ms}, {name: tracks}]}
  - {name: composer_count, type: simple, type_params: {measure: composers}}
  - {name: average_price, type: simple, type_params: {measure: mean_price}}
  - {name: longest, type: simple, type_params: {measure: longest_ms}}
  - {name: sales, label: Sales, type: simple, type_params: {measure: sales_total}}
  - name: usa_sales
    type: simple
    type_params: {measure: sales_total}
    filter: "{{ Dimension('buyer__country') }} = 'USA'"
  - {name: sales_3m, type: cumulative, type_params: {measure: sales_total, window: 3 months,
                                                    period_agg: last}}
  - {name: sales_ytd, type: cumulative, type_params: {measure: sales_total, grain_to_date: year,
                                                     period_agg: last}}
  - {name: sales_to_date, type: cumulative, type_params: {measure: sales_total}}
  - name: sales_change
    type: derived
    type_params:
      expr: sales - last_month
      metrics: [{name: sales}, {name: sales, offset_window: 1 month, alias: last_month}]
"""

CUBE = """
cubes:
  - name: tracks
    sql_table: track
    joins:
      - {name: albums, relationship: many_to_one, sql: "{CUBE}.album_id = {albums}.album_id"}
      - {name: media_types, relationship: belongs_to,
         sql: "{CUBE}.media_type_id = {media_types}.media_type_id"}
    dimensions:
      - {name: id, sql: track_id, type: number, primary_key: true}
      - {name: length, type: string,
         sql: "CASE WHEN {CUBE}.milliseconds > 300000 THEN 'LONG' ELSE 'SHORT' END"}
      - name: size
        type: string
        case:
          when:
            - {sql: "{CUBE}.milliseconds > 300000", label: LONG}
            - {sql: "{length} = 'SHORT' AND {CUBE}.bytes > 8000000", label: "BIG'N SHORT"}
          else: {label: SHORT}
    measures:
      - {name: count, type: count}
      - {name: total_ms, sql: milliseconds, type: sum}
      - {name: long_tracks, sql: track_id, type: count,
         filters: [{sql: "{CUBE}.milliseconds > 300000"}]}
      - {name: long_share, type: number, sql: "{long_tracks} / NULLIF({count}, 0)"}
      - {name: ms_per_track, type: number, sql: "{total_ms} / {count}"}
      - {name: composers, sql: composer, type: count_distinct}
      - {name: average_price, sql: unit_price, type: avg}
      - {name: longest, sql: milliseconds, type: max}
      - {name: spread, sql: "MAX({CUBE}.milliseconds) - MIN({CUBE}.milliseconds)",
         type: number_agg}  # an aggregate of its own (Cube's Tesseract type)
    segments:
      - {name: long, sql: "{CUBE}.milliseconds > 300000"}
  - name: albums
    sql_table: album
    joins:
      - {name: artists, relationship: many_to_one, sql: "{CUBE}.artist_id = {artists}.artist_id"}
    dimensions:
      - {name: id, sql: album_id, type: number, primary_key: true}
  - name: artists
    sql_table: artist
    dimensions:
      - {name: id, sql: artist_id, type: number, primary_key: true}
      - {name: name, sql: name, type: string}
  - name: media_types
    sql_table: media_type
    dimensions:
      - {name: id, sql: media_type_id, type: number, primary_key: true}
      - {name: name, sql: name, type: string}
  - name: sales
    sql_table: invoice
    joins:
      - {name: buyers, relationship: many_to_one, sql: "{CUBE}.customer_id = {buyers}.customer_id"}
    dimensions:
      - {name: id, sql: invoice_id, type: number, primary_key: true}
      - {name: sold_on, sql: invoice_date, type: time}
      - {name: rep, sql: "{reps.last_name}", type: string}  # a proxy, two joins away
    measures:
      - {name: total, sql: total, type: sum, title: Sales}
      - {name: usa_total, sql: total, type: sum, filters: [{sql: "{buyers.country} = 'USA'"}]}
      - {name: usa_total_2, sql: total, type: sum,
         filters: [{sql: "{buyers.country} = 'USA' AND {CUBE}.total > 1"}]}
      - {name: total_3m, sql: total, type: sum, rolling_window: {trailing: 3 month},
         public: false}  # queried by name, not offered
  - name: buyers
    sql_table: customer
    joins:
      - {name: reps, relationship: many_to_one, sql: "{CUBE}.support_rep_id = {reps}.employee_id"}
      - {name: people, relationship: many_to_one,
         sql: "{CUBE}.support_rep_id = {people}.employee_id"}
    dimensions:
      - {name: id, sql: customer_id, type: number, primary_key: true}
      - {name: country, sql: country, type: string}
    measures:  # grouped by a sale's dimension: one customer meets many sales
      - {name: count, type: count}
      - {name: reps_sum, sql: support_rep_id, type: sum}
      - {name: usa_count, type: count, filters: [{sql: "{CUBE}.country = 'USA'"}]}
  - name: employees  # a private parent of two cubes (Cube's extends)
    sql_table: employee
    public: false
    dimensions:
      - {name: id, sql: employee_id, type: number, primary_key: true}
      - {name: last_name, sql: last_name, type: string}
  - name: reps
    extends: employees
    joins:
      - {name: people, relationship: many_to_one, sql: "{CUBE}.reports_to = {people}.employee_id"}
  - name: people  # employees, reached as a customer's rep or as a rep's manager
    extends: employees
views:
  - name: customers_view  # rooted at customers, with their sales' dimensions
    cubes:
      - {join_path: buyers, includes: [count, country]}
      - {join_path: buyers.sales, prefix: true, includes: [sold_on]}
  - name: sales_by_manager  # the join path says which employee: the rep's manager
    cubes:
      - join_path: sales
        includes: [{name: total, alias: sales, title: Sales}, rep]  # rep: a proxy
      - join_path: sales.buyers.reps.people
        prefix: true
        alias: manager
        includes: [{name: last_name, alias: name}]
      - join_path: sales.buyers.people
        prefix: true
        includes: "*"
        excludes: [id]
"""

PER_MEDIA = "FROM track t JOIN media_type m ON m.media_type_id = t.media_type_id"
PER_MONTH = "SELECT {month} AS mo, SUM(total) AS s FROM invoice GROUP BY {month}"
#: (case, dbt query or None, Cube query or None, hand-written SQL in PostgreSQL's names).
CASES: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None, str]] = [
    ("a count by a dimension two joins away",
     {"metrics": ["tracks"], "dimensions": ["artist__name"]},
     {"metrics": ["tracks.count"], "dimensions": ["artists.name"]},
     "SELECT ar.name, COUNT(*) FROM track t JOIN album a ON a.album_id = t.album_id "
     "JOIN artist ar ON ar.artist_id = a.artist_id GROUP BY ar.name"),
    ("a share of two counts",
     {"metrics": ["long_share"], "dimensions": ["media_type__name"]},
     {"metrics": ["tracks.long_share"], "dimensions": ["media_types.name"]},
     f"SELECT m.name, AVG(CASE WHEN t.milliseconds > 300000 THEN 1e0 ELSE 0e0 END) {PER_MEDIA} "
     f"GROUP BY m.name"),
    ("a quotient of integers under a filter",
     {"metrics": ["ms_per_track"], "dimensions": ["media_type__name"],
      "where": ["media_type__name LIKE '%AAC%'"]},
     {"metrics": ["tracks.ms_per_track"], "dimensions": ["media_types.name"],
      "where": ["media_types.name LIKE '%AAC%'"]},
     f"SELECT m.name, AVG(1e0 * t.milliseconds) {PER_MEDIA} WHERE m.name LIKE '%AAC%' "
     f"GROUP BY m.name"),
    ("a Cube measure that is an aggregate of its own (number_agg)", None,
     {"metrics": ["tracks.spread"], "dimensions": ["media_types.name"]},
     f"SELECT m.name, MAX(t.milliseconds) - MIN(t.milliseconds) {PER_MEDIA} GROUP BY m.name"),
    ("a filter that is one true/false name (a Cube segment)",
     {"metrics": ["tracks"], "dimensions": ["media_type__name"], "where": ["track__is_long"]},
     {"metrics": ["tracks.count"], "dimensions": ["media_types.name"], "where": ["tracks.long"]},
     f"SELECT m.name, COUNT(*) {PER_MEDIA} WHERE t.milliseconds > 300000 GROUP BY m.name"),
    ("distinct, average and maximum by a computed dimension",
     {"metrics": ["composer_count", "average_price", "longest"], "dimensions": ["track__length"]},
     {"metrics": ["tracks.composers", "tracks.average_price", "tracks.longest"],
      "dimensions": ["tracks.length"]},
     "SELECT CASE WHEN milliseconds > 300000 THEN 'LONG' ELSE 'SHORT' END, "
     "COUNT(DISTINCT composer), AVG(unit_price), MAX(milliseconds) FROM track "
     "GROUP BY CASE WHEN milliseconds > 300000 THEN 'LONG' ELSE 'SHORT' END"),
    ("a Cube dimension of case labels", None,
     {"metrics": ["tracks.count"], "dimensions": ["tracks.size"]},
     "SELECT CASE WHEN milliseconds > 300000 THEN 'LONG' WHEN bytes > 8000000 THEN "
     "'BIG''N SHORT' ELSE 'SHORT' END, COUNT(*) FROM track GROUP BY CASE WHEN "
     "milliseconds > 300000 THEN 'LONG' WHEN bytes > 8000000 THEN 'BIG''N SHORT' ELSE "
     "'SHORT' END"),
    ("sales by support rep (two joins) and year",
     {"metrics": ["sales"], "dimensions": ["buyer__rep__last_name", "metric_time__year"]},
     {"metrics": ["sales.total"], "dimensions": ["reps.last_name", "sales.sold_on.year"]},
     "SELECT e.last_name, {year}, SUM(i.total) FROM invoice i "
     "JOIN customer c ON c.customer_id = i.customer_id "
     "JOIN employee e ON e.employee_id = c.support_rep_id GROUP BY e.last_name, {year}"),
    ("a Cube view: one table reached along two join paths (a rep and the rep's manager)", None,
     {"metrics": ["sales_by_manager.sales"],
      "dimensions": ["sales_by_manager.manager_name", "sales_by_manager.people_last_name"]},
     "SELECT m.last_name, e.last_name, SUM(i.total) FROM invoice i JOIN customer c ON "
     "c.customer_id = i.customer_id JOIN employee e ON e.employee_id = c.support_rep_id "
     "JOIN employee m ON m.employee_id = e.reports_to GROUP BY m.last_name, e.last_name"),
    ("a Cube proxy dimension (another cube's member, two joins away)", None,
     {"metrics": ["sales.total"], "dimensions": ["sales.rep"]},
     "SELECT e.last_name, SUM(i.total) FROM invoice i JOIN customer c ON c.customer_id = "
     "i.customer_id JOIN employee e ON e.employee_id = c.support_rep_id GROUP BY e.last_name"),
    ("a Cube view exposing a proxy dimension", None,
     {"metrics": ["sales_by_manager.sales"], "dimensions": ["sales_by_manager.rep"]},
     "SELECT e.last_name, SUM(i.total) FROM invoice i JOIN customer c ON c.customer_id = "
     "i.customer_id JOIN employee e ON e.employee_id = c.support_rep_id GROUP BY e.last_name"),
    ("Cube measures across a one-to-many join, each row counted once per group, beside "
     "another cube's", None,
     {"metrics": ["buyers.count", "buyers.reps_sum", "buyers.usa_count", "sales.total"],
      "dimensions": ["sales.sold_on.year"]},
     "SELECT d.y, COUNT(*), SUM(d.support_rep_id), COUNT(CASE WHEN d.country = 'USA' THEN 1 "
     "END), MAX(t.s) FROM (SELECT DISTINCT {year} AS y, c.customer_id, c.support_rep_id, "
     "c.country FROM customer c JOIN invoice i ON i.customer_id = c.customer_id) AS d "
     "JOIN (SELECT {year} AS y, SUM(total) AS s FROM invoice GROUP BY {year}) AS t "
     "ON t.y = d.y GROUP BY d.y"),
    ("a Cube view's measure by a dimension across a one-to-many join", None,
     {"metrics": ["customers_view.count"], "dimensions": ["customers_view.sales_sold_on.year"],
      "where": ["customers_view.country = 'USA'"]},
     "SELECT {year}, COUNT(DISTINCT c.customer_id) FROM customer c JOIN invoice i ON "
     "i.customer_id = c.customer_id WHERE c.country = 'USA' GROUP BY {year}"),
    ("a filter through a join, by month",
     {"metrics": ["usa_sales"], "dimensions": ["metric_time__month"]},
     {"metrics": ["sales.usa_total"], "dimensions": ["sales.sold_on.month"]},
     "SELECT {month}, SUM(i.total) FROM invoice i JOIN customer c ON c.customer_id = "
     "i.customer_id WHERE c.country = 'USA' GROUP BY {month}"),
    ("a trailing three-month window",
     {"metrics": ["sales_3m"], "dimensions": ["metric_time__month"]},
     {"metrics": ["sales.total_3m"], "dimensions": ["sales.sold_on.month"]},
     f"SELECT mo, SUM(s) OVER (ORDER BY mo ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) "
     f"FROM ({PER_MONTH}) AS per_month"),
    ("year to date", {"metrics": ["sales_ytd"], "dimensions": ["metric_time__month"]}, None,
     "SELECT {month}, SUM(SUM(total)) OVER (PARTITION BY {year} ORDER BY {month}) "
     "FROM invoice GROUP BY {year}, {month}"),
    ("a running total as of each month's first day (dbt's default period_agg)",
     {"metrics": ["sales_to_date"], "dimensions": ["metric_time__month"]}, None,
     "SELECT p.mo, (SELECT SUM(total) FROM invoice WHERE {day} <= p.mo) "
     "FROM (SELECT DISTINCT {month} AS mo FROM invoice) AS p"),
    ("a change on the month before",
     {"metrics": ["sales_change"], "dimensions": ["metric_time__month"]}, None,
     f"SELECT mo, s - LAG(s) OVER (ORDER BY mo) FROM ({PER_MONTH}) AS per_month"),
    ("the top three countries",
     {"metrics": ["sales"], "dimensions": ["buyer__country"], "order_by": ["-sales"], "limit": 3},
     {"metrics": ["sales.total"], "dimensions": ["buyers.country"],
      "order_by": ["-sales.total"], "limit": 3},
     "SELECT c.country, SUM(i.total) FROM invoice i JOIN customer c ON c.customer_id = "
     "i.customer_id GROUP BY c.country ORDER BY 2 DESC LIMIT 3"),
]


def _ops(config: DbConnectionConfig, naming: str, folder: Path,
         kind: str) -> tuple[OpsContext, Path]:
    """An OpsContext of ``config`` with the ``kind`` ("dbt" or "cube") model; its path."""
    path = write_model(folder / kind / "semantic.yml", DBT if kind == "dbt" else CUBE, naming)
    entry = config.model_copy(update={"semantic_model": path})
    return OpsContext(DbConnectionConfigs.load(write_dbs_yaml(folder / kind, [entry]),
                                               data_dir=folder / "data",
                                               workspace=folder / "workspace")), path


def check_cases(config: DbConnectionConfig, backend: str, naming: str, folder: Path) -> None:
    """Every case, from each format, equals its hand-written query on ``config``'s database."""
    build_cache(config, folder / "data")
    failures = []
    for kind in ("dbt", "cube"):
        ops, path = _ops(config, naming, folder, kind)
        if kind == "cube":  # the broken measure is named, its cube's others stay usable
            model = semantic_model(ops.configs.get(config.db_id))
            assert model is not None and {"sales.total", "sales.total_3m"} <= set(model.metrics)
            assert [p.line() for p in model.problems] == [
                f"{path}: metric 'sales.usa_total_2': its filter "
                f"\"{{buyers.country}} = 'USA' AND {{CUBE}}."
                f"{spelled('total', naming)} > 1\" names another cube and a column of its own "
                f"({{CUBE}}.column); write {{CUBE.dimension}} or {{dimension}}"]
        try:
            failures += gold_failures(ops, config.db_id, kind, CASES, backend, naming)
        finally:
            ops.close()
    assert not failures, "\n\n".join(failures)


def test_a_model_of_my_own_equals_hand_written_sql(chinook: SampleDb, tmp_path: Path) -> None:
    check_cases(chinook.config, chinook.backend, chinook.naming, tmp_path)


@pytest.mark.spark
@pytest.mark.slow
def test_a_model_of_my_own_on_spark(spark_server, spark_chinook,  # noqa: ANN001
                                    tmp_path: Path) -> None:
    config = spark_config("chinook", spark_server.remote, spark_chinook, query_timeout_seconds=60)
    check_cases(config, "spark", "sqlite", tmp_path)


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)  # the context is backend-neutral
@pytest.mark.parametrize(("kind", "question", "first"), [
    ("dbt", "What share of the tracks are long, per media type?", "long_share"),  # was 'tracks'
    ("dbt", "How many tracks does each artist have?", "tracks"),
    ("dbt", "Sales by support rep per year", "sales"),
    # A Cube metric said by its member alone (was not matched: 'tracks composers' was not said)
    ("cube", "How many composers per media type?", "tracks.composers"),
    # ... and the longer name said apart still first ('longest' alone tied with 'tracks')
    ("cube", "Longest track per artist", "tracks.longest"),
])
def test_the_context_puts_my_metric_first(chinook: SampleDb, tmp_path: Path, kind: str,
                                          question: str, first: str) -> None:
    build_cache(chinook.config, tmp_path / "data")
    ops, _ = _ops(chinook.config, chinook.naming, tmp_path, kind)
    try:
        ctx = nl2sql.context(question, db_id=chinook.config.db_id, config=ops)
    finally:
        ops.close()
    assert ctx.metrics[0].name == first and ctx.metrics[0].matched, ctx.metrics[:3]


def cube_answers(config: DbConnectionConfig, folder: Path, model_path: Path
                 ) -> tuple[list[str], list[str], list[str]]:
    """The metrics and problems (sorted) of the Cube model at ``model_path``, and the SQL of
    each case's Cube query, on ``config``'s database (its cache under ``folder``/data)."""
    entry = config.model_copy(update={"semantic_model": model_path})
    ops = OpsContext(DbConnectionConfigs.load(write_dbs_yaml(model_path.parent, [entry]),
                                              data_dir=folder / "data",
                                              workspace=folder / "workspace"))
    try:
        model = semantic_model(ops.configs.get(config.db_id))
        assert model is not None
        return (sorted(model.metrics), sorted(p.reason for p in model.problems),
                [metrics_query_op(ops, config.db_id, **query).sql_query
                 for _, _, query, _ in CASES if query])
    finally:
        ops.close()


#: The Cube model's properties and types as Cube's camelCase (its YAML reads either).
CAMEL = {"sql_table": "sqlTable", "primary_key": "primaryKey", "rolling_window": "rollingWindow",
         "count_distinct": "countDistinct", "many_to_one": "manyToOne",
         "belongs_to": "belongsTo"}


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)  # reading the file, not the SQL
def test_a_cube_model_in_camel_case_reads_as_in_snake_case(chinook: SampleDb,
                                                           tmp_path: Path) -> None:
    """``sqlTable`` was no table ("a cube needs sql_table or sql"), ``countDistinct`` no type,
    and ``rollingWindow`` was dropped: a trailing 3-month total summed each month alone."""
    snake = write_model(tmp_path / "snake" / "semantic.yml", CUBE, chinook.naming)
    camel = snake.read_text(encoding="utf-8")
    for word, spelling in CAMEL.items():
        camel = camel.replace(word, spelling)
    assert "sql_table" not in camel and "rollingWindow:" in camel
    (tmp_path / "camel").mkdir()
    (tmp_path / "camel" / "semantic.yml").write_text(camel, encoding="utf-8")
    build_cache(chinook.config, tmp_path / "data")
    answers = [cube_answers(chinook.config, tmp_path, tmp_path / name / "semantic.yml")
               for name in ("snake", "camel")]
    assert answers[0] == answers[1]
    assert "sales.total_3m" in answers[1][0] and len(answers[1][1]) == 1


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)  # reading the file, not the SQL
def test_cube_views_and_extends_list_their_names_and_name_their_mistakes(
        chinook: SampleDb, tmp_path: Path) -> None:
    wrong = """
views:
  - name: wrong_path
    cubes: [{join_path: sales.clients, includes: "*"}]
  - name: wrong_member
    cubes: [{join_path: sales, includes: [total, totl]}]
  - name: sales  # a cube's name
    cubes: [{join_path: sales, includes: "*"}]
cubes:
  - {name: loop_a, extends: loop_b}
  - {name: loop_b, extends: loop_a}
  - {name: orphan, extends: nowhere}
  - name: odd
    sql_table: invoice
    dimensions:
      - {name: x, sql: "{buyers.nothing}", type: string}
      - {name: y, sql: "{sales.total}", type: number, sub_query: true}
      - {name: z, sql: "{sales.total}", type: number}
"""
    build_cache(chinook.config, tmp_path / "data")
    path = write_model(tmp_path / "cube" / "semantic.yml", CUBE, chinook.naming)
    (tmp_path / "cube" / "views.yml").write_text(wrong, encoding="utf-8")
    entry = chinook.config.model_copy(update={"semantic_model": path.parent})
    ops = OpsContext(DbConnectionConfigs.load(write_dbs_yaml(tmp_path / "cube", [entry]),
                                              data_dir=tmp_path / "data",
                                              workspace=tmp_path / "workspace"))
    try:
        listed = {m.name: m for m in metrics_list_op(
            ops, chinook.config.db_id).metrics}
        model = semantic_model(ops.configs.get(chinook.config.db_id))
    finally:
        ops.close()
    view = listed["sales_by_manager.sales"]
    assert view.label == "Sales" and view.dimensions == [
        "sales_by_manager.rep", "sales_by_manager.manager_name",
        "sales_by_manager.people_last_name"]
    assert "sales_by_manager.total" not in listed and "sales.total" in listed
    assert "sales.total_3m" not in listed  # public: false
    assert {"sales.sold_on", "sales.rep"} <= set(listed["sales.total"].dimensions)
    assert listed["customers_view.count"].dimensions == [  # sales: across one-to-many
        "customers_view.country", "customers_view.sales_sold_on"]
    assert {"buyers.country", "sales.sold_on", "reps.last_name"} <= set(
        listed["buyers.count"].dimensions)  # a cube's own metric too, either way
    assert "sales.id" not in listed["sales.total"].dimensions  # a primary key is private
    assert model is not None
    assert sorted((p.name, p.reason) for p in model.problems if p.kind == "view") == [
        ("sales", "a cube is named 'sales' too"),
        ("wrong_member", "member 'totl' of 'sales' is unknown"),
        ("wrong_path", "join_path 'sales.clients' names unknown cube 'clients'")]
    assert sorted((p.name, p.reason) for p in model.problems if p.kind == "cube") == [
        ("loop_a", "extends itself: loop_a -> loop_b -> loop_a"),
        ("loop_b", "extends itself: loop_b -> loop_a -> loop_b"),
        ("odd", "dimension 'x': {buyers.nothing} is not a dimension or measure of a cube"),
        ("odd", "dimension 'y': {sales.total} per row needs the cube's primary key (one "
                "dimension with primary_key: true)"),
        ("odd", "dimension 'z': {sales.total} is a measure: a dimension reads it per row "
                "with sub_query: true"),
        ("orphan", "extends unknown cube 'nowhere'")]


def as_javascript(document: dict[str, Any]) -> str:
    """A Cube YAML document written as Cube's JavaScript model: ``cube(`name`, {...})`` calls,
    members as objects keyed by name, ``{CUBE}`` as ``${CUBE}`` in template strings."""

    def js(value: Any, key: str = "") -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            if key in ("extends", "join_path"):
                return value  # a bare name, as JavaScript models write them
            return "`" + re.sub(r"\{(\s*[A-Za-z_][\w.]*\s*)\}", r"${\1}", value) + "`"
        if isinstance(value, int | float):
            return repr(value)
        if isinstance(value, list) and key in ("measures", "dimensions", "segments", "joins"):
            return "{" + ", ".join(f"{m['name']}: " + js({k: v for k, v in m.items()
                                                          if k != "name"}) for m in value) + "}"
        if isinstance(value, list):
            return "[" + ", ".join(js(item) for item in value) + "]"
        return "{" + ", ".join(f"{k}: {js(v, k)}" for k, v in value.items()) + "}"

    return "\n".join(f"{kind}(`{entry['name']}`, "
                     f"{js({k: v for k, v in entry.items() if k != 'name'})});"
                     for key, kind in (("cubes", "cube"), ("views", "view"))
                     for entry in document.get(key) or [])


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)  # reading the file, not the SQL
def test_a_cube_model_in_javascript_reads_as_in_yaml(chinook: SampleDb, tmp_path: Path) -> None:
    """The same model as JavaScript (``cube(...)`` calls): the same metrics, problems and SQL;
    a member computed by code is left out alone, and a file that is not JavaScript named."""
    snake = write_model(tmp_path / "yaml" / "semantic.yml", CUBE, chinook.naming)
    script = as_javascript(yaml.safe_load(snake.read_text(encoding="utf-8")))
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "model.js").write_text(
        "// a comment, and code that makes no cube\nconst rate = 1.2;\n" + script.replace(
            "measures: {", "measures: {computed: {sql: `${FILTER_PARAMS.sales.x.filter('y')}`, "
                           "type: `sum`}, ", 1), encoding="utf-8")
    (tmp_path / "js" / "broken.js").write_text("cube(`oops`, {sql: `x`", encoding="utf-8")
    build_cache(chinook.config, tmp_path / "data")
    answers = [cube_answers(chinook.config, tmp_path, tmp_path / name) for name in ("yaml", "js")]
    (metrics, problems, sql), (js_metrics, js_problems, js_sql) = answers
    assert js_metrics == metrics and js_sql == sql
    assert sorted(set(js_problems) - set(problems)) == [
        "line 1: not valid JavaScript (Unexpected end of input)",
        "line 3: a value computed by code (CallExpression); nl2sql reads literal values only"]
    broken = load_semantic_model(tmp_path / "js").broken("tracks.computed")  # asked by name
    assert broken is not None and broken.reason.startswith("line 3: a value computed by code")
