"""A semantic model that is not shipped with nl2sql, written here: Northwind with its own names
(``sale``, ``client``, ``order_lines`` over the table ``Order Details``), a ratio of two measures
from different tables, a ratio over a measure without a time dimension, a derived metric with an
offset window, a trailing-window cumulative, a filter two joins away; and a Cube model of the
same tables with joins both ways and a measure filter. Each equals SQL written by hand (with
other techniques: LAG, a window frame, CTEs) on SQLite and DuckDB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import SampleDb, build_cache, sample_fixture, write_dbs_yaml
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.evaluation.scoring import run_query
from nl2sql.operations.metrics import metrics_query_op
from nl2sql.operations.ops_context import OpsContext
from nl2sql.workspace.result_compare import compare_results

northwind = sample_fixture("northwind", ["sqlite", "duckdb"])

DBT = """
semantic_models:
  - name: order_lines
    model: ref('Order Details')
    primary_entity: order_line
    defaults: {agg_time_dimension: sale__placed_on}
    entities:
      - {name: sale, type: foreign, expr: OrderID}
      - {name: product, type: foreign, expr: ProductID}
    measures:
      - {name: net_sales, agg: sum, expr: "UnitPrice * Quantity * (1 - Discount)"}
      - {name: line_count, agg: count, expr: 1}
  - name: sales
    model: ref('Orders')
    defaults: {agg_time_dimension: placed_on}
    entities:
      - {name: sale, type: primary, expr: OrderID}
      - {name: client, type: foreign, expr: CustomerID}
    dimensions:
      - {name: placed_on, type: time, expr: OrderDate, type_params: {time_granularity: day}}
      - {name: ship_country, type: categorical, expr: ShipCountry}
    measures:
      - {name: freight_total, agg: sum, expr: Freight}
  - name: clients
    model: ref('Customers')
    entities:
      - {name: client, type: primary, expr: CustomerID}
    dimensions:
      - {name: country, type: categorical, expr: Country}
    measures:
      - {name: client_count, agg: count, expr: CustomerID}
  - name: items
    model: ref('Products')
    entities:
      - {name: product, type: primary, expr: ProductID}
      - {name: category, type: foreign, expr: CategoryID}
  - name: kinds
    model: ref('Categories')
    entities:
      - {name: category, type: primary, expr: CategoryID}
    dimensions:
      - {name: label, type: categorical, expr: CategoryName}
metrics:
  - {name: sales_amount, type: simple, type_params: {measure: net_sales}}
  - {name: freight, type: simple, type_params: {measure: freight_total}}
  - name: freight_share
    description: Freight per unit of net sales.
    type: ratio
    type_params: {numerator: freight, denominator: sales_amount}
  - {name: clients_known, type: simple, type_params: {measure: client_count}}
  - name: sales_per_client
    type: ratio
    type_params: {numerator: sales_amount, denominator: clients_known}
  - name: sales_growth
    type: derived
    type_params:
      expr: (sales_amount - last_month) / last_month
      metrics:
        - {name: sales_amount}
        - {name: sales_amount, alias: last_month, offset_window: 1 month}
  - name: beverage_sales
    type: simple
    type_params: {measure: net_sales}
    filter: "{{ Dimension('category__label') }} = 'Beverages'"
  - name: trailing_sales
    type: cumulative
    type_params: {measure: net_sales, window: 3 months, period_agg: last}
"""

CUBE = """
cubes:
  - name: shipments
    sql_table: Orders
    joins:
      - {name: buyers, relationship: belongs_to, sql: "{CUBE}.CustomerID = {buyers}.CustomerID"}
    dimensions:
      - {name: id, sql: OrderID, type: number, primary_key: true}
      - {name: placed, sql: OrderDate, type: time}
  - name: lines
    sql_table: Order Details
    joins:
      - {name: shipments, relationship: many_to_one, sql: "{CUBE.OrderID} = {shipments.id}"}
    dimensions:
      - {name: discounted, sql: "CASE WHEN {CUBE}.Discount > 0 THEN 'yes' ELSE 'no' END", type: string}
    measures:
      - {name: net, sql: "UnitPrice * Quantity * (1 - Discount)", type: sum}
      - {name: discounted_net, sql: "UnitPrice * Quantity * (1 - Discount)", type: sum,
         filters: [{sql: "{CUBE}.Discount > 0"}]}
      - {name: discounted_share, type: number, sql: "1.0 * {discounted_net} / {net}"}
  - name: buyers
    sql_table: Customers
    dimensions:
      - {name: id, sql: CustomerID, type: string, primary_key: true}
      - {name: country, sql: Country, type: string}
"""

MONTH = {"sqlite": "strftime('%Y-%m-01', {})", "duckdb": "CAST(date_trunc('month', {}) AS DATE)"}
YEAR = {"sqlite": "strftime('%Y-01-01', {})", "duckdb": "CAST(date_trunc('year', {}) AS DATE)"}
NET = "d.UnitPrice * d.Quantity * (1 - d.Discount)"

CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("a ratio of measures from two tables", "dbt",
     {"metrics": ["freight_share"], "dimensions": ["client__country"]},
     f"""WITH f AS (SELECT c.Country AS country, SUM(o.Freight) AS freight FROM Orders o
                    LEFT JOIN Customers c ON c.CustomerID = o.CustomerID GROUP BY c.Country),
              s AS (SELECT c.Country AS country, SUM({NET}) AS net FROM "Order Details" d
                    JOIN Orders o ON o.OrderID = d.OrderID
                    LEFT JOIN Customers c ON c.CustomerID = o.CustomerID GROUP BY c.Country)
         SELECT f.country, f.freight / s.net FROM f JOIN s ON f.country IS NOT DISTINCT FROM s.country"""),
    ("a ratio over a measure without time", "dbt",
     {"metrics": ["sales_per_client", "clients_known"], "dimensions": ["client__country"]},
     f"""WITH n AS (SELECT Country AS country, COUNT(*) AS clients FROM Customers GROUP BY Country),
              s AS (SELECT c.Country AS country, SUM({NET}) AS net FROM "Order Details" d
                    JOIN Orders o ON o.OrderID = d.OrderID
                    LEFT JOIN Customers c ON c.CustomerID = o.CustomerID GROUP BY c.Country)
         SELECT n.country, s.net / n.clients, n.clients FROM n
         LEFT JOIN s ON s.country IS NOT DISTINCT FROM n.country"""),
    ("a derived metric with an offset window", "dbt",
     {"metrics": ["sales_growth"], "dimensions": ["metric_time__month"]},
     f"""SELECT m, (net - LAG(net) OVER (ORDER BY m)) / LAG(net) OVER (ORDER BY m) FROM (
           SELECT {{month}} AS m, SUM({NET}) AS net FROM "Order Details" d
           JOIN Orders o ON o.OrderID = d.OrderID GROUP BY {{month}}) AS per_month"""),
    ("a filter two joins away", "dbt",
     {"metrics": ["beverage_sales"], "dimensions": ["metric_time__year"]},
     f"""SELECT {{year}}, SUM({NET}) FROM "Order Details" d JOIN Orders o ON o.OrderID = d.OrderID
         JOIN Products p ON p.ProductID = d.ProductID JOIN Categories k ON k.CategoryID = p.CategoryID
         WHERE k.CategoryName = 'Beverages' GROUP BY {{year}}"""),
    ("a trailing three-month window", "dbt",
     {"metrics": ["trailing_sales"], "dimensions": ["metric_time__month"]},
     f"""SELECT {{month}}, SUM(SUM({NET})) OVER (ORDER BY {{month}} ROWS BETWEEN 2 PRECEDING
         AND CURRENT ROW) FROM "Order Details" d JOIN Orders o ON o.OrderID = d.OrderID
         GROUP BY {{month}}"""),
    ("Cube: joins, a measure filter, a number measure", "cube",
     {"metrics": ["lines.discounted_share", "lines.net"], "dimensions": ["buyers.country"],
      "where": ["shipments.placed.year = '1997-01-01'"], "order_by": ["-lines.net"],
      "limit": 5},
     f"""SELECT c.Country, SUM(CASE WHEN d.Discount > 0 THEN {NET} END) / SUM({NET}), SUM({NET})
         FROM "Order Details" d JOIN Orders o ON o.OrderID = d.OrderID
         LEFT JOIN Customers c ON c.CustomerID = o.CustomerID
         WHERE {{year}} = '1997-01-01' GROUP BY c.Country ORDER BY 3 DESC LIMIT 5"""),
]


@pytest.fixture
def northwind_ops(northwind: SampleDb, tmp_path: Path):  # noqa: ANN201
    (tmp_path / "models" / "dbt").mkdir(parents=True)
    (tmp_path / "models" / "cube").mkdir(parents=True)
    (tmp_path / "models" / "dbt" / "semantic.yml").write_text(DBT)
    (tmp_path / "models" / "cube" / "cubes.yaml").write_text(CUBE)
    build_cache(northwind.config, tmp_path / "data")
    entry = northwind.config.model_copy(update={"semantic_model": tmp_path / "models"})
    ops = OpsContext(DbConnectionConfigs.load(write_dbs_yaml(tmp_path, [entry]),
                                              data_dir=tmp_path / "data",
                                              workspace=tmp_path / "workspace"))
    yield ops
    ops.close()


def test_a_model_not_shipped_equals_hand_written_sql(northwind: SampleDb,
                                                     northwind_ops: OpsContext) -> None:
    date = "o.OrderDate"
    failures = []
    for name, _kind, query, gold in CASES:
        result = metrics_query_op(northwind_ops, "northwind", **query)
        sql = gold.replace("{month}", MONTH[northwind.backend].format(date)).replace(
            "{year}", YEAR[northwind.backend].format(date))
        ours = run_query(northwind_ops, "northwind", result.sql_query, timeout=60, max_rows=5000)
        theirs = run_query(northwind_ops, "northwind", sql, timeout=60, max_rows=5000)
        assert theirs.error is None, (name, theirs.error)
        assert ours.error is None and len(ours.rows) == result.row_count > 2, (name, ours.error)
        comparison = compare_results(theirs.rows, ours.rows)
        if not comparison.equal:
            failures.append(f"{name}: {comparison.reason}\n{result.sql_query}")
    assert not failures, "\n\n".join(failures)
