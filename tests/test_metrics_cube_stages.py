"""Cube's multi-stage calculations (``multi_stage: true`` with ``time_shift`` to the year
before, ``reduce_by``, ``group_by``) were read as plain members: the prior year's count
answered this year's under its name. A ``time_shift`` is compiled now (the count a year earlier,
or later with ``type: next``); the others are named problems, and the cube's other members keep
working. A ``sub_query`` dimension (a customer's number of orders, ``{orders.count}``), once a
named problem, is that measure per row of its cube."""

from __future__ import annotations

from pathlib import Path

from nl2sql.operations.metrics import metrics_list_op, metrics_query_op
from nl2sql.operations.ops_context import OpsContext

CUBES = """
cubes:
  - name: orders
    sql_table: orders
    dimensions:
      - {name: order_id, sql: order_id, type: number, primary_key: true}
      - {name: status, sql: status, type: string}
      - {name: ordered_at, sql: ordered_at, type: time}
      - {name: lifetime_orders, sql: "{count} + 1", type: number, subQuery: true}
      - {name: customer_id, sql: customer_id, type: number}
    joins:
      - name: customers
        relationship: many_to_one
        sql: "{CUBE}.customer_id = {customers}.customer_id"
    measures:
      - {name: count, type: count}
      - name: count_prior_year
        type: number
        sql: "{count}"
        multi_stage: true
        time_shift: [{time_dimension: ordered_at, interval: 1 year, type: prior}]
      - name: count_next_month
        type: number
        sql: "{count}"
        multiStage: true
        timeShift: {interval: 1 month, type: next}
      - {name: count_share, type: number, sql: "{count}", multiStage: true, reduceBy: [status]}
      - {name: count_twice, type: number, sql: "{count} * 2"}
      - name: count_by_calendar
        type: number
        sql: "{count}"
        multi_stage: true
        time_shift: [{name: retail_year}]
  - name: customers
    sql_table: customers
    dimensions:
      - {name: customer_id, sql: customer_id, type: number, primary_key: true}
      - {name: country, sql: country, type: string}
      - {name: order_count, sql: "{orders.count}", type: number, sub_query: true,
         title: Orders placed}
      - {name: orders_doubled, sql: "{orders.count_twice}", type: number, sub_query: true}
    measures:
      - {name: count, type: count}
"""


def test_multi_stage_members_are_named_not_read_as_plain_ones(bookstore_ops: OpsContext,
                                                              tmp_path: Path) -> None:
    (tmp_path / "cubes.yml").write_text(CUBES)
    config = bookstore_ops.config("bookstore").model_copy(update={"semantic_model": tmp_path})
    bookstore_ops.configs.databases["bookstore"] = config
    listed = metrics_list_op(bookstore_ops, "bookstore")
    assert sorted(m.name for m in listed.metrics) == [
        "customers.count", "orders.count", "orders.count_next_month", "orders.count_prior_year",
        "orders.count_twice"]
    problems = "\n".join(listed.problems)
    assert "count_share" in problems and "multi_stage, reduce_by: multi-stage calculations " \
                                         "are not compiled" in problems, problems
    assert "count_by_calendar" in problems and "a named shift (a calendar's) is not compiled" \
        in problems, problems
    assert "lifetime_orders" in problems and "{count} is a measure within an expression " \
        in problems
    result = metrics_query_op(bookstore_ops, "bookstore", ["orders.count"], ["orders.status"])
    assert result.row_count > 1

    def counts(metric: str, grain: str) -> dict[str, int | None]:
        result = metrics_query_op(bookstore_ops, "bookstore", [metric],
                                  [f"orders.ordered_at.{grain}"])
        rows = (bookstore_ops.workspace / result.csv_filename).read_text().splitlines()[1:]
        return {period: int(value) if value else None
                for period, value in (row.split(",") for row in rows)}

    years = counts("orders.count", "year")
    assert len(years) > 1
    assert counts("orders.count_prior_year", "year") == {
        year: years.get(f"{int(year[:4]) - 1}{year[4:]}") for year in years}
    months = counts("orders.count", "month")

    def next_month(month: str) -> str:
        year, number = int(month[:4]), int(month[5:7])
        return f"{year + number // 12}-{number % 12 + 1:02d}-01"

    assert counts("orders.count_next_month", "month") == {
        month: months.get(next_month(month)) for month in months}


def test_a_sub_query_dimension_is_its_measure_per_row(bookstore_ops: OpsContext,
                                                      tmp_path: Path) -> None:
    """"Customers by how many orders they placed": ``customers.order_count`` is
    ``{orders.count}`` per customer, as a group-by of the customers' count and, through the
    join, of the orders' own count (joined from each order to its customer)."""
    (tmp_path / "cubes.yml").write_text(CUBES)
    config = bookstore_ops.config("bookstore").model_copy(update={"semantic_model": tmp_path})
    bookstore_ops.configs.databases["bookstore"] = config
    assert "customers.order_count" in next(
        m for m in metrics_list_op(bookstore_ops, "bookstore").metrics
        if m.name == "customers.count").dimensions

    def rows(metric: str, by: str = "customers.order_count") -> dict[str, int]:
        result = metrics_query_op(bookstore_ops, "bookstore", [metric], [by])
        lines = (bookstore_ops.workspace / result.csv_filename).read_text().splitlines()[1:]
        return {key: int(value) for key, value in (line.split(",") for line in lines)}

    per_customer = metrics_query_op(bookstore_ops, "bookstore", ["orders.count"],
                                    ["customers.customer_id"])
    lines = (bookstore_ops.workspace / per_customer.csv_filename).read_text().splitlines()[1:]
    counts = [int(line.split(",")[1]) for line in lines if line.split(",")[0]]
    histogram = {str(n): counts.count(n) for n in set(counts)}
    customers = rows("customers.count")
    assert {k: v for k, v in customers.items() if k} == histogram
    assert customers.get("", 0) > 0  # customers without an order: no count to group by
    assert rows("orders.count") == {str(n): n * histogram[str(n)] for n in set(counts)}
    doubled = rows("customers.count", "customers.orders_doubled")  # a number measure per row
    assert {k: v for k, v in doubled.items() if k} == {str(2 * n): histogram[str(n)]
                                                       for n in set(counts)}
