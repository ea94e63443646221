"""MariaDB takes the user's group ``db_role`` for each query (``SET ROLE``), so the database's
own grants decide what the user reads, and the pooled session goes back to its own role after
(a real server, a real login, real roles)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import mysql_admin, mysql_config, write_dbs_yaml

from nl2sql.access import member
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import ConfigError, QueryExecutionError
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op


SCRIPT = """
CREATE TABLE sales (region varchar(8), amount int);
INSERT INTO sales VALUES ('EU', 10), ('EU', 20), ('US', 300);
CREATE TABLE salaries (name varchar(8), amount int);
INSERT INTO salaries VALUES ('ana', 1);
"""


def _admin(*statements: str) -> None:
    conn = mysql_admin()
    try:
        with conn.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)
    finally:
        conn.close()


@pytest.fixture
def server(make_db) -> Iterator[dict[str, Any]]:  # noqa: ANN001
    """A database, a login with no privileges of its own but a default role that reads
    ``salaries``, and a role ``sales`` granted to it that reads only ``sales``."""
    db = make_db("mysql", "shop", script=SCRIPT)
    dbname = db.config.dbname
    tag = uuid.uuid4().hex[:8]
    login, own, sales = f"nl2sql_l_{tag}", f"nl2sql_own_{tag}", f"nl2sql_sales_{tag}"
    _admin(f"CREATE USER `{login}`@`%`", f"CREATE ROLE `{own}`", f"CREATE ROLE `{sales}`",
           f"GRANT SELECT ON `{dbname}`.salaries TO `{own}`",
           f"GRANT SELECT ON `{dbname}`.sales TO `{sales}`",
           f"GRANT `{own}` TO `{login}`@`%`", f"GRANT `{sales}` TO `{login}`@`%`",
           f"SET DEFAULT ROLE `{own}` FOR `{login}`@`%`")
    yield {"dbname": dbname, "login": login, "own": own, "sales": sales}
    _admin(f"DROP USER IF EXISTS `{login}`@`%`", f"DROP ROLE IF EXISTS `{own}`",
           f"DROP ROLE IF EXISTS `{sales}`")


@pytest.fixture
def ops(server: dict[str, Any], tmp_path) -> Iterator[OpsContext]:  # noqa: ANN001
    groups = {"sales": {"databases": ["shop"], "db_role": server["sales"]},
              "all": {"databases": ["*"]},
              "broken": {"databases": ["shop"], "db_role": "nl2sql_no_such_role"}}
    config = mysql_config("shop", server["dbname"], user=server["login"])
    path = write_dbs_yaml(tmp_path, [config], server={"groups": groups})
    context = OpsContext(DbConnectionConfigs.load(path, workspace=tmp_path / "ws"))
    yield context
    context.close()


def _rows(ops: OpsContext, query: str) -> list[list[str]]:
    result = db_execute_sql_op(ops, "shop", query)
    return [line.split(",") for line in
            (ops.workspace_root / result.csv_filename).read_text().splitlines()[1:]]


def test_the_groups_role_decides_what_a_member_reads(ops: OpsContext,
                                                    server: dict[str, Any]) -> None:
    ana = ops.for_caller(member("ana", ["sales"], ops.configs.server), "mcp-http")
    bob = ops.for_caller(member("bob", ["all"], ops.configs.server), "mcp-http")
    for _ in range(2):  # the same pooled session, role and back, twice
        assert _rows(ana, "SELECT CURRENT_ROLE() AS r") == [[server["sales"]]]
        assert _rows(ana, "SELECT region, sum(amount) FROM sales GROUP BY region "
                          "ORDER BY region") == [["EU", "30"], ["US", "300"]]
        with pytest.raises(QueryExecutionError, match="denied.*salaries"):
            db_execute_sql_op(ana, "shop", "SELECT * FROM salaries")
        # No role in the group: the session's own (the login's default role), not ana's.
        assert _rows(bob, "SELECT CURRENT_ROLE() AS r") == [[server["own"]]]
        assert _rows(bob, "SELECT * FROM salaries") == [["ana", "1"]]
        with pytest.raises(QueryExecutionError, match="denied.*sales"):
            db_execute_sql_op(bob, "shop", "SELECT * FROM sales")


def test_a_role_the_login_cannot_take_is_one_sentence(ops: OpsContext,
                                                      server: dict[str, Any]) -> None:
    carl = ops.for_caller(member("carl", ["broken"], ops.configs.server), "cli")
    with pytest.raises(ConfigError, match=f"cannot take the role 'nl2sql_no_such_role'.*GRANT "
                                          f"nl2sql_no_such_role TO {server['login']}"):
        db_execute_sql_op(carl, "shop", "SELECT 1")
    assert _rows(ops, "SELECT CURRENT_ROLE() AS r") == [[server["own"]]]  # still good


@pytest.mark.parametrize("whole_table", [True, False])
def test_annotate_with_a_login_holding_some_columns_of_a_table(
        make_db, tmp_path, caplog: pytest.LogCaptureFixture, whole_table: bool) -> None:  # noqa: ANN001
    """``GRANT SELECT (id, name) ON t``, the way to keep a column (a salary) from a login: the
    server refuses to describe ``t`` to the login (``SHOW CREATE TABLE``, error 1142). Such a
    table was left out whole (and, when every table was one, annotation failed); it is now
    described from the columns the login holds, which are sampled, screened and queried."""
    import logging

    from nl2sql.annotation.pipeline import annotate_database
    from nl2sql.schema.cache import load_db_info
    from nl2sql.schema.formatting import format_schema

    db = make_db("mysql", "shop", script="""
        CREATE TABLE sales (region varchar(8), amount int);
        INSERT INTO sales VALUES ('EU', 10);
        CREATE TABLE salaries (id int PRIMARY KEY, name varchar(8) NOT NULL COMMENT 'login',
                               grade enum('junior', 'senior'), amount decimal(10, 2));
        INSERT INTO salaries VALUES (1, 'ana', 'senior', 91000), (2, 'bo', 'junior', 52000);
    """)
    dbname, login = db.config.dbname, f"nl2sql_c_{uuid.uuid4().hex[:8]}"
    grants = [f"GRANT SELECT (id, name, grade) ON `{dbname}`.salaries TO `{login}`@`%`"]
    if whole_table:
        grants.append(f"GRANT SELECT ON `{dbname}`.sales TO `{login}`@`%`")
    _admin(f"CREATE USER `{login}`@`%`", *grants)
    try:
        config = mysql_config("shop", dbname, user=login)
        with caplog.at_level(logging.WARNING, logger="nl2sql"):
            annotate_database(config, tmp_path)
        assert "left out of the schema" not in caplog.text
        info = load_db_info(tmp_path, "shop")
        assert [t.name for t in info.tables] == (["salaries", "sales"] if whole_table
                                                 else ["salaries"])
        salaries = info.table("salaries")
        assert [c.name for c in salaries.columns] == ["id", "name", "grade"]  # not amount
        assert [c.name for c in salaries.columns if c.is_primary_key] == ["id"]
        name = salaries.column("name")
        assert not name.nullable and name.description == "login"
        assert salaries.column("grade").enum_values == ["junior", "senior"]
        assert salaries.row_count == 2 and "1,ana,senior" in (salaries.sample_data_csv or "")
        shown = format_schema(info).split("CREATE TABLE salaries")[1].split(");")[0]
        assert "grade" in shown and "amount" not in shown
        ops = OpsContext(DbConnectionConfigs.load(write_dbs_yaml(tmp_path, [config]),
                                                  data_dir=tmp_path))
        try:
            assert _rows(ops, "SELECT name FROM salaries WHERE grade = 'senior'") == [["ana"]]
        finally:
            ops.close()
    finally:
        _admin(f"DROP USER IF EXISTS `{login}`@`%`")
