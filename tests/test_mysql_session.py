"""MySQL/MariaDB sessions read every query the way the guard does and carry nothing from one
call to the next: the session's sql_mode is pinned on connect (a server whose global mode has
NO_BACKSLASH_ESCAPES or ANSI_QUOTES would otherwise run what the guard took for a string), and
a user variable set by one call is gone in the next. The global mode is changed on a private
server of the session's own (``private_mariadb``): tests running beside it on the shared server
must not see it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from conftest import mysql_admin, mysql_config, run_mysql_script
from guard_corpus import SCHEMA

from nl2sql.db.base import create_connection, create_operations
from nl2sql.errors import QueryExecutionError, QueryRejectedError
from nl2sql.schema.models import DbInfo

MARKER = "987654322"
#: Forms that hide a call after a backslash-quote: one string where backslashes escape (the
#: guard's reading), a string then code where they do not (NO_BACKSLASH_ESCAPES), and the same
#: with "..." (a name under ANSI_QUOTES).
PROBES = [
    "SELECT '\\' , 987654321 + 1 AS leak -- '",
    "SELECT 'x\\' , 987654321 + 1 AS leak, '\\' AS y -- '",
    "SELECT '\\' , LOAD_FILE(0x2f6574632f686f73746e616d65) AS f, 987654321 + 1 AS leak -- '",
    'SELECT 1 AS "\\" , 987654321 + 1 AS leak -- "',
    "SELECT _binary'\\' , 987654321 + 1 AS leak -- '",
    "SELECT N'\\' , 987654321 + 1 AS leak -- '",
]


class _Sink:
    def begin(self, columns: Sequence[str]) -> None:
        self.columns, self.rows = list(columns), []

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        self.rows += [tuple(row) for row in rows]


def _values(ops: Any, sql: str, *, validate: bool = True) -> set[str]:
    sink = _Sink()
    ops.execute_select_query(sql, sink, validate=validate)
    return {str(value) for row in sink.rows for value in row}


@pytest.fixture
def mysql_ops(make_db) -> Iterator[Any]:  # noqa: ANN001
    db = make_db("mysql", "session", script=SCHEMA["mysql"])
    connection = create_connection(db.config)
    yield create_operations(connection, DbInfo(db_id="session", db_type="mysql"))
    connection.dispose()


@pytest.fixture
def private_ops(private_mariadb) -> Iterator[tuple[Any, dict[str, Any]]]:  # noqa: ANN001
    """The operations over a database of the private server, and the server's address."""
    address, dbname = private_mariadb.address, f"nl2sql_session_{uuid.uuid4().hex[:8]}"
    admin = mysql_admin(address=address)
    with admin.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE `{dbname}`")
    try:
        run_mysql_script(dbname, SCHEMA["mysql"], address=address)
        connection = create_connection(mysql_config("session", dbname, address=address))
        yield create_operations(connection, DbInfo(db_id="session", db_type="mysql")), address
        connection.dispose()
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{dbname}`")
        admin.close()


@pytest.mark.parametrize("mode", ["NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", "ANSI"])
def test_session_sql_mode_is_pinned_whatever_the_servers_global_mode(private_ops, mode: str
                                                                     ) -> None:  # noqa: ANN001
    mysql_ops, address = private_ops
    admin = mysql_admin(address=address)
    with admin.cursor() as cursor:
        cursor.execute("SELECT @@GLOBAL.sql_mode")
        saved = cursor.fetchone()[0]
        # The probes are real: a session in that mode runs the hidden payload.
        cursor.execute("SET SESSION sql_mode = %s", (mode,))
        cursor.execute(PROBES[0] if mode == "NO_BACKSLASH_ESCAPES" else PROBES[3])
        assert MARKER in {str(v) for v in cursor.fetchone()}
        cursor.execute("SET GLOBAL sql_mode = %s", (f"{saved},{mode}".strip(","),))
    try:  # nl2sql's first connection is made while the server's default has the mode
        _values(mysql_ops, "SELECT 1")
    finally:
        with admin.cursor() as cursor:
            cursor.execute("SET GLOBAL sql_mode = %s", (saved,))
        admin.close()
    session_mode = _values(mysql_ops, "SELECT @@SESSION.sql_mode", validate=False).pop()
    assert "NO_BACKSLASH_ESCAPES" not in session_mode and "ANSI_QUOTES" not in session_mode
    for sql in PROBES:
        for validate in (True, False):
            try:
                values = _values(mysql_ops, sql, validate=validate)
            except QueryRejectedError:
                assert validate
                continue
            except QueryExecutionError:  # not valid SQL in the pinned reading: nothing ran
                continue
            assert MARKER not in values, (sql, validate)


def test_a_user_variable_does_not_outlive_its_call(mysql_ops) -> None:  # noqa: ANN001
    with pytest.raises(QueryRejectedError, match="variables"):
        _values(mysql_ops, "SELECT @x := 41 AS v")
    with pytest.raises(QueryRejectedError, match="variables"):
        _values(mysql_ops, "SELECT @x AS v")
    # The engine layer alone: the session that set it is not handed to the next call.
    for _ in range(3):
        assert _values(mysql_ops, "SELECT @x := 41 AS v, a FROM t", validate=False) \
            >= {"41"}
        assert _values(mysql_ops, "SELECT @x AS v", validate=False) == {"None"}
    # LAST_INSERT_ID(expr) sets session state too: refused, and a session it set is dropped.
    with pytest.raises(QueryRejectedError, match="last_insert_id is not allowed"):
        _values(mysql_ops, "SELECT LAST_INSERT_ID(5) AS v")
    for _ in range(3):
        assert _values(mysql_ops, "SELECT LAST_INSERT_ID(5) AS v", validate=False) == {"5"}
        assert _values(mysql_ops, "SELECT LAST_INSERT_ID() AS v", validate=False) == {"0"}
    # ... and a call that sets nothing keeps its session (no reconnect per query).
    pool = mysql_ops.connection.engine.pool
    _values(mysql_ops, "SELECT a FROM t")
    first = pool.checkedin()
    _values(mysql_ops, "SELECT a FROM t")
    assert pool.checkedin() == first == 1
