"""PostgreSQL sees who is asking: each query's transaction carries ``application_name``
``nl2sql/<user>`` and takes the user's group ``db_role``, so the database's own grants and
row-level security decide what the user reads (a real server, a real role and policy)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from conftest import pg_config, pg_execute, write_dbs_yaml

from nl2sql.access import member
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import ConfigError, QueryExecutionError
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op

pytestmark = pytest.mark.postgres

SCRIPT = """
CREATE TABLE sales (region text, amount int);
INSERT INTO sales VALUES ('EU', 10), ('EU', 20), ('US', 300);
CREATE TABLE salaries (name text, amount int);
INSERT INTO salaries VALUES ('ana', 1);
ALTER TABLE sales ENABLE ROW LEVEL SECURITY;
"""


@pytest.fixture
def eu_role(pg_server: str) -> Iterator[str]:
    """A NOLOGIN role, dropped after the test's databases (requested before them)."""
    name = f"nl2sql_eu_{uuid.uuid4().hex[:8]}"
    pg_execute("postgres", f"CREATE ROLE {name} NOLOGIN")
    yield name
    pg_execute("postgres", f"DROP ROLE IF EXISTS {name}")


@pytest.fixture
def ops(eu_role: str, pg_database, tmp_path) -> Iterator[OpsContext]:  # noqa: ANN001
    dbname = pg_database(script=SCRIPT)
    for statement in (f"GRANT USAGE ON SCHEMA public TO {eu_role}",
                      f"GRANT SELECT ON sales TO {eu_role}",
                      f"CREATE POLICY eu_only ON sales FOR SELECT TO {eu_role} "
                      f"USING (region = 'EU')"):
        pg_execute(dbname, statement)
    groups = {"eu": {"databases": ["shop"], "db_role": eu_role},
              "all": {"databases": ["*"]},
              "broken": {"databases": ["shop"], "db_role": "nl2sql_no_such_role"}}
    path = write_dbs_yaml(tmp_path, [pg_config("shop", dbname)], server={"groups": groups})
    context = OpsContext(DbConnectionConfigs.load(path, workspace=tmp_path / "ws"))
    yield context
    context.close()


def _rows(ops: OpsContext, query: str) -> list[list[str]]:
    result = db_execute_sql_op(ops, "shop", query)
    return [line.split(",") for line in
            (ops.workspace_root / result.csv_filename).read_text().splitlines()[1:]]


def test_the_database_sees_the_user_and_applies_the_groups_role(ops: OpsContext,
                                                                eu_role: str) -> None:
    # (pg_stat_activity holds other sessions' SQL: the guard refuses it; the setting is the
    # same value the server shows there)
    who = "SELECT current_user AS role, current_setting('application_name') AS app"
    ana = ops.for_caller(member("ana", ["eu"], ops.configs.server), "mcp-http")
    assert _rows(ana, who) == [[eu_role, "nl2sql/ana"]]
    assert _rows(ana, "SELECT region, sum(amount) FROM sales GROUP BY 1") == [["EU", "30"]]
    with pytest.raises(QueryExecutionError, match="permission denied for table salaries"):
        db_execute_sql_op(ana, "shop", "SELECT * FROM salaries")

    bob = ops.for_caller(member("bob", ["all"], ops.configs.server), "mcp-http")
    # No role: the login's own privileges (a superuser login reads as pg_read_all_data).
    assert _rows(bob, who) == [["pg_read_all_data", "nl2sql/bob"]]
    assert _rows(bob, "SELECT * FROM salaries") == [["ana", "1"]]
    # The pooled connection keeps neither the role nor the name for the next caller.
    assert _rows(ops, who) == [["pg_read_all_data", f"nl2sql/{ops.caller.name}"]]


def test_a_role_the_login_cannot_take_is_one_sentence(ops: OpsContext) -> None:
    carl = ops.for_caller(member("carl", ["broken"], ops.configs.server), "cli")
    with pytest.raises(ConfigError, match="cannot take the role 'nl2sql_no_such_role'.*GRANT "
                                          "nl2sql_no_such_role TO postgres"):
        db_execute_sql_op(carl, "shop", "SELECT 1")
    assert _rows(ops, "SELECT 1 AS one") == [["1"]]  # the connection is still good
