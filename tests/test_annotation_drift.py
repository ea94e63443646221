"""Drift between a live schema and the cache (``annotate-schema --check``), on hand-built
schemas: structure changes are drift, descriptions and row counts are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SampleDb, add_column
from nl2sql.annotation.drift import check_drift, compare_schemas
from nl2sql.schema.cache import save_db_info
from nl2sql.db.base import create_connection
from nl2sql.errors import SchemaCacheMissingError
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.schema.models import ColumnInfo, DbInfo, ForeignKeyInfo, TableInfo


def _db(*tables: TableInfo) -> DbInfo:
    return DbInfo(db_id="shop", db_type="sqlite", tables=list(tables))


def _orders(**changes: object) -> TableInfo:
    columns = [ColumnInfo(name="id", data_type="INTEGER", nullable=False, is_primary_key=True),
               ColumnInfo(name="status", data_type="TEXT"),
               ColumnInfo(name="customer_id", data_type="INTEGER")]
    table = TableInfo(name="orders", columns=columns, row_count=10, foreign_keys=[
        ForeignKeyInfo(columns=["customer_id"], referenced_table="customers",
                       referenced_columns=["id"])])
    return table.model_copy(update=changes, deep=True)


def _customers() -> TableInfo:
    return TableInfo(name="customers", columns=[
        ColumnInfo(name="id", data_type="INTEGER", is_primary_key=True)])


def test_identical_structure_is_no_drift_even_with_new_descriptions_and_counts() -> None:
    cached = _db(_orders(), _customers())
    live = _db(_orders(row_count=99, description="Orders."), _customers())
    drift = compare_schemas(live, cached)
    assert not drift.has_drift
    assert drift.lines() == ["shop: no drift: the cache matches the live schema."]


def test_added_removed_and_changed_tables_and_columns_are_listed() -> None:
    cached = _db(_orders(), _customers())
    live_orders = _orders()
    live_orders.columns.append(ColumnInfo(name="channel", data_type="TEXT"))
    live_orders.columns[1] = ColumnInfo(name="status", data_type="VARCHAR(20)", nullable=False)
    live_orders.foreign_keys = []
    live = _db(live_orders, TableInfo(name="returns", columns=[
        ColumnInfo(name="order_id", data_type="INTEGER")]))
    drift = compare_schemas(live, cached)
    assert drift.has_drift
    assert drift.added_tables == ["returns"] and drift.removed_tables == ["customers"]
    [orders] = drift.changed_tables
    assert orders.added_columns == ["channel"] and orders.removed_columns == []
    assert orders.changed_columns == ["status: type TEXT -> VARCHAR(20)", "status: now NOT NULL"]
    assert orders.other_changes == ["foreign key removed: (customer_id) -> customers(id)"]
    text = "\n".join(drift.lines())
    assert "+ table returns" in text and "- table customers" in text
    assert "+ column channel" in text and "annotate-schema shop" in text


def test_removed_column_is_drift() -> None:
    live_orders = _orders()
    del live_orders.columns[2]
    drift = compare_schemas(_db(live_orders), _db(_orders()))
    assert drift.changed_tables[0].removed_columns == ["customer_id"]



def test_live_drift_afteradd_column(chinook: SampleDb, tmp_path: Path) -> None:
    with create_connection(chinook.config) as connection:
        save_db_info(DbSchemaExtractor(connection).extract("chinook"), tmp_path)
        assert not check_drift(connection, tmp_path).has_drift
    add_column(chinook, chinook.table("album"), "label")
    with create_connection(chinook.config) as connection:
        drift = check_drift(connection, tmp_path)
    assert drift.has_drift and not drift.added_tables and not drift.removed_tables
    [album] = drift.changed_tables
    assert (album.name, album.added_columns) == (chinook.table("album"), ["label"])


def test_check_without_cache_says_to_annotate_first(chinook: SampleDb, tmp_path: Path) -> None:
    with create_connection(chinook.config) as connection:
        with pytest.raises(SchemaCacheMissingError, match="annotate-schema chinook"):
            check_drift(connection, tmp_path)
