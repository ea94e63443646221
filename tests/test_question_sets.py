"""The bundled question sets: well formed, and every gold query runs and returns rows on its
database through the read-only path, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from conftest import SampleDb, spark_config
from nl2sql.config.registry import DbConnectionConfig
from nl2sql.db.base import create_connection, create_operations
from nl2sql.schema.models import DbInfo
from nl2sql.config.bundled import question_set_names, question_set_path

BASE_SETS = ["bookstore", "chinook", "northwind"]
CATEGORIES = {"count", "aggregate", "value_filter", "join", "group_by", "group_having", "top_n",
              "date", "subquery"}


def _read(name: str) -> list[dict[str, Any]]:
    path = question_set_path(name)
    assert path is not None, f"no bundled question set {name!r}"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _golds(item: dict[str, Any]) -> list[str]:
    query = item["query"]
    return query if isinstance(query, list) else [query]


def test_bundled_sets_are_listed() -> None:
    assert set(question_set_names()) >= {"bookstore", "chinook", "chinook_postgres",
                                         "chinook_spark", "northwind", "northwind_postgres"}


def test_sets_are_well_formed_and_big_enough() -> None:
    total, ids = 0, set()
    for name in BASE_SETS:
        items = _read(name)
        assert len(items) >= 20
        for item in items:
            assert set(item) == {"id", "db_id", "question", "query", "category"}
            assert item["db_id"] == name and item["category"] in CATEGORIES
            assert item["id"] not in ids
            ids.add(item["id"])
            assert item["question"].strip() and all(g.strip() for g in _golds(item))
        total += len(items)
        assert {i["category"] for i in items} >= {"count", "join", "value_filter", "top_n",
                                                  "date", "group_having"}
    assert total >= 60


@pytest.mark.parametrize("name", ["chinook", "northwind"])
def test_postgres_variant_asks_the_same_questions(name: str) -> None:
    base, variant = _read(name), _read(f"{name}_postgres")
    strip = [{k: v for k, v in item.items() if k != "query"} for item in base]
    assert strip == [{k: v for k, v in item.items() if k != "query"} for item in variant]
    # the variant really is rewritten: no PascalCase table names left
    assert all("InvoiceLine" not in g and "OrderID" not in g
               for item in variant for g in _golds(item))


@pytest.mark.parametrize("name", ["chinook", "northwind"])
def test_spark_variant_asks_the_same_questions_in_spark_sql(name: str) -> None:
    """Spark has no ``strftime``, and reads ``"Order Details"`` as a string (its table is
    ``order_details``): the variant asks the same with Spark's functions and names."""
    base, variant = _read(name), _read(f"{name}_spark")
    strip = [{k: v for k, v in item.items() if k != "query"} for item in base]
    assert strip == [{k: v for k, v in item.items() if k != "query"} for item in variant]
    assert all("strftime" not in g and '"' not in g for item in variant for g in _golds(item))


class _Rows:
    def __init__(self) -> None:
        self.rows: list[Sequence[Any]] = []

    def begin(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.rows.extend(rows)


def _assert_golds_return_rows(config: DbConnectionConfig, set_name: str) -> None:
    items = _read(set_name)
    connection = create_connection(config)
    operations = create_operations(connection, DbInfo(db_id=config.db_id,
                                                      db_type=config.type.value))
    empty = []
    try:
        for item in items:
            for gold in _golds(item):
                sink = _Rows()
                operations.execute_select_query(gold, sink, timeout_seconds=20)
                if not sink.rows:
                    empty.append(item["id"])
    finally:
        connection.dispose()
    assert not empty, f"gold queries without rows: {empty}"


def _set_for(sample: SampleDb, name: str) -> str:
    return f"{name}_postgres" if sample.backend == "postgres" else name


def test_chinook_golds_run(chinook: SampleDb) -> None:
    _assert_golds_return_rows(chinook.config, _set_for(chinook, "chinook"))


def test_northwind_golds_run(northwind: SampleDb) -> None:
    _assert_golds_return_rows(northwind.config, _set_for(northwind, "northwind"))


def test_bookstore_golds_run(bookstore_db: SampleDb) -> None:
    _assert_golds_return_rows(bookstore_db.config, "bookstore")


@pytest.mark.spark
@pytest.mark.slow
def test_spark_golds_run(spark_server, spark_northwind: str) -> None:  # noqa: ANN001
    """Northwind's Spark golds (Chinook's run in tests/test_eval.py, scored by nl2sql-eval)."""
    _assert_golds_return_rows(spark_config("northwind", spark_server.remote, spark_northwind,
                                           query_timeout_seconds=60), "northwind_spark")
