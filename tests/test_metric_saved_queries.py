"""dbt's ``saved_queries:``: a team's vetted metric queries by name (metrics, group-bys,
filters, order, limit). nl2sql reads them (YAML and the manifest's JSON), checks each at
``annotate-schema`` (compiled and run for zero rows; a broken one is one line), lists them in
``metrics_list`` as ready ``metrics_query`` arguments, and shows the ones a question asks for
to the model; those arguments run and give the governed answer."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from nl2sql.config.bundled import bookstore_script_path, bookstore_semantic_model_path
from nl2sql.agents.instructions import metrics_lines
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.context_engine.engine import ContextEngine
from nl2sql.operations.metrics import metrics_list_op, metrics_query_op
from nl2sql.operations.ops_context import OpsContext
from nl2sql.web import build_app

ANNOTATE = Path(sys.executable).parent / "annotate-schema"

SAVED = """
saved_queries:
  - name: monthly_revenue_by_country
    label: Monthly revenue by country
    description: >
      Revenue and orders per customer country and month, paid and later orders only.
    query_params:
      metrics: [revenue, order_count]
      group_by:
        - TimeDimension('metric_time', 'month')
        - "Dimension('customer__country')"
      where:
        - "{{ Dimension('order__status') }} != 'pending'"
      order_by:
        - TimeDimension('metric_time', 'month')
        - Metric('revenue').descending(True)
      limit: 500
  - name: top_genres
    label: Best-selling genres
    query_params:
      metrics: [books_sold]
      group_by: ["Dimension('book__genre')"]
      order_by: ["Metric('books_sold').descending(True)"]
      limit: 5
  - name: lost_metric
    query_params: {metrics: [profit]}
  - name: bad_filter
    query_params:
      metrics: [revenue]
      where: ["{{ Metric('revenue') }} > 10"]
  - name: unknown_column
    query_params:
      metrics: [revenue]
      where: ["{{ Dimension('customer__country') }} = shoe_size"]
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpsContext]:
    """The bookstore with its semantic model and the saved queries, annotated once."""
    tmp_path = tmp_path_factory.mktemp("saved")
    with sqlite3.connect(tmp_path / "shop.db") as conn:
        conn.executescript(bookstore_script_path().read_text())
    models = tmp_path / "models"
    models.mkdir()
    (models / "bookstore.yml").write_text(bookstore_semantic_model_path().read_text())
    (models / "saved.yml").write_text(SAVED)
    (tmp_path / "dbs.yaml").write_text("databases:\n  shop:\n    type: sqlite\n"
                                       "    path: shop.db\n    semantic_model: models\n")
    done = subprocess.run([str(ANNOTATE), "shop", "--config", str(tmp_path / "dbs.yaml"),
                           "--data-dir", str(tmp_path / "data")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    ctx = OpsContext(DbConnectionConfigs.load(tmp_path / "dbs.yaml", data_dir=tmp_path / "data",
                                              workspace=tmp_path / "ws"))
    ctx.annotate_output = done.stdout  # type: ignore[attr-defined]
    yield ctx
    ctx.close()


def test_saved_queries_are_checked_listed_and_run(shop: OpsContext) -> None:
    output = shop.annotate_output  # type: ignore[attr-defined]
    assert "saved queries: 2 of 5 run" in output
    assert "saved query 'lost_metric': Unknown metric 'profit'" in output
    assert "saved query 'bad_filter': the filter" in output and \
        "Metric() takes a metric's name and group_by: one entity" in output
    assert "saved query 'unknown_column':" in output
    listed = metrics_list_op(shop, "shop")
    assert [q.name for q in listed.saved_metric_queries] == [
        "monthly_revenue_by_country", "top_genres", "unknown_column"]
    monthly = listed.saved_metric_queries[0]
    assert (monthly.dimensions, monthly.where, monthly.order_by, monthly.limit) == (
        ["metric_time__month", "customer__country"], ["order__status != 'pending'"],
        ["metric_time__month", "-revenue"], 500)
    assert monthly.description == ("Revenue and orders per customer country and month, paid "
                                   "and later orders only.")
    assert 'metrics_query(metrics=["revenue", "order_count"], dimensions=["metric_time__month",' \
           in listed.render()

    # The arguments run as they are: the governed answer, ordered as saved.
    top = listed.saved_metric_queries[1]
    result = metrics_query_op(shop, "shop", top.metrics, top.dimensions, top.where,
                              top.order_by, top.limit)
    rows = (shop.workspace_root / result.csv_filename).read_text().splitlines()
    assert rows[0] == "book__genre,books_sold" and 1 < len(rows) <= 6
    sold = [int(line.split(",")[1]) for line in rows[1:]]
    assert sold == sorted(sold, reverse=True)


@pytest.mark.parametrize("question, expected", [
    ("Show me the monthly revenue by country", "monthly_revenue_by_country"),
    ("Which genres are best-selling?", "top_genres"),
])
def test_a_question_gets_the_saved_query_it_names(shop: OpsContext, question: str,
                                                  expected: str) -> None:
    context = ContextEngine(shop.registry).context(question, db_id="shop")
    assert context.saved_metric_queries and context.saved_metric_queries[0].name == expected
    assert context.saved_metric_queries[0].matched
    assert f"- {expected}" in context.render() and "metrics_query(metrics=" in context.render()
    assert context.used().saved_metric_queries[0].name == expected
    prompt = metrics_lines(context)  # what the agent's model reads
    assert f"- {expected}" in prompt and "metrics_query(metrics=" in prompt
    unrelated = ContextEngine(shop.registry).context("List the authors' names", db_id="shop")
    assert unrelated.saved_metric_queries == []


def test_the_manifest_spelling_is_read(tmp_path: Path) -> None:
    """``semantic_manifest.json`` keeps saved queries with ``where: {where_filters: [...]}``."""
    from nl2sql.semantic.dbt import read_saved_queries

    manifest = {"saved_queries": [{
        "name": "by_country", "description": "Revenue by country", "label": None,
        "query_params": {"metrics": ["revenue"], "group_by": ["Dimension('customer__country')"],
                         "where": {"where_filters": [
                             {"where_sql_template": "{{ Dimension('customer__country') }} "
                                                    "= 'Germany'"}]},
                         "order_by": [], "limit": None}}]}
    queries, problems = read_saved_queries(json.loads(json.dumps(manifest)), tmp_path / "m.json")
    assert problems == []
    [query] = queries
    assert (query.metrics, query.group_by, query.where) == (
        ("revenue",), ("customer__country",), ("customer__country = 'Germany'",))


async def test_the_web_page_offers_each_saved_query_to_run(shop: OpsContext) -> None:
    """A person who does not write code finds the team's saved queries on the database's page,
    each opening on the SQL page compiled (or saying why it cannot be), and runs it there."""
    folder = shop.registry.config_path.parent
    app = build_app(folder / "dbs.yaml", data_dir=folder / "data", workspace=folder / "web")
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app),
                                  base_url="http://127.0.0.1") as http:
        page = (await http.get("/schema/shop.json")).json()
        saved = {q["name"]: q for q in page["saved_metric_queries"]}
        assert list(saved) == ["monthly_revenue_by_country", "top_genres", "unknown_column"]
        top = saved["top_genres"]
        assert top["label"] == "Best-selling genres" and top["problem"] is None
        html = (await http.get("/schema/shop")).text
        link = re.search(r'<a href="(/sql\?[^"]+)">Open in SQL</a>', html)
        assert "Best-selling genres" in html and link is not None
        opened = parse_qs(urlsplit(link.group(1).replace("&amp;", "&")).query)
        assert opened["db_id"] == ["shop"] and opened["sql"] == [
            saved["monthly_revenue_by_country"]["sql"]]
        form = (await http.get(link.group(1).replace("&amp;", "&"))).text
        assert "metric_time__month" in form  # the SQL page shows the compiled query to run
        ran = await http.post("/sql", data={"db_id": "shop", "sql": top["sql"]})
        result = json.loads(ran.text.splitlines()[-1])["result"]
    expected = metrics_query_op(shop, "shop", ["books_sold"], ["book__genre"],
                                order_by=["-books_sold"], limit=5)
    rows = (shop.workspace_root / expected.csv_filename).read_text().splitlines()
    assert result["row_count"] == len(rows) - 1
    assert result["result"]["rows"][0][0] == rows[1].split(",")[0]
