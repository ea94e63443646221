"""MySQL 8 and MariaDB 10.11+ through mysqlclient (``MySQLdb``, a C driver over libmariadb or
libmysqlclient); the server flavour is detected on connect.

Engine layers (ARCHITECTURE.md, "Read-only, in layers"), each holding without the parser guard:
- the client never enables multi-statements (``multi_statements=False``), and the server first prepares (parses, never
  runs) ``SELECT * FROM (<query>) AS nl2sql_result``, where only a query expression fits (no
  SET, DDL, DML, LOAD DATA, HANDLER, LOCK TABLES, INTO OUTFILE); the query then runs as sent
  (a derived table would drop its ORDER BY), streamed, and stopped with ``KILL QUERY`` once
  the row cap is passed;
- ``START TRANSACTION READ ONLY``, always rolled back;
- a server-side time limit (``max_statement_time`` on MariaDB, ``max_execution_time`` on MySQL)
  plus ``KILL QUERY`` from a second connection as a backstop;
- user-level locks (``GET_LOCK``), which survive a rollback, are released after every call and
  the query is refused when it took one.
Use a login with SELECT only (docs/security.md, "Read-only logins"): file functions and server settings
are then refused by the server too.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import URL, Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError

from nl2sql.db.base import (Admission, DbConnection, DbOperations, QueryStats, ResultSink,
                            wants_python_values)
from nl2sql._call_stop import stop_with
from nl2sql.db.logins import LoginPrivileges, few
from nl2sql.errors import DatabaseConnectionError, QueryExecutionError, QueryTimeoutError
from nl2sql.db.mysql_geometry import geometry_text
from nl2sql.db.mysql_reach import SYSTEM_SCHEMAS, query_reach, reached_functions
from nl2sql.sql_guard.user_functions import UserFunctions, from_view_definitions
from nl2sql.workspace import column_types

# The mysql extra; without it the backend registry says which extra to install.
import MySQLdb
from MySQLdb.constants import FIELD_TYPE, FLAG
from MySQLdb.converters import conversions as _DRIVER_CONVERSIONS
from MySQLdb.cursors import SSCursor
from pymysql.converters import convert_date, convert_datetime, convert_timedelta

#: The session's sql_mode, set on every connection whatever the server's global mode: each
#: flavour's own default, which reads string literals as the parser guard does (a backslash
#: escapes, "..." is a string). A server configured with NO_BACKSLASH_ESCAPES or ANSI_QUOTES
#: would read ``'\' , LOAD_FILE(...) -- '`` as a call where the guard saw one string.
SQL_MODES = {
    "mariadb": "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
    "mysql": "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
             "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
}
#: sql_mode flags that change how a query's text is split into tokens.
LEXING_MODES = ("NO_BACKSLASH_ESCAPES", "ANSI_QUOTES", "ANSI")
#: How many user variables a session holds besides nl2sql's own, by flavour (is MariaDB).
_USER_VARIABLES = {
    True: "SELECT COUNT(*) FROM information_schema.USER_VARIABLES "
          "WHERE VARIABLE_NAME <> 'nl2sql_query'",
    False: "SELECT COUNT(*) FROM performance_schema.user_variables_by_thread "
           "WHERE THREAD_ID = PS_CURRENT_THREAD_ID() AND VARIABLE_NAME <> 'nl2sql_query'",
}
#: Seconds past the server's time limit after which the client kills the query itself.
_CANCEL_GRACE_SECONDS = 1.0
_WRAP_PREFIX = "SELECT * FROM (\n"
_DUPLICATE_COLUMN = 1060
#: Server errors that mean "stopped by a time limit or KILL QUERY".
_INTERRUPTED = {1317, 1969, 3024}
#: Result field types -> column types (``nl2sql.workspace.column_types``); GEOMETRY and NULL
#: are none of them. TINYINT(1), which BOOLEAN means, and BIT (read as its number) are integers.
_COLUMN_TYPES = {
    **dict.fromkeys((FIELD_TYPE.TINY, FIELD_TYPE.SHORT, FIELD_TYPE.LONG, FIELD_TYPE.LONGLONG,
                     FIELD_TYPE.INT24, FIELD_TYPE.YEAR, FIELD_TYPE.BIT), column_types.INTEGER),
    **dict.fromkeys((FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL, FIELD_TYPE.FLOAT,
                     FIELD_TYPE.DOUBLE), column_types.NUMBER),
    FIELD_TYPE.DATE: column_types.DATE,
    **dict.fromkeys((FIELD_TYPE.DATETIME, FIELD_TYPE.TIMESTAMP), column_types.TIMESTAMP),
    **dict.fromkeys((FIELD_TYPE.VARCHAR, FIELD_TYPE.VAR_STRING, FIELD_TYPE.STRING,
                     FIELD_TYPE.TINY_BLOB, FIELD_TYPE.MEDIUM_BLOB, FIELD_TYPE.LONG_BLOB,
                     FIELD_TYPE.BLOB, FIELD_TYPE.ENUM, FIELD_TYPE.SET, FIELD_TYPE.JSON,
                     FIELD_TYPE.TIME), column_types.TEXT),
}
#: SET ROLE of a role the login was not granted (or that does not exist): MariaDB's
#: ER_INVALID_ROLE, MySQL's ER_ROLE_NOT_GRANTED.
_ROLE_REFUSED = {1959, 3530}
#: ``ssl_*`` keys that pick mysqlclient's ``ssl_mode``; the others go into its ``ssl`` dict.
_SSL_MODES = {"ssl_verify_cert": "VERIFY_CA", "ssl_verify_identity": "VERIFY_IDENTITY"}


def _bit_number(value: bytes) -> int:
    """A ``BIT(n)`` value (the driver's big-endian bytes) as the number ``b + 0`` gives."""
    return int.from_bytes(value, "big")


def _conversions() -> dict[Any, Any]:
    """The driver's value conversions: dates and times convert as PyMySQL converts them (a
    value that is no valid date, e.g. ``0000-00-00``, stays its text instead of becoming NULL,
    as mysqlclient's own converters would make it); a ``BIT`` is its number (``1`` for a
    ``BIT(1)`` flag, not the byte ``\x01``), a ``GEOMETRY`` its WKT (``POINT(1 2)``)."""
    return {**_DRIVER_CONVERSIONS, FIELD_TYPE.DATE: convert_date,
            FIELD_TYPE.DATETIME: convert_datetime, FIELD_TYPE.TIMESTAMP: convert_datetime,
            FIELD_TYPE.TIME: convert_timedelta, FIELD_TYPE.BIT: _bit_number,
            FIELD_TYPE.GEOMETRY: geometry_text}


def _export_conversions(common: dict[Any, Any]) -> dict[Any, Any]:
    """Conversions for CSV exports: DECIMAL and DATE values stay the server's text, decoded in
    C, which is exactly what ``nl2sql.workspace.csv_dialect`` writes for them (plain fixed-point digits,
    ISO dates; a zero date stays its text as above), without a Python object per value."""
    return {**common, FIELD_TYPE.DECIMAL: str, FIELD_TYPE.NEWDECIMAL: str,
            FIELD_TYPE.DATE: str}


# The login's privileges: global ("*"), per database, per table.
_LOGIN_PRIVILEGES = (
    "SELECT PRIVILEGE_TYPE, '*' FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = "
    "%(grantee)s UNION ALL SELECT PRIVILEGE_TYPE, TABLE_SCHEMA FROM "
    "information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = %(grantee)s UNION ALL SELECT "
    "PRIVILEGE_TYPE, CONCAT(TABLE_SCHEMA, '.', TABLE_NAME) FROM "
    "information_schema.TABLE_PRIVILEGES WHERE GRANTEE = %(grantee)s")
_READ_PRIVILEGES = frozenset({"SELECT", "SHOW VIEW", "USAGE", "SHOW DATABASES", "EXECUTE"})
_SHOWN_FIRST = ("SUPER", "FILE", "INSERT", "UPDATE", "DELETE", "DROP", "CREATE", "ALTER")
_ADMIN_PRIVILEGES = frozenset({"SUPER", "FILE", "PROCESS", "SHUTDOWN", "RELOAD", "CREATE USER",
                               "GRANT OPTION", "CREATE TABLESPACE"})


_FUNCTIONS = ("SELECT ROUTINE_SCHEMA, ROUTINE_NAME FROM information_schema.ROUTINES "
              "WHERE ROUTINE_TYPE = 'FUNCTION'")
_VIEWS = ("SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS "
          f"WHERE TABLE_SCHEMA NOT IN {tuple(sorted(SYSTEM_SCHEMAS))}")
#: No privilege on a table of the mysql schema (``mysql.func``): a read-only login.
_NO_TABLE_ACCESS = {1142, 1044}


#: Warning: "Result of repeat() was larger than max_allowed_packet (N) - truncated" (NULL).
_VALUE_OVER_PACKET = 1301


class _ValueBoundCursor:
    """A DB-API cursor's rows, each text or binary value of the ``columns`` checked against
    ``limit`` bytes (``max_value_bytes``) before it goes further."""

    def __init__(self, cursor: Any, columns: list[int], limit: int,
                 error: Callable[[], Exception]) -> None:
        self._cursor, self._columns, self._limit, self._error = cursor, columns, limit, error

    def fetchmany(self, size: int) -> Any:
        rows = self._cursor.fetchmany(size)
        for row in rows:
            self._check(row)
        return rows

    def fetchone(self) -> Any:
        row = self._cursor.fetchone()
        if row is not None:
            self._check(row)
        return row

    def _check(self, row: Any) -> None:
        for i in self._columns:
            value = row[i]
            if value is None or len(value) <= self._limit // 4:
                continue  # at most 4 bytes a character: cannot be over
            size = len(value.encode("utf-8")) if isinstance(value, str) else len(value)
            if size > self._limit:
                raise self._error()


class MysqlConnection(DbConnection):
    first_use_imports = ("MySQLdb.connections",)
    catalogue_version_in_sql = True
    #: The login may read ``mysql.func`` (loadable functions): until a lookup is denied.
    _reads_loadable_functions = True

    def kill_query(self, thread_id: int) -> None:
        """``KILL QUERY`` from a second connection: the client-side backstop of the limit."""
        try:
            killer = MySQLdb.connect(**self._direct_args())
            try:
                with killer.cursor() as cursor:
                    cursor.execute(f"KILL QUERY {int(thread_id)}")
            finally:
                killer.close()
        except MySQLdb.Error:
            pass  # the query ended meanwhile, or the server is gone: nothing left to stop

    def statement_stop(self, raw: Any) -> Callable[[], object]:
        return functools.partial(self.kill_query, raw.thread_id())  # asked while raw is free

    def _direct_args(self) -> dict[str, Any]:
        url = self.url()
        args = {key: value for key, value in self.connect_args().items()
                if key in ("ssl", "ssl_mode", "connect_timeout")}
        return {"host": url.host or "127.0.0.1", "port": url.port or 3306,
                "user": url.username, "password": url.password or "", **args}

    def url(self) -> URL:
        config = self.config
        return URL.create("mysql+mysqldb", username=config.user or "root",
                          password=config.resolve_password(), host=config.host,
                          port=config.port, database=config.dbname,
                          query={"charset": "utf8mb4"})

    def connect_args(self) -> dict[str, Any]:
        """mysqlclient arguments: no multi-statements, bounded connect time, ssl_* keys."""
        args: dict[str, Any] = {"connect_timeout": 10, "autocommit": False,
                                "client_flag": 0, "multi_statements": False,
                                "init_command": "SET NAMES utf8mb4"}
        args["conv"] = _conversions()
        ssl: dict[str, Any] = {}
        for key, value in (self.config.ssl_options or {}).items():
            if key in _SSL_MODES:
                if value and str(value).lower() not in ("0", "false", "no"):
                    mode = _SSL_MODES[key]
                    if args.get("ssl_mode") != "VERIFY_IDENTITY":
                        args["ssl_mode"] = mode
            else:
                ssl[key.removeprefix("ssl_")] = value
        if ssl:
            args["ssl"] = ssl
        return args

    def _create_engine(self) -> Engine:
        engine = create_engine(self.url(), pool_pre_ping=True, pool_recycle=3600,
                               connect_args=self.connect_args())
        event.listen(engine, "connect", self._on_connect)
        return engine

    def read_login_privileges(self) -> LoginPrivileges:
        """The login's global, database and table privileges (``information_schema``):
        anything beyond reading is reported, administrative ones as privileged."""
        with self.connect() as conn:
            user = str(conn.exec_driver_sql("SELECT CURRENT_USER()").scalar())
            name, _, host = user.rpartition("@")
            rows = conn.exec_driver_sql(_LOGIN_PRIVILEGES, {"grantee": f"'{name}'@'{host}'"})
            granted: dict[str, set[str]] = {}
            for privilege, where in rows:
                granted.setdefault(str(privilege).upper(), set()).add(str(where))
        privileged, by_place = [], {}
        first = {name: i for i, name in enumerate(_SHOWN_FIRST)}
        for privilege, places in sorted(granted.items(), key=lambda item: (
                first.get(item[0], len(first)), item[0])):
            if privilege in _READ_PRIVILEGES:
                continue
            if privilege in _ADMIN_PRIVILEGES or "ADMIN" in privilege \
                    or privilege.startswith(("REPLICA", "BINLOG", "SLAVE")):
                privileged.append(privilege)
                continue
            for place in places:
                by_place.setdefault(place, []).append(privilege)
        writes = [f"{few(privileges, 3, sep='/')} on "
                  f"{'every database' if place == '*' else place}"
                  for place, privileges in sorted(by_place.items())]
        return LoginPrivileges(user, tuple(privileged), tuple(writes))

    def user_functions(self) -> UserFunctions:
        """The whole catalogue's user functions, read now (nothing is kept: calls look up
        only what they reach, ``admission_functions``)."""
        return self.read_user_functions()

    def warm_user_functions(self) -> None:
        """Nothing to read ahead: each call looks up what it reaches."""

    def admission_functions(self, conn: Connection, admission: Admission) -> UserFunctions:
        """The user functions the call of ``admission`` reaches, looked up by exact name in
        its own transaction on ``conn`` (``mysql_reach``): its bare calls, the relations it
        reads, the views among them, recursively."""
        if admission.expression is not None:
            bare, relations = query_reach(admission.expression, self.config.allowed_functions,
                                          written=admission.written_calls)
        else:
            bare, relations = frozenset(), frozenset({(None, admission.relation or "")})

        def run(sql: str, params: tuple[Any, ...]) -> Any:
            return conn.exec_driver_sql(sql, params).all()

        if self._reads_loadable_functions:
            try:
                return reached_functions(run, self.config.dbname, bare, relations,
                                         loadable=True, db_id=self.db_id)
            except DBAPIError as exc:  # mysql.func denied: a read-only login
                if not exc.orig.args or exc.orig.args[0] not in _NO_TABLE_ACCESS:
                    raise
                self._reads_loadable_functions = False
        return reached_functions(run, self.config.dbname, bare, relations,
                                 loadable=False, db_id=self.db_id)

    def read_user_functions(self, conn: Connection | None = None) -> UserFunctions:
        """Stored functions (and loadable ones, when ``mysql.func`` is readable), and the
        views that call one; built-ins are never schema-qualified here, so ``db.f()`` always
        calls a stored function."""
        with self._on(conn) as on:
            functions = [tuple(r) for r in on.exec_driver_sql(_FUNCTIONS)]
            try:
                functions += [("", r[0]) for r in on.exec_driver_sql(
                    "SELECT name FROM mysql.func")]
            except DBAPIError:  # no privilege on the mysql schema: a read-only login
                pass
            views = [tuple(r) for r in on.exec_driver_sql(_VIEWS)]
        return from_view_definitions(functions, views, "mysql", qualified_calls_are_user=True)

    def _on_connect(self, dbapi_connection: Any, _record: object) -> None:
        """Per-connection settings: the time limit (by flavour), no quiet CTE truncation, the
        session's sql_mode pinned (``SQL_MODES``: string lexing as the guard reads it, read
        back), the session read-only by default."""
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SELECT VERSION()")
            version = str(cursor.fetchone()[0])
            is_mariadb = "mariadb" in version.lower()
            seconds = self.config.query_timeout_seconds
            if is_mariadb:
                # MariaDB stops a recursive CTE after 1000 rounds *without an error*; let the
                # time limit decide instead, so results are never silently cut.
                cursor.execute(f"SET SESSION max_statement_time = {seconds:.3f}, "
                               f"max_recursive_iterations = 4294967295")
            else:
                cursor.execute(f"SET SESSION max_execution_time = {max(1, int(seconds * 1000))}, "
                               f"cte_max_recursion_depth = 4294967295")
            cursor.execute("SET SESSION sql_mode = %s",
                           (SQL_MODES["mariadb" if is_mariadb else "mysql"],))
            cursor.execute("SELECT @@SESSION.sql_mode")
            mode = str(cursor.fetchone()[0]).upper().split(",")
            if any(flag in mode for flag in LEXING_MODES):  # pragma: no cover - a proxy's rewrite
                raise DatabaseConnectionError(
                    f"The MySQL server of database '{self.db_id}' kept sql_mode {','.join(mode)}, "
                    f"which reads strings differently from nl2sql's checks; nl2sql will not "
                    f"query it.", db_id=self.db_id)
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
        dbapi_connection.commit()
        dbapi_connection.nl2sql_is_mariadb = is_mariadb
        dbapi_connection.nl2sql_export_conv = _export_conversions(dbapi_connection.converter)


class MysqlOperations(DbOperations):
    connection: MysqlConnection

    @contextmanager
    def _read_only(self, timeout: float, *, admit: Admission | None = None
                   ) -> Iterator[Connection]:
        with self.connection.connect() as conn:
            raw = conn.connection.driver_connection
            raw.rollback()
            thread_id = raw.thread_id()
            with raw.cursor() as cursor:
                if getattr(raw, "nl2sql_is_mariadb", True):
                    cursor.execute(f"SET SESSION max_statement_time = {timeout:.3f}")
                else:
                    cursor.execute(f"SET SESSION max_execution_time = {max(1, int(timeout * 1000))}")
                cursor.execute("START TRANSACTION READ ONLY")
            kill = functools.partial(self.connection.kill_query, thread_id)
            killer = threading.Timer(timeout + _CANCEL_GRACE_SECONDS, kill)
            killer.daemon = True
            killer.start()
            try:
                if self.session_role:
                    self._take_role(raw)
                self._admit(conn, admit)
                with stop_with(f"database '{self.db_id}'", kill):
                    yield conn
            except DBAPIError as exc:
                raise self._translate(exc.orig, timeout, conn) from None
            except MySQLdb.Error as exc:
                raise self._translate(exc, timeout, conn) from None
            finally:
                killer.cancel()
                self._reset(raw, conn)

    def _take_role(self, raw: Any) -> None:
        """The caller's group's role for this query (``SET ROLE``: the database's grants then
        apply; on MySQL/MariaDB a role's privileges add to the login's own, docs/team.md).
        The session's own role is read first, once per connection, for ``_reset`` to go back
        to (a rollback keeps the role)."""
        with raw.cursor() as cursor:
            if not hasattr(raw, "nl2sql_own_role"):
                cursor.execute("SELECT CURRENT_ROLE()")
                raw.nl2sql_own_role = cursor.fetchone()[0]
            raw.nl2sql_role_taken = True
            try:
                cursor.execute(f"SET ROLE {_quote_name(self.session_role or '')}")
            except MySQLdb.Error as exc:
                if exc.args and exc.args[0] in _ROLE_REFUSED:
                    raise self.role_error(str(exc.args[1]).rstrip(".")) from None
                raise

    def _reset(self, raw: Any, conn: Connection) -> None:
        """Roll back always; release user-level locks, the one effect a rollback keeps; drop a
        session in which the query set a user variable (``@x := ...``) or the value
        ``LAST_INSERT_ID()`` returns (``LAST_INSERT_ID(5)``; a session that only reads keeps 0),
        so the next call, maybe another client's, starts without it."""
        variables = _USER_VARIABLES[getattr(raw, "nl2sql_is_mariadb", True)]
        try:
            raw.rollback()
            with raw.cursor() as cursor:
                if getattr(raw, "nl2sql_role_taken", False):  # back to the session's own
                    cursor.execute(_own_role_statement(raw))
                    raw.nl2sql_role_taken = False
                cursor.execute(f"SELECT RELEASE_ALL_LOCKS(), ({variables}), LAST_INSERT_ID()")
                _, set_variables, last_insert_id = cursor.fetchone()
                if set_variables or last_insert_id:
                    conn.invalidate()
        except MySQLdb.Error:
            conn.invalidate()  # a broken session goes away instead of back into the pool

    def _stream(self, sql: str, sink: ResultSink, *, max_rows: int, timeout: float,
                is_explain: bool, admit: Admission | None = None) -> QueryStats:
        body = sql.rstrip().rstrip(";").rstrip()
        with self._read_only(timeout, admit=admit) as conn:
            raw = conn.connection.driver_connection
            if not is_explain:  # EXPLAIN cannot be a derived table; still one statement
                self._check_is_query(raw, body)
            return self._run(raw, conn, body, sink, max_rows, timeout)

    def _check_is_query(self, raw: Any, body: str) -> None:
        """The server itself must read ``body`` as a query expression: it prepares (parses and
        resolves, never runs) ``SELECT * FROM (<body>) AS nl2sql_result``, where anything else
        (SET, DDL, DML, HANDLER, LOCK, INTO OUTFILE...) is a syntax error. Error 1060 (two
        columns of one name) comes only after the text parsed as a query, so it passes. The
        query then runs as sent: a derived table would lose its ORDER BY (MariaDB and MySQL
        ignore it there without a LIMIT)."""
        with raw.cursor() as probe:
            probe.execute("SET @nl2sql_query = %s", (f"{_WRAP_PREFIX}{body}\n) AS nl2sql_result",))
            try:
                probe.execute("PREPARE nl2sql_probe FROM @nl2sql_query")
                probe.execute("DEALLOCATE PREPARE nl2sql_probe")
            except MySQLdb.Error as exc:
                if not exc.args or exc.args[0] != _DUPLICATE_COLUMN:
                    raise
            finally:
                probe.execute("SET @nl2sql_query = NULL")

    def _run(self, raw: Any, conn: Connection, statement: str, sink: ResultSink,
             max_rows: int, timeout: float) -> QueryStats:
        cursor = SSCursor(raw)  # unbuffered: rows stream from the socket in batches
        common = raw.converter
        if not wants_python_values(sink):  # a result takes its conversions at execute
            raw.converter = raw.nl2sql_export_conv
        try:
            cursor.execute(statement)  # an error here is read whole: the session stays usable
        finally:
            raw.converter = common
        try:
            if cursor.description is None:
                raise QueryExecutionError(
                    f"MySQL ran no query on database '{self.db_id}': the statement returns "
                    f"no rows; send one SELECT, WITH or VALUES query.", db_id=self.db_id)
            columns = [d[0] for d in cursor.description]
            stats = self._drain(self._value_bound(cursor), sink, columns, max_rows)
            stats.column_types = [_column_type(d[1], flags) for d, flags in
                                  zip(cursor.description, cursor.description_flags)]
        except BaseException:
            self._abandon(raw, cursor, conn)
            raise
        if stats.truncated:  # stop the rest of the result instead of reading it
            self._abandon(raw, cursor, conn)
            return stats
        warnings = raw.warning_count()  # of the result just read (the next statement resets it)
        cursor.close()
        if warnings:
            self._check_value_warnings(raw)
        self._check_locks(raw)
        return stats

    def _value_bound(self, cursor: Any) -> Any:
        """``cursor``, or one that refuses a value over ``max_value_bytes`` as rows arrive,
        checking only the columns whose declared length could hold one."""
        limit = self.connection.config.max_value_bytes
        big = [i for i, d in enumerate(cursor.description) if (d[3] or 0) > limit]
        return _ValueBoundCursor(cursor, big, limit, self._value_too_big_error) if big \
            else cursor

    def _check_value_warnings(self, raw: Any) -> None:
        """MySQL answers NULL, with warning 1301, for a value over ``max_allowed_packet``
        (``repeat('x', 2e8)``): that is a value too big, not a NULL."""
        with raw.cursor() as cursor:
            cursor.execute("SHOW WARNINGS")
            if any(row[1] == _VALUE_OVER_PACKET for row in cursor.fetchall()):
                raise self._value_too_big_error()

    def _abandon(self, raw: Any, cursor: Any, conn: Connection) -> None:
        """Leave a result unread: kill the query, then let the driver drop what the server had
        already sent (the killed query ends the stream at once) and drop the session."""
        self.connection.kill_query(raw.thread_id())
        try:
            cursor.close()
        except MySQLdb.Error:
            pass  # the kill's own error ends the stream
        conn.invalidate()

    def _check_locks(self, raw: Any) -> None:
        with raw.cursor() as cursor:
            cursor.execute("SELECT RELEASE_ALL_LOCKS()")
            released = cursor.fetchone()[0]
        if released:
            raise QueryExecutionError(
                f"The query on database '{self.db_id}' took a user-level lock, which a "
                f"read-only query may not do; it was released: remove GET_LOCK and try again.",
                db_id=self.db_id)

    def _translate(self, exc: BaseException | None, timeout: float,
                   conn: Connection) -> Exception:
        code = exc.args[0] if exc is not None and exc.args else None
        if code in _INTERRUPTED:
            conn.invalidate()
            return QueryTimeoutError(
                f"Query on database '{self.db_id}' stopped after {timeout:g} s; add a "
                f"LIMIT/filter or raise query_timeout_seconds for db {self.db_id} in dbs.yaml.",
                db_id=self.db_id)
        if isinstance(exc, MySQLdb.OperationalError) and code in (2006, 2013, 2014):
            conn.invalidate()
        message = str(exc.args[1] if exc is not None and len(exc.args) > 1 else exc)
        message = (message.strip().splitlines() or [type(exc).__name__])[0]
        return QueryExecutionError(
            f"MySQL rejected the query on database '{self.db_id}': {message.rstrip('.')}; "
            f"fix the SQL and try again.", db_id=self.db_id)


def _quote_name(name: str) -> str:
    """``name`` as a quoted MySQL/MariaDB identifier (a role's name)."""
    return "`" + name.replace("`", "``") + "`"


def _own_role_statement(raw: Any) -> str:
    """The statement that gives the session back the role it had before ``SET ROLE``: MariaDB
    names it (or NONE; it has no ``SET ROLE DEFAULT``), MySQL takes its default roles."""
    if not getattr(raw, "nl2sql_is_mariadb", True):
        return "SET ROLE DEFAULT"
    own = getattr(raw, "nl2sql_own_role", None)
    return f"SET ROLE {_quote_name(own)}" if own else "SET ROLE NONE"


def _column_type(field_type: int, flags: int) -> str | None:
    """The column type (``nl2sql.workspace.column_types``) of a result field. A string with
    the binary flag is bytes or text in a binary collation (the field does not say which):
    unknown."""
    found = _COLUMN_TYPES.get(field_type)
    if found == column_types.TEXT and flags & FLAG.BINARY:
        return None
    return found
