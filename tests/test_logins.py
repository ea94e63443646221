"""A login that can write or is privileged is said loudly (server start on stderr, ``db_list``,
``annotate-schema``'s summary) and refused with ``require_read_only_login: true``; a read-only
login is neither. Real PostgreSQL and MariaDB logins: read-only, with a write grant, and the
superuser / root."""

from __future__ import annotations

import io
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from conftest import mysql_admin, mysql_config, pg_config, write_dbs_yaml

from nl2sql.annotation.pipeline import annotate_database
from nl2sql.cli.annotate import print_summary
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import LoginNotReadOnlyError
from nl2sql.operations import db_execute_sql_op, db_list_op
from nl2sql.operations.logins import report_logins
from nl2sql.operations.ops_context import OpsContext
from nl2sql.schema.formatting import format_schema


@pytest.fixture
def pg_logins(pg_database, pg_server: str) -> Iterator[tuple[str, str, str]]:  # noqa: ANN001
    """A database with one table, a read-only role and a role that may insert into it."""
    dbname = pg_database(script="CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)")
    suffix = uuid.uuid4().hex[:8]
    ro, rw = f"nl2sql_ro_{suffix}", f"nl2sql_rw_{suffix}"
    dsn = pg_server.replace("dbname=postgres", f"dbname={dbname}")
    with psycopg.connect(dsn, autocommit=True) as admin:
        for role in (ro, rw):
            admin.execute(f"CREATE ROLE {role} LOGIN")
            admin.execute(f"GRANT CONNECT ON DATABASE {dbname} TO {role}")
            admin.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
            admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        admin.execute(f"GRANT INSERT ON t TO {rw}")
    try:
        yield dbname, ro, rw
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            for role in (ro, rw):
                admin.execute(f"DROP OWNED BY {role}")
        with psycopg.connect(pg_server, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
            for role in (ro, rw):
                admin.execute(f"DROP ROLE IF EXISTS {role}")


@pytest.fixture
def pg_partly_readable(pg_database, pg_server: str) -> Iterator[tuple[str, str]]:  # noqa: ANN001
    """A read-only role (USAGE on public, SELECT on its tables) in a database where the
    superuser installed pg_buffercache (its view granted with the rest; its function
    pg_buffercache_pages is not executable), one table the role may not read, one it may read
    two columns of, and one whose row-level security policy calls a user-defined function."""
    dbname = pg_database(script=(
        "CREATE TABLE genre (id int PRIMARY KEY, name text);"
        "INSERT INTO genre SELECT g, (ARRAY['Rock', 'Jazz', 'Pop'])[g % 3 + 1] "
        "FROM generate_series(1, 60) g;"
        "CREATE TABLE payroll (id int PRIMARY KEY, grade text);"
        "INSERT INTO payroll SELECT g, 'g' || (g % 4) FROM generate_series(1, 60) g;"
        "CREATE FUNCTION own_rows(owner int) RETURNS boolean LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'policy function ran on %', owner; END $$;"
        "CREATE TABLE notes (id int PRIMARY KEY, owner int, body text);"
        "INSERT INTO notes SELECT g, g % 3, 'n' || g FROM generate_series(1, 40) g;"
        "ALTER TABLE notes ENABLE ROW LEVEL SECURITY;"
        "CREATE POLICY own ON notes FOR SELECT USING (own_rows(owner));"
        "CREATE TABLE staff (id int PRIMARY KEY, name text, salary int);"
        "INSERT INTO staff SELECT g, 'n' || g, g FROM generate_series(1, 10) g;"
        "ANALYZE;"
        "CREATE EXTENSION pg_buffercache;"))
    role = f"nl2sql_ro_{uuid.uuid4().hex[:8]}"
    dsn = pg_server.replace("dbname=postgres", f"dbname={dbname}")
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"GRANT CONNECT ON DATABASE {dbname} TO {role}")
        admin.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        admin.execute(f"REVOKE SELECT ON payroll FROM {role}")
        admin.execute(f"REVOKE SELECT ON staff FROM {role}")
        admin.execute(f"GRANT SELECT (id, name) ON staff TO {role}")
    try:
        yield dbname, role
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"DROP OWNED BY {role}")
        with psycopg.connect(pg_server, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
            admin.execute(f"DROP ROLE IF EXISTS {role}")


def test_annotate_with_a_read_only_role_describes_what_it_cannot_read(
        pg_partly_readable, tmp_path: Path, capsys: pytest.CaptureFixture[str],  # noqa: ANN001
        caplog: pytest.LogCaptureFixture) -> None:
    """annotate-schema ended in an internal ProgrammingError: enum screening ran on a table the
    role may not read. Each relation the database refuses is described without samples or
    screening (one warning each); the others are annotated in full."""
    from nl2sql.cli.annotate import main
    from nl2sql.schema.cache import load_db_info

    dbname, role = pg_partly_readable
    config = write_dbs_yaml(tmp_path, [_pg("shop", dbname, user=role)], include_sample=False)
    with caplog.at_level(logging.WARNING, logger="nl2sql"):
        assert main(["shop", "--config", str(config), "--data-dir", str(tmp_path / "data")]) == 0
    assert "error" not in capsys.readouterr().err
    err = caplog.text
    assert "Traceback" not in err
    assert "no sample rows for pg_buffercache: permission denied for function " \
           "pg_buffercache_pages" in err
    assert "no sample rows for payroll: permission denied for table payroll" in err
    assert "no enum screening for payroll: permission denied for table payroll" in err
    info = load_db_info(tmp_path / "data", "shop")
    tables = {t.name: t for t in info.tables}
    assert set(tables) == {"genre", "payroll", "pg_buffercache", "notes", "staff"}
    assert tables["genre"].sample_data_csv and tables["payroll"].sample_data_csv is None
    # Counted although the count of payroll, in the same statement, is refused.
    assert (tables["genre"].row_count, tables["genre"].row_count_is_estimate) == (60, False)
    assert (tables["payroll"].row_count, tables["payroll"].row_count_is_estimate) == (60, True)
    # Counting notes' rows would run its policy's function: neither counted nor sampled.
    assert "policy function ran" not in err
    assert tables["notes"].row_count is None and tables["notes"].sample_data_csv is None
    assert ("no sample rows for notes: The query calls the user-defined function "
            "public.own_rows (through the row-level security policy of the table notes)") in err
    # The schema says which relations queries cannot read, and why; the context engine
    # leaves them out when it picks tables.
    assert tables["genre"].unreadable is None
    assert tables["payroll"].unreadable == "permission denied for table payroll"
    # Two of its columns granted: queries of them work, so it is no unreadable table.
    assert tables["staff"].sample_data_csv is None and tables["staff"].unreadable is None
    schema = format_schema(info)
    assert ("-- Queries cannot read it here: The query calls the user-defined function "
            "public.own_rows") in schema
    assert "-- Queries cannot read it here: permission denied for table payroll" in schema
    from nl2sql.context_engine.engine import ContextEngine
    registry = DbConnectionConfigs.load(config, data_dir=tmp_path / "data")
    kept = ContextEngine(registry).context(
        "the grade and body of payroll notes by genre name and staff name", db_id="shop",
        budget_tokens=250).tables
    assert sorted(t.name for t in kept) == ["genre", "staff"]
    name = next(c for c in tables["genre"].columns if c.name == "name")
    assert name.is_enum and sorted(name.enum_values) == ["Jazz", "Pop", "Rock"]
    assert [c.name for c in tables["payroll"].columns] == ["id", "grade"]
    assert tables["pg_buffercache"].is_view and tables["pg_buffercache"].columns


def _pg(db_id: str, dbname: str, user: str | None = None, **extra: object):  # noqa: ANN202
    config = pg_config(db_id, dbname, **extra)
    return config.model_copy(update={"user": user}) if user else config


def _ops(tmp_path: Path, configs: list) -> OpsContext:  # noqa: ANN001
    path = write_dbs_yaml(tmp_path, configs, include_sample=False)
    return OpsContext(DbConnectionConfigs.load(path, workspace=tmp_path / "ws"))


def _listed(ops: OpsContext, db_id: str) -> str:
    text = db_list_op(ops).render()
    return text[text.index(f"- {db_id} "):].split("\n- ")[0]


def test_postgres_logins_are_reported_and_refused_when_required(
        pg_logins, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:  # noqa: ANN001
    dbname, ro, rw = pg_logins
    ops = _ops(tmp_path, [_pg("ro", dbname, user=ro), _pg("rw", dbname, user=rw),
                          _pg("su", dbname)])
    try:
        with caplog.at_level(logging.WARNING, logger="nl2sql"):
            report_logins(ops)  # what the server does at start
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 2  # rw and the superuser; never the read-only login
        assert any(f"login '{rw}' can write (INSERT/UPDATE/DELETE/TRUNCATE on 1 tables)" in w
                   for w in warnings)
        assert any("login 'postgres' is privileged (superuser)" in w for w in warnings)
        assert "WARNING" not in _listed(ops, "ro")
        assert f"WARNING: database 'rw': the login '{rw}' can write" in _listed(ops, "rw")
        assert "is privileged (superuser)" in _listed(ops, "su")
    finally:
        ops.close()

    strict = _ops(tmp_path, [_pg("ro", dbname, user=ro, require_read_only_login=True),
                             _pg("rw", dbname, user=rw, require_read_only_login=True)])
    try:
        assert db_execute_sql_op(strict, "ro", "SELECT count(*) FROM t").row_count == 1
        with pytest.raises(LoginNotReadOnlyError, match=f"Database 'rw' is not used: the login "
                                                        f"'{rw}' can write .*read-only login"):
            db_execute_sql_op(strict, "rw", "SELECT count(*) FROM t")
        with pytest.raises(LoginNotReadOnlyError):
            annotate_database(strict.config("rw"), tmp_path / "data")
    finally:
        strict.close()


def test_a_grant_made_while_the_server_runs_is_refused_by_the_next_call(
        pg_logins, pg_server: str, tmp_path: Path) -> None:  # noqa: ANN001
    """With require_read_only_login, the login's privileges are read at every call: a GRANT
    after the first call is refused by the next one, and its REVOKE lets the next one run."""
    dbname, ro, _rw = pg_logins
    strict = _ops(tmp_path, [_pg("ro", dbname, user=ro, require_read_only_login=True)])
    dsn = pg_server.replace("dbname=postgres", f"dbname={dbname}")
    try:
        assert db_execute_sql_op(strict, "ro", "SELECT count(*) FROM t").row_count == 1
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"GRANT INSERT ON t TO {ro}")
        with pytest.raises(LoginNotReadOnlyError, match=f"login '{ro}' can write"):
            db_execute_sql_op(strict, "ro", "SELECT count(*) FROM t")
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"REVOKE INSERT ON t FROM {ro}")
        assert db_execute_sql_op(strict, "ro", "SELECT count(*) FROM t").row_count == 1
    finally:
        strict.close()


def test_annotation_summary_and_db_list_carry_the_warning(pg_logins, tmp_path: Path) -> None:  # noqa: ANN001
    dbname, ro, rw = pg_logins
    ops = _ops(tmp_path, [_pg("ro", dbname, user=ro), _pg("rw", dbname, user=rw)])
    try:
        for db_id, warned in (("ro", False), ("rw", True)):
            result = annotate_database(ops.config(db_id), ops.data_dir)
            out = io.StringIO()
            print_summary(result, out)
            assert ("WARNING: database 'rw'" in out.getvalue()) is warned
            assert ("WARNING" in _listed(ops, db_id)) is warned  # from the cache: no connection
    finally:
        ops.close()
    with psycopg.connect(f"host=127.0.0.1 port=5432 user=postgres dbname={dbname}",
                         autocommit=True) as admin:
        admin.execute(f"REVOKE INSERT ON t FROM {rw}")  # the login is fixed
    fresh = _ops(tmp_path, [_pg("rw", dbname, user=rw)])
    try:
        assert "WARNING" in _listed(fresh, "rw")  # the annotation's finding, until checked
        report_logins(fresh)  # the server's start check: read-only now
        assert "WARNING" not in _listed(fresh, "rw")
    finally:
        fresh.close()


@pytest.fixture
def mysql_logins(mysql_server: str) -> Iterator[tuple[str, dict[str, str]]]:
    dbname = f"nl2sql_login_{uuid.uuid4().hex[:8]}"
    suffix = uuid.uuid4().hex[:6]
    users = {"ro": f"nl2sql_ro_{suffix}", "rw": f"nl2sql_rw_{suffix}",
             "file": f"nl2sql_fi_{suffix}"}
    grants = {"ro": f"SELECT, SHOW VIEW ON `{dbname}`.*", "rw": f"SELECT, INSERT ON `{dbname}`.*",
              "file": "FILE ON *.*"}
    admin = mysql_admin()
    try:
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE `{dbname}`")
            cursor.execute(f"CREATE TABLE `{dbname}`.t (id int PRIMARY KEY)")
            for key, user in users.items():
                for host in ("%", "localhost"):
                    cursor.execute(f"CREATE USER '{user}'@'{host}' IDENTIFIED BY 'pw'")
                    cursor.execute(f"GRANT {grants[key]} TO '{user}'@'{host}'")
                    if key == "file":
                        cursor.execute(f"GRANT SELECT ON `{dbname}`.* TO '{user}'@'{host}'")
        yield dbname, users
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{dbname}`")
            for user in users.values():
                for host in ("%", "localhost"):
                    cursor.execute(f"DROP USER IF EXISTS '{user}'@'{host}'")
        admin.close()


def test_mariadb_logins_are_reported_and_refused_when_required(mysql_logins,  # noqa: ANN001
                                                               tmp_path: Path) -> None:
    dbname, users = mysql_logins
    configs = [mysql_config(key, dbname, user=user, password="pw",
                            require_read_only_login=True) for key, user in users.items()]
    ops = _ops(tmp_path, [*configs, mysql_config("root", dbname)])
    try:
        logins = {key: ops.connection(key).login_privileges() for key in [*users, "root"]}
        assert logins["ro"].read_only
        assert logins["rw"].writes == (f"INSERT on {dbname}",) and not logins["rw"].privileged
        assert logins["file"].privileged == ("FILE",)
        assert logins["root"].privileged[:2] == ("SUPER", "FILE")
        assert db_execute_sql_op(ops, "ro", "SELECT count(*) FROM t").row_count == 1
        for key in ("rw", "file"):
            with pytest.raises(LoginNotReadOnlyError, match=f"Database '{key}' is not used"):
                db_execute_sql_op(ops, key, "SELECT count(*) FROM t")
        assert "is privileged (FILE)" in _listed(ops, "file")
        assert "WARNING" not in _listed(ops, "ro")
    finally:
        ops.close()


def test_a_view_too_slow_to_sample_is_not_called_unreadable(
        pg_database, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:  # noqa: ANN001
    """A sample cut by the time limit (or a lost connection) says nothing about what a
    query may read: the view keeps its place in the schema and the context engine."""
    from nl2sql.annotation.pipeline import annotate_database
    from nl2sql.schema.cache import load_db_info

    dbname = pg_database(script="CREATE TABLE t (id int PRIMARY KEY);"
                                "INSERT INTO t SELECT generate_series(1, 10);"
                                "CREATE VIEW slow AS SELECT id, pg_sleep(0.6)::text AS z FROM t")
    with caplog.at_level(logging.WARNING, logger="nl2sql"):
        annotate_database(_pg("slowv", dbname, query_timeout_seconds=1), tmp_path)
    assert "no sample rows for slow: canceling statement due to statement timeout" in caplog.text
    view = load_db_info(tmp_path, "slowv").table("slow")
    assert view.sample_data_csv is None and view.unreadable is None
