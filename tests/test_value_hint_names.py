"""A value hint is SQL the model copies into its query: its table and column are written as the
schema writes them, quoted where the database needs it. ``Genre.Name = 'Jazz'`` on PostgreSQL
(Chinook's mixed-case tables) reads ``genre.name`` and fails; ``Sales.Unit Price ($)`` is not a
column at all. Each hint below runs as written and finds the row."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import duckdb_config, mysql_db, pg_config
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.config.registry import DbConnectionConfig, DbConnectionConfigs
from nl2sql.context_engine.engine import ContextEngine
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op

PG_SCRIPT = """
CREATE TABLE "Genre" ("GenreId" integer PRIMARY KEY, "Name" text);
INSERT INTO "Genre" VALUES (1, 'Rock'), (2, 'Jazz'), (3, 'Blues');
CREATE SCHEMA "Sales Dept";
CREATE TABLE "Sales Dept".orders (id integer PRIMARY KEY, "order" text);
INSERT INTO "Sales Dept".orders VALUES (1, 'express'), (2, 'standard'), (3, 'standard');
"""

MYSQL_SCRIPT = """
CREATE TABLE `Order Lines` (id int PRIMARY KEY, `select` varchar(20), `Ship Mode` varchar(20));
INSERT INTO `Order Lines` VALUES (1, 'express', 'Air'), (2, 'standard', 'Truck'),
    (3, 'standard', 'Truck');
"""

CSV = """Order ID,Region/Country,Unit Price ($)
1,EU/France,3.5
2,NA/USA,4.0
3,EU/Germany,12.25
"""


@pytest.fixture(params=["postgres", "mysql", "duckdb"])
def odd_names(request: pytest.FixtureRequest, tmp_path: Path,
              make_registry: Callable[..., DbConnectionConfigs]) -> Iterator[OpsContext]:
    config: DbConnectionConfig
    if request.param == "postgres":
        dbname = request.getfixturevalue("pg_database")(script=PG_SCRIPT)
        config = pg_config("odd", dbname, schema=["public", "Sales Dept"])
    elif request.param == "mysql":
        config = mysql_db(request, "odd", script=MYSQL_SCRIPT).config
    else:
        (tmp_path / "exports").mkdir()
        (tmp_path / "exports" / "Sales Report 2024-Q1.csv").write_text(CSV)
        config = duckdb_config("odd", files=[str(tmp_path / "exports" / "*.csv")])
    ops = OpsContext(make_registry(config))
    annotate_database(ops.config("odd"), ops.data_dir)
    yield ops
    ops.close()


QUESTIONS = {
    "postgres": [("How many jazz albums?", "Jazz", 'public."Genre"."Name" = \'Jazz\''),
                 ("Orders shipped express", "express",
                  '"Sales Dept".orders."order" = \'express\'')],
    "mysql": [("Lines shipped express", "express", "`Order Lines`.`select` = 'express'"),
              ("Lines shipped by truck", "Truck", "`Order Lines`.`Ship Mode` = 'Truck'")],
    "duckdb": [("Sales in France", "EU/France",
                'Sales_Report_2024_Q1."Region/Country" = \'EU/France\'')],
}


def test_a_value_hint_runs_as_written(odd_names: OpsContext) -> None:
    db_type = odd_names.config("odd").type
    info = odd_names.db_info("odd")
    for question, value, expected in QUESTIONS[str(db_type)]:
        context = ContextEngine(odd_names.registry).context(question, db_id="odd")
        hint = next(h for h in context.value_hints if h.value == value)
        condition = hint.render().split("  -- ")[0]
        assert condition == expected
        table = info.table(hint.table)
        assert table is not None
        relation = condition.split(" = ")[0].rsplit(".", 1)[0]
        result = db_execute_sql_op(odd_names, "odd",
                                   f"SELECT count(*) AS n FROM {relation} WHERE {condition}")
        rows = (odd_names.workspace_root / result.csv_filename).read_text().split()
        assert int(rows[1]) >= 1, (condition, rows)
