"""PostgreSQL backend through psycopg 3.

Engine layers (ARCHITECTURE.md, "Read-only, in layers"), each holding without the parser guard:
- the query is sent as one statement over the extended protocol, so the server itself refuses
  text with several commands, and it is wrapped as ``SELECT * FROM (<query>) LIMIT n``, so only
  a query fits (no COPY, DDL, DML, SET, CALL) and the row cap is enforced by the server;
- a ``READ ONLY`` transaction, always rolled back (even on success), with ``statement_timeout``,
  ``lock_timeout`` and ``idle_in_transaction_session_timeout``, plus a client-side cancel as a
  backstop;
- a superuser login drops to the ``pg_read_all_data`` role for the transaction, so server file,
  large-object export and admin functions are refused (use a read-only login anyway);
- session state a rollback keeps (advisory locks, the random seed) is reset after every call.
"""

from __future__ import annotations

import csv
import functools
import logging
import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import repeat
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import pq
from psycopg.adapt import Loader
from psycopg.generators import fetch_many
from psycopg.types.string import TextLoader
from sqlalchemy import URL, Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError

from nl2sql.db import postgres_pages
from nl2sql.db.base import (Admission, CsvResultSink, DbConnection, DbOperations, QueryStats,
                            ResultSink, SinkFull)
from nl2sql._call_stop import stop_with
from nl2sql.db.logins import LoginPrivileges
from nl2sql.errors import DatabaseConnectionError, QueryExecutionError
from nl2sql.sql_guard.denylist import POSTGRES_TABLES
from nl2sql.sql_guard.implicit_calls import ImplicitCalls
from nl2sql.sql_guard.user_functions import UserFunctions
from nl2sql.workspace import column_types

#: Seconds past the statement timeout after which the client cancels the query itself.
_CANCEL_GRACE_SECONDS = 1.0
_WRAP_PREFIX = "SELECT * FROM (\n"
#: Column types whose values are small whatever the data (numbers, dates, uuid, network...),
#: so the max_value_bytes check skips them (numeric: at most ~130 kB by its definition).
_BOUNDED_TYPES = frozenset({16, 18, 19, 20, 21, 23, 26, 600, 650, 700, 701, 774, 790, 829, 869,
                            1082, 1083, 1114, 1184, 1186, 1266, 1700, 2950})
#: How the size of a value is read: text, varchar, bpchar and bytea (json and xml through their
#: binary-compatible text) by octet_length, from the length word without detoasting; other
#: types by pg_column_size.
_SIZE_OF = {25: "octet_length({})", 1043: "octet_length({})", 1042: "octet_length({})",
            17: "octet_length({})", 114: "octet_length({}::text)", 142: "octet_length({}::text)"}
_VALUE_TOO_BIG = "nl2sql: a value over max_value_bytes, bytes:"
#: Built-in types that are not text in a result's column types (``_column_type``).
_COLUMN_TYPES = {
    **dict.fromkeys(("int2", "int4", "int8", "oid"), column_types.INTEGER),
    **dict.fromkeys(("float4", "float8", "numeric"), column_types.NUMBER),
    "bool": column_types.BOOLEAN, "date": column_types.DATE,
    "timestamp": column_types.TIMESTAMP, "timestamptz": column_types.TIMESTAMP,
    "bytea": column_types.BINARY,
}
_SYSTEM_RANDOM = random.SystemRandom()
log = logging.getLogger(__name__)  # os.urandom: seeds no caller can predict
# Traces a query must not leave: an assigned xid (it wrote), session advisory locks, settings.
_EFFECTS_CHECK = """SELECT txid_current_if_assigned() IS NOT NULL,
  EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()),
  ARRAY(SELECT name || '=' || setting FROM pg_settings WHERE source = 'session')"""


# The user-function catalogue read, hand-written (no library reads operators, casts or
# pg_depend). Rows of (kind, schema, name, function schema, function, what). Operators, casts,
# domains and types of initdb have oids below 16384 (FirstNormalObjectId) and only built-in
# functions: each part reads the user's own objects by index where it can.
_CATALOGUE = """
user_schema AS (SELECT oid, nspname FROM pg_namespace
                WHERE nspname NOT IN ('pg_catalog', 'information_schema')
                  AND nspname !~ '^pg_toast'),
user_function AS (SELECT p.oid, n.nspname, p.proname, p.proargtypes, p.prorettype
                  FROM pg_proc p JOIN user_schema n ON n.oid = p.pronamespace
                  WHERE NOT EXISTS (SELECT 1 FROM pg_depend d
                                    WHERE d.classid = 'pg_proc'::regclass
                                      AND d.objid = p.oid AND d.deptype = 'e')),
owner AS (SELECT r.oid AS objid, 'pg_rewrite'::regclass AS classid, r.ev_class AS relid,
                 NULL AS kind
          FROM pg_rewrite r
          UNION ALL
          SELECT p.oid, 'pg_policy'::regclass, p.polrelid, 'policy' FROM pg_policy p),
-- functions PostgreSQL calls for values of a type: casts (a user type's side), domain checks,
-- range functions, a type's input and output
trap (typ, fn, what) AS (
  SELECT t.typ, c.castfunc, 'the cast from ' || format_type(c.castsource, NULL) || ' to '
                            || format_type(c.casttarget, NULL)
  FROM pg_cast c JOIN user_function f ON f.oid = c.castfunc
  CROSS JOIN LATERAL (VALUES (c.castsource), (c.casttarget)) t (typ)
  JOIN pg_type ty ON ty.oid = t.typ
  WHERE c.oid >= 16384 AND ty.typnamespace <> 'pg_catalog'::regnamespace
  UNION ALL
  SELECT c.contypid, f.oid, 'the check of the domain ' || format_type(c.contypid, NULL)
  FROM pg_constraint c JOIN pg_depend d ON d.classid = 'pg_constraint'::regclass
    AND d.objid = c.oid AND d.refclassid = 'pg_proc'::regclass
  JOIN user_function f ON f.oid = d.refobjid
  WHERE c.contypid >= 16384
  UNION ALL
  SELECT r.rngtypid, f.oid, 'the range type ' || format_type(r.rngtypid, NULL)
  FROM pg_range r CROSS JOIN LATERAL (VALUES (r.rngsubdiff), (r.rngcanonical)) u (fn)
  JOIN user_function f ON f.oid = u.fn::oid
  UNION ALL
  SELECT t.oid, f.oid, 'the input or output of the type ' || format_type(t.oid, NULL)
  FROM pg_type t CROSS JOIN LATERAL (VALUES (t.typinput), (t.typoutput), (t.typreceive),
    (t.typsend), (t.typmodin), (t.typmodout), (t.typanalyze), (t.typsubscript)) u (fn)
  JOIN user_function f ON f.oid = u.fn::oid
  WHERE t.oid >= 16384 AND t.typtype = 'b' AND t.typcategory <> 'A')"""
# One round trip, every time:
# - ("function", schema, name) for each user-defined function (outside pg_catalog, not created
#   by an extension);
# - ("calls" | "reads", view schema, view, schema, function | view, kind) for each dependency of
#   a view's rewrite rule (kind NULL) or a table's row-level security policy (kind 'policy') on
#   a function, a view, or a user operator (then its function);
# - ("operator", schema, name, function schema, function, what) for each operator whose
#   function (or selectivity estimator) is a user function;
# - ("explicit cast" | "implicit cast", NULL, NULL, ...) for casts between built-in types with
#   a user function (a superuser's);
# - ("types") when a user function is reached through a type: then _USER_TYPES is read too.
#: The credential catalogues (``sql_guard/denylist.py``), as the elements of an SQL array.
_CREDENTIAL_NAMES = ", ".join(f"'{name.rpartition('.')[2]}'" for name in sorted(POSTGRES_TABLES))
_USER_FUNCTIONS = "WITH" + _CATALOGUE + """,
credential AS (SELECT c.oid, c.relname, c.relnamespace FROM pg_class c
               WHERE c.relnamespace IN ('pg_catalog'::regnamespace,
                                        'information_schema'::regnamespace)
                 AND c.relname = ANY (ARRAY[""" + _CREDENTIAL_NAMES + """])),
operator AS (SELECT o.oid, n.nspname, o.oprname, f.oid AS fn,
                    'the operator ' || n.nspname || '.' || o.oprname || '('
                    || CASE WHEN o.oprleft = 0 THEN 'NONE'
                            ELSE format_type(o.oprleft, NULL) END
                    || ', ' || format_type(o.oprright, NULL) || ')' AS what
             FROM pg_operator o JOIN pg_namespace n ON n.oid = o.oprnamespace
             CROSS JOIN LATERAL (VALUES (o.oprcode), (o.oprrest), (o.oprjoin)) u (fn)
             JOIN user_function f ON f.oid = u.fn::oid
             WHERE o.oid >= 16384)
SELECT 'function', p.nspname, p.proname, NULL, NULL, NULL FROM user_function p
UNION ALL
-- callable as a column: t.f and (t).f call f(t) ("functional notation") when f takes one
-- argument (others with defaults) of a row type (composite, a domain, or a pseudo-type)
SELECT 'attribute', p.nspname, p.proname, NULL, NULL, NULL
FROM user_function p JOIN pg_proc pp ON pp.oid = p.oid
JOIN pg_type a ON a.oid = pp.proargtypes[0]
WHERE pp.pronargs >= 1 AND pp.pronargs - pp.pronargdefaults <= 1 AND a.typtype IN ('c', 'd', 'p')
UNION ALL
SELECT DISTINCT 'calls', vn.nspname, v.relname, fn.nspname, f.proname, o.kind
FROM owner o JOIN pg_depend d ON d.classid = o.classid AND d.objid = o.objid
JOIN pg_class v ON v.oid = o.relid JOIN user_schema vn ON vn.oid = v.relnamespace
JOIN pg_proc f ON d.refclassid = 'pg_proc'::regclass AND f.oid = d.refobjid
JOIN pg_namespace fn ON fn.oid = f.pronamespace
UNION ALL
SELECT DISTINCT 'calls', vn.nspname, v.relname, f.nspname, f.proname, o.kind
FROM pg_depend d JOIN operator u ON u.oid = d.refobjid
JOIN owner o ON o.classid = d.classid AND o.objid = d.objid
JOIN pg_class v ON v.oid = o.relid JOIN user_schema vn ON vn.oid = v.relnamespace
JOIN user_function f ON f.oid = u.fn
WHERE d.refclassid = 'pg_operator'::regclass AND d.refobjid >= 16384
UNION ALL
SELECT DISTINCT 'reads', vn.nspname, v.relname, tn.nspname, t.relname, o.kind
FROM owner o JOIN pg_depend d ON d.classid = o.classid AND d.objid = o.objid
JOIN pg_class v ON v.oid = o.relid JOIN user_schema vn ON vn.oid = v.relnamespace
JOIN pg_class t ON d.refclassid = 'pg_class'::regclass AND t.oid = d.refobjid
JOIN pg_namespace tn ON tn.oid = t.relnamespace
WHERE t.oid <> v.oid AND t.relkind = 'v'
UNION ALL
-- views reading a credential catalogue: pinned system relations have no pg_depend rows, so
-- the rule's tree is searched for their range-table entries (":relid <oid>")
SELECT 'reads', vn.nspname, v.relname, c.nspname, c.relname, NULL
FROM pg_rewrite r JOIN pg_class v ON v.oid = r.ev_class
JOIN user_schema vn ON vn.oid = v.relnamespace
CROSS JOIN LATERAL (SELECT n.nspname, t.relname FROM credential t
                    JOIN pg_namespace n ON n.oid = t.relnamespace
                    WHERE r.ev_action::text ~ (':relid ' || t.oid || '\\M') LIMIT 1) c
WHERE r.oid >= 16384 AND r.ev_action::text ~ (SELECT ':relid (' || string_agg(oid::text, '|')
                                                  || ')\\M' FROM credential)
UNION ALL
SELECT 'operator', o.nspname, o.oprname, f.nspname, f.proname, o.what
FROM operator o JOIN user_function f ON f.oid = o.fn
UNION ALL
SELECT CASE c.castcontext WHEN 'e' THEN 'explicit cast' ELSE 'implicit cast' END, NULL, NULL,
       f.nspname, f.proname, 'the cast from ' || format_type(c.castsource, NULL) || ' to '
                             || format_type(c.casttarget, NULL)
FROM pg_cast c JOIN user_function f ON f.oid = c.castfunc
JOIN pg_type s ON s.oid = c.castsource JOIN pg_type t ON t.oid = c.casttarget
WHERE s.typnamespace = 'pg_catalog'::regnamespace AND t.typnamespace = 'pg_catalog'::regnamespace
UNION ALL
SELECT 'types', NULL, NULL, NULL, NULL, NULL WHERE EXISTS (SELECT 1 FROM trap)
"""
# Read only when "types" said so (the closure scans pg_attribute whole, ~30 ms at 1,000 tables):
# - ("type", schema, name, function schema, function, what) for each type whose values can
#   reach a user function (``reach``: the traps closed over what holds or makes their values:
#   arrays and elements, domains, composite types and so table and view rows, ranges and
#   multiranges); a table's row type has the table's name, so this lists the relations with a
#   column of such a type too;
# - ("function type", schema, name, ...) for user functions taking or returning such a type;
# - ("calls", view schema, view, ...) for views depending on such a type.
_USER_TYPES = "WITH RECURSIVE" + _CATALOGUE + """,
holds (inner_type, outer_type) AS (
  SELECT oid, typarray FROM pg_type WHERE typarray <> 0
  UNION ALL SELECT typarray, oid FROM pg_type WHERE typarray <> 0
  UNION ALL SELECT typbasetype, oid FROM pg_type WHERE typtype = 'd'
  UNION ALL SELECT a.atttypid, c.reltype FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid WHERE a.attnum > 0 AND NOT a.attisdropped
  UNION ALL SELECT rngsubtype, rngtypid FROM pg_range
  UNION ALL SELECT rngtypid, rngmultitypid FROM pg_range
  UNION ALL SELECT rngmultitypid, rngtypid FROM pg_range),
reach (typ, fn, what) AS (
  SELECT typ, fn, what FROM trap
  UNION
  SELECT h.outer_type, r.fn, r.what FROM reach r JOIN holds h ON h.inner_type = r.typ)
SELECT DISTINCT 'type', tn.nspname, t.typname, f.nspname, f.proname, r.what
FROM reach r JOIN pg_type t ON t.oid = r.typ JOIN user_schema tn ON tn.oid = t.typnamespace
JOIN user_function f ON f.oid = r.fn
UNION ALL
SELECT DISTINCT 'function type', p.nspname, p.proname, f.nspname, f.proname, r.what
FROM user_function p JOIN reach r ON r.typ = p.prorettype OR r.typ = ANY (p.proargtypes)
JOIN user_function f ON f.oid = r.fn
UNION ALL
SELECT DISTINCT 'calls', vn.nspname, v.relname, f.nspname, f.proname, o.kind
FROM reach r
CROSS JOIN LATERAL (SELECT classid, objid FROM pg_depend
                    WHERE refclassid = 'pg_type'::regclass AND refobjid = r.typ OFFSET 0) d
JOIN owner o ON o.classid = d.classid AND o.objid = d.objid
JOIN pg_class v ON v.oid = o.relid JOIN user_schema vn ON vn.oid = v.relnamespace
JOIN user_function f ON f.oid = r.fn
"""


# The catalogue's version for the read above: count and sum of xmin (a row's xmin changes with
# every CREATE, CREATE OR REPLACE, ALTER or RENAME of it) of every catalogue row the read (or
# the check of a query) depends on: functions and their dependencies (extension membership),
# views' rewrite rules and names, policies, schema names, operators and casts. Objects created
# after initdb have oids >= 16384 (FirstNormalObjectId), so each part is an index range scan of
# the user's own objects, not of the built-in ones. Hand-written: no library reads catalogue
# row versions.
_CATALOGUE_VERSION = """
SELECT (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_proc WHERE oid >= 16384),
  (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_depend
   WHERE classid = 'pg_proc'::regclass AND objid >= 16384),
  (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_rewrite WHERE oid >= 16384),
  (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_class
   WHERE oid >= 16384 AND relkind IN ('v', 'm')),
  (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_policy),
  (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_namespace),
  (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_operator WHERE oid >= 16384),
  (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_cast WHERE oid >= 16384),
  (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_constraint
   WHERE contypid >= 16384),
  (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_range WHERE rngtypid >= 16384)"""
# Once a type reaches a user function (``_USER_TYPES`` read something), also every type and
# table of the user's: a new table or column of such a type changes the answer (~1 ms more at
# 1,000 tables, only on such databases).
_CATALOGUE_VERSION_WITH_TYPES = _CATALOGUE_VERSION + """,
  (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_type WHERE oid >= 16384),
  (SELECT count(*) || '/' || sum(xmin::text::bigint) FROM pg_class WHERE oid >= 16384)"""


_LOGIN_PRIVILEGES = """
SELECT current_user,
  array_remove(ARRAY[CASE WHEN r.rolsuper THEN 'superuser' END,
                     CASE WHEN r.rolcreaterole THEN 'CREATEROLE' END,
                     CASE WHEN r.rolcreatedb THEN 'CREATEDB' END,
                     CASE WHEN r.rolreplication THEN 'REPLICATION' END,
                     CASE WHEN r.rolbypassrls THEN 'BYPASSRLS' END], NULL),
  ARRAY(SELECT b.rolname FROM pg_roles b
        WHERE b.rolname IN ('pg_write_server_files', 'pg_read_server_files',
                            'pg_execute_server_program', 'pg_write_all_data',
                            'pg_signal_backend', 'pg_checkpoint')
          AND pg_has_role(current_user, b.oid, 'MEMBER') ORDER BY 1),
  (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relkind IN ('r', 'p', 'f', 'v')
     AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_toast'
     AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')),
  ARRAY(SELECT n.nspname FROM pg_namespace n
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_'
          AND has_schema_privilege(n.oid, 'CREATE') ORDER BY 1),
  has_database_privilege(current_database(), 'CREATE')
FROM pg_roles r WHERE r.rolname = current_user
"""


class PostgresConnection(DbConnection):
    catalogue_version_in_sql = True

    def statement_stop(self, raw: Any) -> Callable[[], object]:
        return raw.cancel_safe  # a protocol cancel request for the session (pg_cancel_backend)

    def url(self) -> URL:
        config = self.config
        query = {"sslmode": config.sslmode} if config.sslmode else {}
        return URL.create("postgresql+psycopg", username=config.user,
                          password=config.resolve_password(), host=config.host,
                          port=config.port, database=config.dbname, query=query)

    def _create_engine(self) -> Engine:
        # Several schemas listed: unqualified names resolve through all of them, in order.
        listed = [name for name in self.config.schemas or [] if name != "*"]
        search_path = ",".join(_quote_option(name) for name in listed or [self.schema or "public"])
        timeout_ms = int(self.config.query_timeout_seconds * 1000)
        # Engine-level read-only: every transaction is read-only unless a caller says otherwise,
        # and no statement runs past the configured time limit.
        # standard_conforming_strings is pinned so the server reads backslashes in string
        # literals exactly as the parser guard does (a server set to 'off' would not).
        options = (f"-c default_transaction_read_only=on -c statement_timeout={timeout_ms} "
                   f"-c standard_conforming_strings=on -c search_path={search_path}")
        # use_native_hstore=False: an hstore value is the server's text ('"a"=>"1"', as COPY
        # writes it in a result), not a dict written as JSON.
        engine = create_engine(self.url(), pool_pre_ping=True, use_native_hstore=False,
                               connect_args={"options": options, "application_name": "nl2sql"})
        event.listen(engine, "connect", _values_python_lacks_as_text)
        return engine


    def read_login_privileges(self) -> LoginPrivileges:
        """Superuser and role attributes, membership of the server-file and write-all roles,
        tables it may change and schemas it may create in."""
        with self.connect() as conn:
            row = conn.exec_driver_sql(_LOGIN_PRIVILEGES).one()
        user, attributes, roles, tables, schemas, create_db = row
        writes = ([f"INSERT/UPDATE/DELETE/TRUNCATE on {tables} tables"] if tables else []) \
            + [f"CREATE in schema {name}" for name in schemas] \
            + (["CREATE on the database"] if create_db else [])
        privileged = ["superuser"] if "superuser" in attributes else [*attributes, *roles]
        return LoginPrivileges(user, tuple(privileged), tuple(writes))

    def catalogue_version(self, conn: Connection) -> tuple[Any, ...]:
        """``_CATALOGUE_VERSION`` (a query's own transaction reads it in its setup)."""
        return tuple(conn.exec_driver_sql(self.catalogue_version_sql()).one())

    def catalogue_version_sql(self) -> str:
        """The version statement: with the user's types and tables once the last read found
        a type that reaches a user function."""
        known = self._user_functions.known()
        return _CATALOGUE_VERSION_WITH_TYPES if known is not None and known.implicit.types \
            else _CATALOGUE_VERSION

    def read_keywords(self, conn: Connection) -> list[str]:
        # The server's own list (SQLAlchemy's RESERVED_WORDS are the reserved ones only):
        # reserved (R) and type or function names (T) are no column names unquoted.
        return [row[0] for row in conn.exec_driver_sql(
            "SELECT word FROM pg_get_keywords() WHERE catcode IN ('R', 'T')")]

    def read_user_functions(self, conn: Connection | None = None) -> UserFunctions:
        """Functions outside pg_catalog that no extension installed; views (and row-level
        security policies) that call one, and views reading other views; operators, casts and
        types that call one without naming it (``implicit_calls``)."""
        with self._on(conn) as on:
            # The planner's guesses for these catalogue joins are wild: JIT would compile them
            # for over a second (a read of 10-60 ms). Switched off in a savepoint, so the
            # setting is back before a query of the same transaction runs.
            on.exec_driver_sql("SAVEPOINT nl2sql_catalogue")
            try:
                on.exec_driver_sql("SET LOCAL jit = off")
                rows = on.exec_driver_sql(_USER_FUNCTIONS).all()
                if any(row[0] == "types" for row in rows):
                    rows += on.exec_driver_sql(_USER_TYPES).all()
            finally:
                on.exec_driver_sql("ROLLBACK TO SAVEPOINT nl2sql_catalogue")
        return UserFunctions.from_catalogue(
            [(r[1], r[2]) for r in rows if r[0] == "function"],
            [r[1:5] for r in rows if r[0] == "calls"], [r[1:5] for r in rows if r[0] == "reads"],
            attribute_functions=[(r[1], r[2]) for r in rows if r[0] == "attribute"],
            policies=[(r[1], r[2]) for r in rows if r[0] in ("calls", "reads")
                      and r[5] == "policy"],
            dialect="postgres",
            implicit=ImplicitCalls.from_catalogue(
                [tuple(r) for r in rows if r[0] not in ("function", "calls", "reads", "types",
                                                         "attribute")]))


def _quote_option(identifier: str) -> str:
    # libpq options are space-separated; a backslash escapes a space inside a value.
    quoted = '"' + identifier.replace('"', '""') + '"'
    return quoted.replace(" ", "\\ ")


class _SingleStatementCursor(psycopg.Cursor[Any]):
    """A cursor that always uses the extended query protocol.

    psycopg sends a parameter-less query with the simple protocol, which runs every statement
    in the text; the extended protocol carries exactly one, and the server rejects more
    ("cannot insert multiple commands into a prepared statement"). ``Cursor.copy`` has no
    switch for it, hence this override of the one method that picks the protocol.
    """

    def _execute_send(self, query: Any, *, force_extended: bool = False,
                      binary: bool | None = None) -> None:
        super()._execute_send(query, force_extended=True, binary=binary)


class PostgresOperations(DbOperations):
    connection: PostgresConnection

    @contextmanager
    def _read_only(self, timeout: float, *, admit: Admission | None = None
                   ) -> Iterator[Connection]:
        with self._transaction(timeout, admit=admit) as (conn, _pages):
            yield conn

    @contextmanager
    def _transaction(self, timeout: float, *, watch_pages: bool = False,
                     admit: Admission | None = None
                     ) -> Iterator[tuple[Connection, postgres_pages.Readings | None]]:
        """The read-only transaction; with ``watch_pages``, also the "before" readings of the
        page-write check (``postgres_pages``); with ``admit``, the catalogue's version, against
        which the call is checked before anything runs. Both are read in the same round trip
        as the setup."""
        with self.connection.connect() as conn:
            raw: psycopg.Connection[Any] = conn.connection.driver_connection
            raw.rollback()
            ms = max(1, int(timeout * 1000))
            setup = (f"SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = {ms}; "
                     f"SET LOCAL lock_timeout = {ms}; "
                     f"SET LOCAL idle_in_transaction_session_timeout = {ms + 10_000}; "
                     f"SET LOCAL application_name = {_literal(self._application_name)}")
            if self.session_role:  # the caller's group's role: the database's grants and RLS
                setup += f"; SET LOCAL ROLE {_quote_identifier(self.session_role)}"
            elif raw.info.parameter_status("is_superuser") == "on" \
                    and raw.info.server_version >= 140000:
                setup += "; SET LOCAL ROLE pg_read_all_data"
            watchdog = threading.Timer(timeout + _CANCEL_GRACE_SECONDS, raw.cancel_safe)
            watchdog.daemon = True
            if admit is not None:
                setup += ";\n" + self.connection.catalogue_version_sql()
            if watch_pages:
                setup += ";\n" + postgres_pages.readings_statement(conn.info)
            try:
                try:  # our own text: several statements, one round trip
                    cursor = raw.execute(setup)
                except (pg_errors.InsufficientPrivilege, pg_errors.InvalidParameterValue) as exc:
                    if self.session_role:  # the login is not a member of the group's role
                        raise self.role_error(exc.diag.message_primary or type(exc).__name__) from None
                    raise
                rows = []  # the row of each SELECT, in order
                while True:
                    if cursor.description is not None:
                        rows.append(cursor.fetchone())
                    if not cursor.nextset():
                        break
                if admit is not None:
                    admit(self.connection.user_functions_at(tuple(rows[0]), conn))
                pages = postgres_pages.before(raw, conn.info, rows[-1]) if watch_pages else None
                watchdog.start()
                with stop_with(f"database '{self.db_id}'", raw.cancel_safe):
                    yield conn, pages
            except DBAPIError as exc:
                raise self._translate(exc.orig, timeout, conn) from None
            except psycopg.Error as exc:
                raise self._translate(exc, timeout, conn) from None
            finally:
                watchdog.cancel()
                self._reset(raw, conn)

    @property
    def _application_name(self) -> str:
        """``application_name`` as the server keeps it: printable ASCII, at most 63 bytes."""
        text = "".join(c if " " <= c <= "~" else "?" for c in self.application_name)
        return text[:63]

    def _reset(self, raw: psycopg.Connection[Any], conn: Connection) -> None:
        """Roll back always; then undo the session state a rollback keeps, so nothing passes
        to the next caller of the pooled connection: session advisory locks, and the random
        seed (``setseed(0.42)`` would make the next caller's ``random()`` predictable; a seed
        drawn from the OS is as good as the server's own). One round trip, like DISCARD ALL
        but without dropping the connection's prepared statements."""
        try:
            raw.rollback()
            raw.execute("SELECT pg_advisory_unlock_all(), setseed(%s)",
                        [_SYSTEM_RANDOM.uniform(-1.0, 1.0)])
            raw.rollback()
        except psycopg.Error:
            conn.invalidate()  # a broken session goes away instead of back into the pool

    def _stream(self, sql: str, sink: ResultSink, *, max_rows: int, timeout: float,
                is_explain: bool, admit: Admission | None = None) -> QueryStats:
        body = sql.rstrip().rstrip(";").rstrip()
        with self._transaction(timeout, watch_pages=True, admit=admit) as (conn, before):
            raw = conn.connection.driver_connection
            offset = 0
            try:
                if is_explain:  # EXPLAIN cannot be a subquery or a cursor; still one statement
                    stats = self._explain(raw, body, sink, max_rows)
                else:
                    offset = len(_WRAP_PREFIX)  # where body starts in what _wrap describes
                    wrapped, offset, types = self._wrap(raw, body, max_rows)
                    if isinstance(sink, CsvResultSink):
                        offset += len("COPY (")
                        stats = self._copy_csv(raw, wrapped, sink, max_rows)
                    else:
                        stats = self._stream_rows(raw, wrapped, sink, max_rows)
                    stats.column_types = [_column_type(oid) for oid in types]
                    if column_types.TIMESTAMP in stats.column_types:
                        # timestamptz values come in the session's zone (its TimeZone
                        # setting, which psycopg keeps from the server's ParameterStatus)
                        stats.time_zone = getattr(raw.info.timezone, "key", None)
                self._check_effects(raw, timeout, before)
                return stats
            except SinkFull:  # the result file's byte budget is spent
                # Checked all the same when COPY had finished; a COPY still running was
                # cancelled, which aborts the transaction like a timeout does (then only the
                # rollback and the session reset of _transaction apply, as for a timeout).
                if raw.info.transaction_status == pq.TransactionStatus.INTRANS:
                    self._check_effects(raw, timeout, before)
                raise
            except psycopg.Error as exc:
                raise self._translate(exc, timeout, conn, body, offset) from None

    def _wrap(self, raw: psycopg.Connection[Any], body: str, max_rows: int
              ) -> tuple[str, int, list[int]]:
        """The query as the server runs it, where ``body`` starts in that text, and the type
        oid of each column.

        ``SELECT * FROM (<body>) LIMIT max_rows + 1``, and, when the query has columns whose
        values can be of any size (text, bytea, JSON, arrays...), a check that stops the query
        on the server when one is over ``max_value_bytes``: libpq receives a whole row before
        the client can see its size, and holds it twice (its buffer and the copy it hands
        out), so a ``repeat('x', 2e8)`` must never be sent. The columns are learned from a
        Describe of the prepared query (one round trip, no planning), renamed positionally
        (``c1``, ``c2``... so duplicate names stay unambiguous) and given their names back.
        Sizes are read as ``_SIZE_OF`` says. Measured: no difference beyond noise on a 1M-row export.
        """
        plain = f"{_WRAP_PREFIX}{body}\n) AS nl2sql_result LIMIT {max_rows + 1}"
        columns = _describe(raw, f"{_WRAP_PREFIX}{body}\n) AS nl2sql_result")
        checks = [_SIZE_OF.get(oid, "pg_column_size({})").format(f"c{i}")
                  for i, (_, oid) in enumerate(columns, 1) if oid not in _BOUNDED_TYPES]
        oids = [oid for _, oid in columns]
        if not checks:
            return plain, len(_WRAP_PREFIX), oids
        limit = self.connection.config.max_value_bytes
        names = ", ".join(f"c{i} AS {_quote_identifier(name)}"
                          for i, (name, _) in enumerate(columns, 1))
        positions = ", ".join(f"c{i}" for i in range(1, len(columns) + 1))
        fits = " AND ".join(f"coalesce({check}, 0) <= {limit}" for check in checks)
        # A cast that fails only on an oversized row; the text names it for _translate.
        too_big = f"('{_VALUE_TOO_BIG} ' || greatest({', '.join(checks)}))::int::boolean"
        prefix = f"SELECT {names} FROM (\n"
        return (f"{prefix}{body}\n) AS nl2sql_result({positions}) WHERE CASE WHEN {fits} "
                f"THEN true ELSE {too_big} END LIMIT {max_rows + 1}", len(prefix), oids)

    def _copy_csv(self, raw: psycopg.Connection[Any], wrapped: str, sink: CsvResultSink,
                  max_rows: int) -> QueryStats:
        """COPY ... TO STDOUT: the server formats the CSV; we only move bytes.

        The protocol sends one CopyData message per row in COPY TO ("messages sent from the
        backend will always correspond to single data rows"), so counting messages counts rows
        exactly, even with newlines inside quoted values, at no parsing cost.
        """
        statement = f"COPY ({wrapped}) TO STDOUT WITH (FORMAT csv, HEADER true)"
        count, truncated, columns = 0, False, None
        max_record = self.connection.config.max_value_bytes
        with _SingleStatementCursor(raw) as cursor, cursor.copy(statement) as copy:
            for batch in _copy_batches(raw, copy, self.batch_size, self.batch_bytes, max_record):
                if batch is None:
                    raise self._value_too_big_error()
                if columns is None:  # the first message is the header line
                    header = batch.pop(0) if batch else b""
                    columns = next(csv.reader([header.decode(raw.info.encoding)]), [])
                    sink.begin(columns)
                if truncated:
                    continue  # draining the end of COPY (LIMIT n+1: at most one row is left)
                if count + len(batch) > max_rows:
                    batch, truncated = batch[: max_rows - count], True
                if batch:
                    sink.write_csv_records(batch)
                    count += len(batch)
        if columns is None:
            columns = []
            sink.begin(columns)
        return QueryStats(columns, count, truncated)

    def _stream_rows(self, raw: psycopg.Connection[Any], statement: str, sink: ResultSink,
                     max_rows: int) -> QueryStats:
        # A server-side cursor: DECLARE goes over the extended protocol (one statement), the
        # columns are known even for an empty result, and rows come in bounded batches.
        with raw.cursor(name="nl2sql_rows") as cursor:
            _json_as_text(cursor)
            cursor.execute(statement)
            columns = [d.name for d in cursor.description or ()]
            return self._drain(cursor, sink, columns, max_rows)

    def _explain(self, raw: psycopg.Connection[Any], statement: str, sink: ResultSink,
                 max_rows: int) -> QueryStats:
        """A plan is small (it grows with the query text, not the data): fetched at once."""
        with _SingleStatementCursor(raw) as cursor:
            _json_as_text(cursor)  # EXPLAIN (FORMAT JSON): the server's JSON text, not a repr
            cursor.execute(statement)
            columns = [d.name for d in cursor.description or ()]
            types = [_column_type(d.type_code) for d in cursor.description or ()]
            rows = cursor.fetchmany(max_rows + 1)
        sink.begin(columns)
        if rows[:max_rows]:
            sink.write_rows(rows[:max_rows])
        return QueryStats(columns, len(rows[:max_rows]), len(rows) > max_rows,
                          column_types=types)

    def _check_effects(self, raw: psycopg.Connection[Any], timeout: float,
                       pages_before: postgres_pages.Readings | None = None) -> None:
        """Refuse a query that left a trace the rollback alone would hide or keep: a write
        (an xid was assigned), a session advisory lock, a changed setting, or index pages
        written without an xid (``postgres_pages``)."""
        maintained = postgres_pages.maintained_indexes(raw, pages_before) if pages_before \
            else []
        if maintained:
            log.warning("query on database %r wrote pages of index %s without a transaction "
                        "id (index maintenance); a rollback cannot undo it", self.db_id,
                        ", ".join(maintained))
            raise QueryExecutionError(
                f"The query on database '{self.db_id}' wrote pages of index "
                f"{', '.join(maintained)} (index maintenance such as gin_clean_pending_list or "
                f"brin_summarize_*), which a read-only query may not do; the data is "
                f"unchanged but this cannot be rolled back: remove that call.",
                db_id=self.db_id)
        wrote, locked, settings = raw.execute(_EFFECTS_CHECK).fetchone()  # type: ignore[misc]
        ms = max(1, int(timeout * 1000))
        own = {f"statement_timeout={ms}", f"lock_timeout={ms}", "transaction_read_only=on",
               f"idle_in_transaction_session_timeout={ms + 10_000}",
               f"application_name={self._application_name}"}
        changed = sorted(s.split("=", 1)[0] for s in set(settings) - own)
        effects = (["wrote data"] if wrote else []) + (["took an advisory lock"] if locked else [])
        effects += [f"changed settings ({', '.join(changed)})"] if changed else []
        if effects:
            raise QueryExecutionError(
                f"The query on database '{self.db_id}' {' and '.join(effects)}, which a "
                f"read-only query may not do; it was undone: remove that part and try "
                f"again.", db_id=self.db_id)

    def _foreign_server_error(self, message: str, detail: str | None) -> DatabaseConnectionError:
        """A foreign table (postgres_fdw) whose server the query cannot reach as the role it
        runs as (a superuser login reads as pg_read_all_data, a group as its db_role): no user
        mapping, no password in it, a server that refuses. The set-up's, not the SQL's."""
        if message.startswith(_NO_USER_MAPPING):
            role = message[len(_NO_USER_MAPPING):].strip(' "')
            why = (" (the role a superuser login reads as)" if role == "pg_read_all_data"
                   else " (the role nl2sql reads as)")
            problem = f"has no user mapping for role '{role}'{why}"
        else:
            more = f": {detail.strip().rstrip('.')}" if detail and detail.strip() else ""
            problem = f"refuses the connection ({message.rstrip('.')}{more})"
        return DatabaseConnectionError(
            f"Database '{self.db_id}': a foreign table's server {problem}; fix its user mapping "
            f"(CREATE USER MAPPING FOR PUBLIC SERVER ... OPTIONS (user ..., password ...)), or "
            f"connect with a read-only login that has one.", db_id=self.db_id)

    def _translate(self, exc: BaseException | None, timeout: float, conn: Connection,
                   body: str | None = None, offset: int = 0) -> Exception:
        """One line for people: the server's message and, for a query, the line it points at."""
        if isinstance(exc, pg_errors.QueryCanceled):
            return self._timeout_error(timeout)
        if isinstance(exc, pg_errors.InvalidTextRepresentation) and _VALUE_TOO_BIG in str(exc):
            return self._value_too_big_error()
        if isinstance(exc, psycopg.OperationalError) and raw_closed(conn):
            conn.invalidate()
        diag = getattr(exc, "diag", None)
        message = (diag.message_primary if diag and diag.message_primary else str(exc)).strip()
        message = message.splitlines()[0] if message else type(exc).__name__
        if message.startswith(_NO_USER_MAPPING) or message == _NO_PASSWORD \
                or isinstance(exc, _FOREIGN_SERVER_ERRORS):
            return self._foreign_server_error(message, diag.message_detail if diag else None)
        where = ""
        position = diag.statement_position if diag else None
        if position and body is not None:
            index = max(0, int(position) - 1 - offset)  # positions are 1-based, in sent text
            where = f" (line {body[:index].count(chr(10)) + 1})"
        # The server's HINT ("Perhaps you meant to reference the column ...") is often the
        # most useful line for whoever fixes the SQL: keep it, on the same line.
        hint = " ".join((diag.message_hint or "").split()) if diag else ""
        hint_text = f" (hint: {hint.rstrip('.')})" if hint else ""
        return QueryExecutionError(
            f"PostgreSQL rejected the query on database '{self.db_id}': {message.rstrip('.')}{where}"
            f"{hint_text}; fix the SQL and try again.", db_id=self.db_id)


#: What postgres_fdw raises when it cannot connect to a foreign table's server: no user
#: mapping, a mapping without the password a non-superuser needs (its 2F003, a code other
#: errors share: told by the message), a server that refuses or is down (class 08).
_NO_USER_MAPPING = "user mapping not found for"
_NO_PASSWORD = "password is required"
_FOREIGN_SERVER_ERRORS = (pg_errors.SqlclientUnableToEstablishSqlconnection,
                          pg_errors.SqlserverRejectedEstablishmentOfSqlconnection)


def _column_type(oid: int) -> str | None:
    """The column type (``nl2sql.workspace.column_types``) of a type oid: a built-in type by
    its name (an array, or a built-in type none of ``_COLUMN_TYPES`` names, is text as the CSV
    writes it); None for a type of the database's own (an enum, a domain, a composite, an
    extension's)."""
    info = psycopg.postgres.types.get(oid)  # the built-in types, by their oid or array oid
    if info is None:
        return None
    if info.oid != oid:
        return column_types.TEXT  # an array: {1,2}
    return _COLUMN_TYPES.get(info.name, column_types.TEXT)


def _describe(raw: psycopg.Connection[Any], query: str) -> list[tuple[str, int]]:
    """(name, type oid) of each column of ``query``: prepared (parsed, not planned) and
    described, unnamed, over the extended protocol; errors as psycopg raises them."""
    pgconn, encoding = raw.pgconn, raw.info.encoding
    pgconn.send_prepare(b"", query.encode(encoding))
    for result in raw.wait(fetch_many(pgconn)):
        if result.status != pq.ExecStatus.COMMAND_OK:
            raise pg_errors.error_from_result(result, encoding=encoding)
    pgconn.send_describe_prepared(b"")
    (result, *_) = raw.wait(fetch_many(pgconn))
    if result.status != pq.ExecStatus.COMMAND_OK:
        raise pg_errors.error_from_result(result, encoding=encoding)
    return [((result.fname(i) or b"").decode(encoding), result.ftype(i))
            for i in range(result.nfields)]


def _quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    """``text`` as a string literal (standard_conforming_strings is pinned on)."""
    return "'" + text.replace("'", "''") + "'"


#: Types whose values Python may have no value for: 'infinity', a BC date, the year 10000+.
_DATE_TYPES = ("date", "timestamp", "timestamptz")


def _values_python_lacks_as_text(dbapi_connection: psycopg.Connection[Any],
                                 _record: Any) -> None:
    """Values Python has no value for are their text, as in a result COPY writes: a date or
    timestamp psycopg raises DataError for (``infinity``, ``4713-01-01 BC``: a sample row or
    a row lookup failed on it), and an interval (psycopg's timedelta makes a month 30 days:
    ``-3 mons`` read ``-90 days``)."""
    adapters = dbapi_connection.adapters
    adapters.register_loader("interval", TextLoader)
    for name in _DATE_TYPES:
        oid = adapters.types[name].oid
        loader = adapters.get_loader(oid, pq.Format.TEXT)
        if loader is not None:
            adapters.register_loader(oid, _or_text(loader))


@functools.cache
def _or_text(loader: type[Loader]) -> type[Loader]:
    """``loader`` (psycopg's C loaders take no subclass), the text where it raises DataError."""
    class OrText(Loader):
        def __init__(self, oid: int, context: Any = None) -> None:
            super().__init__(oid, context)
            self._load = loader(oid, context).load

        def load(self, data: Any) -> Any:
            try:
                return self._load(data)
            except psycopg.DataError:
                return bytes(data).decode()

    return OrText


def _json_as_text(cursor: psycopg.Cursor[Any]) -> None:
    """json/jsonb values as the server's text (the CSV dialect), not parsed into Python."""
    for name in ("json", "jsonb"):
        cursor.adapters.register_loader(name, TextLoader)


def _copy_batches(raw: psycopg.Connection[Any], copy: psycopg.Copy, size: int, max_bytes: int,
                  max_record: int) -> Iterator[list[bytes] | None]:
    """The rows of a running COPY TO in lists of up to ``size`` rows or about ``max_bytes``, one
    CopyData message each; ``None`` (and nothing more) when a row is over ``max_record`` bytes,
    before it is copied.

    ``Copy.read()`` costs about 1 us per row in generator and wait machinery, more than psql
    spends on a whole row; rows already in libpq's buffer are taken with a direct
    ``get_copy_data`` call instead, and ``Copy.read()`` only waits when the buffer is empty.
    Each row is copied to ``bytes`` at once: holding thousands of libpq-owned buffers until the
    batch is written measured ~1.6x slower than copying and freeing them one by one.
    """
    pgconn = raw.pgconn
    get_copy_data = pgconn.get_copy_data
    while True:
        batch: list[bytes] = []
        append = batch.append
        total = 0
        for _ in repeat(None, size):
            nbytes, data = get_copy_data(1)  # 1: never block
            if nbytes == 0:  # no whole row buffered: let psycopg wait for the socket
                if not (data := copy.read()):
                    yield batch
                    return
                nbytes = len(data)
            if nbytes > 0:
                if nbytes > max_record:
                    yield None
                    return
                append(bytes(data))
                total += nbytes
                if total > max_bytes:
                    break
            else:  # -1: COPY is over (or -2: failed); collect its result as psycopg would
                for result in raw.wait(fetch_many(pgconn)):
                    if result.status != pq.ExecStatus.COMMAND_OK:
                        raise pg_errors.error_from_result(result, encoding=raw.info.encoding)
                yield batch
                return
        yield batch


def raw_closed(conn: Connection) -> bool:
    try:
        return bool(conn.connection.driver_connection.closed)
    except Exception:  # noqa: BLE001 - a connection we cannot even inspect is broken
        return True
