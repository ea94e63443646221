"""The names a question uses live in lookup tables, often behind a key: MySQL's `employees`
sample keeps its department names in a UNIQUE column (``departments.dept_name``) and its job
titles in a composite primary key (``titles(emp_no, title, from_date)``). Annotation read
neither, so "Senior Engineers in the Sales department" found no value. Now a lookup table's
naming column (unique, or the primary key alone; at most ``NAMING_MAX_ROWS`` rows) is read for
its values and a composite key's column is screened as any other; a big table's unique column
(an email per customer) is still not read."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conftest import mysql_db, pg_config
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.config.registry import DbConnectionConfig, DbConnectionConfigs
from nl2sql.context_engine.engine import ContextEngine
from nl2sql.inspection.enums import NAMING_MAX_ROWS
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.schema.formatting import format_schema

DEPARTMENTS = ["Marketing", "Finance", "Human Resources", "Production", "Development",
               "Quality Management", "Sales", "Research", "Customer Service"]
TITLES = ["Senior Engineer", "Staff", "Engineer", "Senior Staff", "Assistant Engineer",
          "Technique Leader", "Manager"]
EMPLOYEES = NAMING_MAX_ROWS + 200


def _script() -> str:
    departments = ", ".join(f"('d{i + 1:03}', '{name}')" for i, name in enumerate(DEPARTMENTS))
    employees = ", ".join(f"({i}, 'user{i}@example.com')" for i in range(1, EMPLOYEES + 1))
    titles = ", ".join(f"({i}, '{TITLES[i % 7]}', '1990-01-01')" for i in range(1, EMPLOYEES + 1))
    dept_emp = ", ".join(f"({i}, 'd{1 + i % 9:03}')" for i in range(1, EMPLOYEES + 1))
    return f"""
CREATE TABLE departments (dept_no char(4) PRIMARY KEY, dept_name varchar(40) NOT NULL UNIQUE);
CREATE TABLE employees (emp_no int PRIMARY KEY, email varchar(60) UNIQUE);
CREATE TABLE titles (emp_no int REFERENCES employees (emp_no), title varchar(50),
                     from_date date, PRIMARY KEY (emp_no, title, from_date));
CREATE TABLE dept_emp (emp_no int REFERENCES employees (emp_no),
                       dept_no char(4) REFERENCES departments (dept_no),
                       PRIMARY KEY (emp_no, dept_no));
INSERT INTO departments VALUES {departments};
INSERT INTO employees VALUES {employees};
INSERT INTO titles VALUES {titles};
INSERT INTO dept_emp VALUES {dept_emp};
"""


@pytest.mark.parametrize("backend", ["mysql", "postgres"])
def test_the_names_of_a_lookup_table_are_values(
        request: pytest.FixtureRequest, backend: str,
        make_registry: Callable[..., DbConnectionConfigs]) -> None:
    config: DbConnectionConfig
    if backend == "mysql":
        config = mysql_db(request, "emp", script=_script()).config
    else:
        config = pg_config("emp", request.getfixturevalue("pg_database")(script=_script()))
    ops = OpsContext(make_registry(config))
    try:
        annotate_database(ops.config("emp"), ops.data_dir)
        info = ops.db_info("emp")
        name = info.table("departments").column("dept_name")
        assert not name.is_enum and name.enum_candidates is None  # one per row
        assert sorted(name.domain_values or []) == sorted(DEPARTMENTS)
        title = info.table("titles").column("title")
        assert title.is_enum and sorted(title.enum_values) == sorted(TITLES)
        email = info.table("employees").column("email")  # a big table's identifiers: not read
        assert email.distinct_count is None and email.domain_values is None
        schema = format_schema(info)
        assert "Quality Management" in schema and "Technique Leader" in schema
        assert "user1000@example.com" not in schema

        context = ContextEngine(ops.registry).context(
            "How many Senior Engineers work in the Sales department?", db_id="emp")
        conditions = {h.value: h.render().split("  -- ")[0] for h in context.value_hints}
        assert conditions["Sales"] == "departments.dept_name = 'Sales'"
        assert conditions["Senior Engineer"] == "titles.title = 'Senior Engineer'"
        result = db_execute_sql_op(ops, "emp", (
            "SELECT count(*) AS n FROM titles JOIN dept_emp ON dept_emp.emp_no = titles.emp_no "
            "JOIN departments ON departments.dept_no = dept_emp.dept_no WHERE "
            f"{conditions['Sales']} AND {conditions['Senior Engineer']}"))
        count = int((ops.workspace_root / result.csv_filename).read_text().split()[1])
        assert count == sum(1 for i in range(1, EMPLOYEES + 1)
                            if i % 7 == 0 and DEPARTMENTS[i % 9] == "Sales") > 0
    finally:
        ops.close()
