"""The Spark Connect test server: started once, Chinook and Northwind loaded as tables."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.spark


def test_samples_are_loaded(spark_server, spark_chinook, spark_northwind) -> None:
    session = spark_server.session()
    try:
        chinook = {t.name for t in session.catalog.listTables(spark_chinook)}
        northwind = {t.name for t in session.catalog.listTables(spark_northwind)}
        rock = session.sql(
            "SELECT count(*) FROM chinook.track t JOIN chinook.genre g ON t.GenreId = g.GenreId "
            "WHERE g.Name = 'Rock'").collect()[0][0]
        details = session.sql("SELECT count(*) FROM northwind.order_details").collect()[0][0]
    finally:
        session.stop()
    assert len(chinook) == 11 and "invoiceline" in chinook
    assert len(northwind) == 13 and "order_details" in northwind
    assert rock == 1297
    assert details == 2155
