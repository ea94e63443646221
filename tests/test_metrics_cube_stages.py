"""Cube's multi-stage calculations (``multi_stage: true`` with ``time_shift`` to the year
before, ``reduce_by``, ``group_by``) were read as plain members: the prior year's count
answered this year's under its name. Each is a named problem now (as a ``sub_query`` dimension
already was), and the cube's other members keep working."""

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
      - {name: lifetime_orders, sql: "{count}", type: number, subQuery: true}
    measures:
      - {name: count, type: count}
      - name: count_prior_year
        type: number
        sql: "{count}"
        multi_stage: true
        time_shift: [{time_dimension: ordered_at, interval: 1 year, type: prior}]
      - {name: count_share, type: number, sql: "{count}", multiStage: true, reduceBy: [status]}
"""


def test_multi_stage_members_are_named_not_read_as_plain_ones(bookstore_ops: OpsContext,
                                                              tmp_path: Path) -> None:
    (tmp_path / "cubes.yml").write_text(CUBES)
    config = bookstore_ops.config("bookstore").model_copy(update={"semantic_model": tmp_path})
    bookstore_ops.configs.databases["bookstore"] = config
    listed = metrics_list_op(bookstore_ops, "bookstore")
    assert [m.name for m in listed.metrics] == ["orders.count"]
    problems = "\n".join(listed.problems)
    for member, what in (("count_prior_year", "multi_stage, time_shift"),
                         ("count_share", "multi_stage, reduce_by"),
                         ):
        assert f"{member}" in problems and f"{what}: multi-stage calculations are not " \
                                            f"compiled" in problems, problems
    assert "lifetime_orders" in problems and "{count} is a measure (a sub_query " in problems
    result = metrics_query_op(bookstore_ops, "bookstore", ["orders.count"], ["orders.status"])
    assert result.row_count > 1
