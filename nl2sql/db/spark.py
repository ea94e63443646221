"""Spark SQL through Spark Connect (``pyspark[connect]``, the ``spark`` extra).

One Spark Connect session per configured database, created on first use, reused by every
call (it is thread-safe) and re-created when the server lost it (a restart). The client is a
thin gRPC client: no JVM runs in our process.

Engine layers (ARCHITECTURE.md, "Read-only, in layers"). Spark has no read-only mode, so:
- every query is sent wrapped as ``SELECT * FROM (<query>) AS nl2sql_result LIMIT n``: Spark's
  own parser then accepts exactly one query (no command, DDL, DML, SET, CACHE, USE, a second
  statement or a script) and enforces the row cap;
- the session runs with ``spark.sql.runSQLOnFiles=false`` (no ``csv.`/path``` relations),
  and its string lexing pinned (``escapedStringLiterals`` and ``doubleQuotedIdentifiers`` off),
  verified when the session is made;
- every query carries a tag and is interrupted (``interruptTag``) at the time limit; the
  session stays usable for the next call;
- results stream as Arrow batches into the sink (no ``collect()``/``toPandas()``), with a row
  cap and a byte cap.
What the engine cannot refuse (``reflect``/``java_method``, ``TRANSFORM ... USING``) only the
parser layer and a least-privilege principal stop: see docs/backends.md, "Spark
(Spark Connect)".
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import re
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import pyarrow as pa
from sqlalchemy.exc import DBAPIError
from sqlglot import exp

from nl2sql.backends import Backend
from nl2sql.config.registry import DbConnectionConfig
from nl2sql.db.base import Admission, DbConnection, DbOperations, QueryStats, ResultSink
from nl2sql._call_stop import stop_with
from nl2sql.db.logins import LoginPrivileges
from nl2sql.db.spark_sql import SparkSqlConnection, resolve_remote
from nl2sql.sql_guard import spark as spark_rules
from nl2sql.sql_guard.user_functions import UserFunctions, from_view_definitions
from nl2sql.errors import (ConfigError, DatabaseConnectionError, QueryExecutionError,
                           QueryRejectedError, QueryTimeoutError)
from nl2sql.workspace import column_types
from nl2sql.workspace.csv_arrow import format_batch, record_bytes, writes

if TYPE_CHECKING:
    from nl2sql.sql_guard import ValidatedQuery

log = logging.getLogger(__name__)
# pyspark warns on stderr when its retries give up; the caller gets our one-line error instead.
warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]", category=UserWarning)
# Spark 4 deprecates escapedStringLiterals but still honours it: it stays pinned (off).
warnings.filterwarnings("ignore", message=r"The SQL config 'spark\.sql\.parser\.escapedString",
                        category=UserWarning)

T = TypeVar("T")

_WRAP_PREFIX = "SELECT * FROM (\n"
#: Spark's interval types that count months (``typeName``), sent as Spark's text.
_MONTH_INTERVALS = frozenset({"yearmonthinterval", "interval"})
#: Session settings the engine layer depends on, set and read back on every new session. Two
#: pin how Spark lexes strings to what the parser guard assumes (backslash escapes in '...' and
#: "...", and "..." a string, not a name); the last stops Spark from replacing ${...} in the
#: text with settings and environment variables (${env:AWS_SECRET_ACCESS_KEY}) before parsing.
ENGINE_SETTINGS = {"spark.sql.runSQLOnFiles": "false",
                   "spark.sql.parser.escapedStringLiterals": "false",
                   "spark.sql.ansi.doubleQuotedIdentifiers": "false",
                   "spark.sql.variable.substitute": "false"}
# Errors meaning the server no longer knows our session (restart) or cannot be reached.
_SESSION_LOST = re.compile(
    r"SESSION_NOT_FOUND|SESSION_CHANGED|SESSION_CLOSED|NO_ACTIVE_SESSION|INVALID_HANDLE|"
    r"StatusCode\.UNAVAILABLE|"
    r"UNAVAILABLE|failed to connect|Connection refused|Socket closed|Channel closed",
    re.IGNORECASE)
_GRPC_DETAILS = re.compile(r'details = "([^"\n]*)')
_POSITION = re.compile(r"\(line (\d+), pos (\d+)\)")


def _pyspark_session_class(backend: Backend) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "does not yet fully support pandas 3"
        try:
            from pyspark.logger import PySparkLogger
            from pyspark.sql.connect.session import SparkSession
        except ImportError as exc:  # the spark extra, or one of its own dependencies
            missing = (getattr(exc, "name", None) or "pyspark").partition(".")[0]
            raise backend.missing_driver(missing) from None
    # pyspark logs every server error with its JVM stack trace as JSON on stderr; our errors
    # are one line for people, raised to the caller instead.
    PySparkLogger.getLogger("SQLQueryContextLogger").disabled = True
    return SparkSession


def _quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


#: Spark types whose values grow without bound (text and binary), checked against
#: max_value_bytes on the server; and the error text that marks a value over it.
_SIZED_TYPES = frozenset({"string", "binary", "varchar", "char"})
_VALUE_TOO_BIG = "nl2sql: a value over max_value_bytes"


class SparkConnection(DbConnection):
    """A lazily created Spark Connect session (``remote``, ``catalog``, ``database``)."""

    #: Arrow batches go through csv_arrow; pyarrow loads its pandas shim at the first one.
    first_use_imports = ("nl2sql.workspace.csv_arrow", "pyarrow.pandas_compat",
                         "pyarrow.vendored.version", "pandas")

    #: Connection retries of the gRPC client before a call gives up (pyspark's default policy
    #: retries for minutes, which would hang a query when the server is down).
    max_retries: ClassVar[int] = 3
    sample_order_max_rows = 100_000  # no indexes: ORDER BY key LIMIT 3 would sort the table
    refuses_big_literal_counts = True  # repeat('x', 2e8) killed the server (executor memory)
    refuses_computed_counts = True  # and so did sequence(1, id * 300000000)

    def __init__(self, config: DbConnectionConfig) -> None:
        super().__init__(config)
        self._session: Any = None
        self._lock = threading.Lock()
        #: The server's database of global temporary views (``spark.sql.globalTempDatabase``,
        #: a static setting), read when the session is made.
        self._global_temp = spark_rules.GLOBAL_TEMP

    @property
    def schema(self) -> str | None:
        """The Spark database (namespace) holding the tables: ``database`` in dbs.yaml."""
        return self.config.database or self.config.effective_schema

    @property
    def remote_label(self) -> str:
        """The remote URL with its token hidden (for messages)."""
        try:
            return resolve_remote(self.config.remote or "", db_id=self.db_id).redacted()
        except Exception:  # noqa: BLE001 - a broken URL is reported when connecting
            return "the configured remote"

    def read_login_privileges(self) -> LoginPrivileges:
        """Spark Connect has no read-only mode or login nl2sql can check: the session may
        write whatever the server may, so it is reported as a login that can write."""
        return LoginPrivileges(f"Spark Connect session at {self.remote_label}",
                               writes=("no read-only mode: the server's own rights",))

    def query_admission(self, query: ValidatedQuery) -> Admission:
        """Also refuses the server's database of global temporary views under the name the
        server gives it (the guard knows only the default, ``global_temp``): any session may
        create a view there, and it is no part of the configured database. Checked with the
        catalogue, just before the query runs, when the session (and the name) exists."""
        admission = super().query_admission(query)

        def admit(functions: UserFunctions) -> None:
            for table in query.expression.find_all(exp.Table):
                try:
                    spark_rules.refuse_database(table, self._global_temp)
                except QueryRejectedError as error:
                    raise QueryRejectedError(error.message, db_id=self.db_id) from None
            admission.check(functions)
        return dataclasses.replace(admission, check=admit)

    def catalogue_version(self, conn: Any) -> tuple[Any, ...]:
        """What ``read_user_functions`` parses, fetched now: Spark's catalogue keeps no
        version or time of change (``CREATE OR REPLACE VIEW``), so its text is the version
        (two commands and one per view)."""
        return self._catalogue_rows()

    def read_user_functions(self, conn: Any = None) -> UserFunctions:
        """The database's user functions (``SHOW USER FUNCTIONS``: a SQL function's body is
        never seen by the guard) and its views that call one (their text parsed); any
        schema-qualified call counts as a user function (the guard refuses those anyway)."""
        functions, views = self._catalogue_rows()
        return from_view_definitions(functions, views, "spark", qualified_calls_are_user=True)

    def _catalogue_rows(self) -> tuple[tuple[tuple[str, str], ...],
                                       tuple[tuple[str, str, str], ...]]:
        """``(schema, function)`` of each user function, ``(schema, view, text)`` of each view."""
        where = f" IN {_quote(self.schema)}" if self.schema else ""
        rows, _ = self.fetch(f"SHOW USER FUNCTIONS{where}")
        functions = []
        for (name, *_rest) in rows:
            *qualifier, function = str(name).split(".")
            functions.append((qualifier[-1] if qualifier else "", function))
        views = []
        for namespace, view, *_rest in self.fetch(f"SHOW VIEWS{where}")[0]:
            schema = namespace or self.schema or ""
            relation = f"{_quote(schema)}.{_quote(view)}" if schema else _quote(view)
            text = str(self.fetch(f"SHOW CREATE TABLE {relation}")[0][0][0])
            views.append((schema, view, text))
        return tuple(functions), tuple(views)

    def _create_engine(self) -> Any:
        raise NotImplementedError("the spark backend has no SQLAlchemy engine; use session()")

    def load_driver(self) -> None:
        """The Spark Connect client (no engine; the first call makes the session)."""
        _pyspark_session_class()

    # -- the session -------------------------------------------------------------------------
    def session(self) -> Any:
        """The database's session, created on first use."""
        with self._lock:
            if self._session is None:
                self._session = self._create_session()
            return self._session

    def _create_session(self) -> Any:
        remote = resolve_remote(self.config.remote or "", db_id=self.db_id,
                                password=self.config.resolve_password())
        session_class = _pyspark_session_class(self.config.backend)
        try:
            session = session_class.builder.remote(remote.url()).create()
        except Exception as exc:  # noqa: BLE001 - pyspark raises several unrelated types
            raise self._connection_error(exc, remote.redacted()) from None
        self._limit_retries(session)
        try:
            for key, value in ENGINE_SETTINGS.items():
                session.conf.set(key, value)
            actual = {key: str(session.conf.get(key)).lower() for key in ENGINE_SETTINGS}
            self._global_temp = str(session.conf.get("spark.sql.globalTempDatabase",
                                                     spark_rules.GLOBAL_TEMP))
            if self.config.catalog:
                session.catalog.setCurrentCatalog(self.config.catalog)
            if self.schema:
                self._use_database(session, self.schema)
        except (ConfigError, DatabaseConnectionError):
            _close_quietly(session)
            raise
        except Exception as exc:  # noqa: BLE001
            _close_quietly(session)
            raise self._connection_error(exc, remote.redacted()) from None
        if actual != ENGINE_SETTINGS:
            _close_quietly(session)
            raise DatabaseConnectionError(
                f"The Spark server of database '{self.db_id}' did not accept "
                f"{', '.join(f'{k}={v}' for k, v in ENGINE_SETTINGS.items())} (it reports "
                f"{actual}); nl2sql will not query it without that setting.", db_id=self.db_id)
        return session

    def _limit_retries(self, session: Any) -> None:
        try:
            from pyspark.sql.connect.client.retries import DefaultPolicy

            session.client.set_retry_policies([DefaultPolicy(
                max_retries=self.max_retries, initial_backoff=200, max_backoff=2000)])
        except Exception:  # noqa: BLE001 - an older client: keep its own policy
            log.debug("could not shorten the Spark Connect retry policy", exc_info=True)

    def _use_database(self, session: Any, database: str) -> None:
        if not session.catalog.databaseExists(database):
            known = sorted(db.name for db in session.catalog.listDatabases())
            raise ConfigError(
                f"Database '{self.db_id}': the Spark catalog has no database '{database}' (it "
                f"has: {', '.join(known) or 'none'}); fix 'database' in dbs.yaml.",
                db_id=self.db_id)
        session.catalog.setCurrentDatabase(database)

    def _connection_error(self, exc: BaseException, where: str) -> DatabaseConnectionError:
        return DatabaseConnectionError(
            f"Cannot connect to Spark database '{self.db_id}' at {where}: {first_line(exc)}; "
            f"check that the Spark Connect server runs and 'remote' in dbs.yaml.",
            db_id=self.db_id)

    def reset(self) -> None:
        """Forget the session (the server lost it); the next call makes a new one."""
        with self._lock:
            session, self._session = self._session, None
        if session is not None:
            _close_quietly(session)

    def with_session(self, call: Callable[[Any], T], *, retry: Callable[[], bool] = lambda: True
                     ) -> T:
        """``call(session)``; when the server lost the session (a restart), once more on a new
        session, if ``retry()`` says nothing was handed out yet."""
        session = self.session()
        try:
            return call(session)
        except Exception as exc:
            if not is_session_lost(exc) or not retry():
                raise
            log.info("Spark session of %s lost (%s); reconnecting", self.db_id, first_line(exc))
            self.reset()
        try:
            return call(self.session())
        except Exception as exc:
            if is_session_lost(exc):
                raise self._connection_error(exc, self.remote_label) from None
            raise

    # -- the SQLAlchemy-shaped face for backend-neutral statement builders -------------------
    @contextmanager
    def connect(self) -> Iterator[SparkSqlConnection]:  # type: ignore[override]
        yield SparkSqlConnection(self.fetch, self.session())

    def fetch(self, sql: str, args: dict[str, Any] | None = None
              ) -> tuple[list[tuple[Any, ...]], list[str]]:
        """Run a small statement (catalog, sample) and return all its rows and column names."""

        def run(session: Any) -> tuple[list[tuple[Any, ...]], list[str]]:
            table = frame_table(session.sql(sql, args=args or None))
            return arrow_rows(table), list(table.column_names)

        try:
            return self.with_session(run)
        except Nl2SqlPassThrough:
            raise
        except Exception as exc:  # noqa: BLE001
            raise QueryExecutionError(
                f"Spark rejected a query on database '{self.db_id}': {first_line(exc)}.",
                db_id=self.db_id) from None

    def dispose(self) -> None:
        self.reset()


Nl2SqlPassThrough = (ConfigError, DatabaseConnectionError)


def _close_quietly(session: Any) -> None:
    """Release the server-side session and close the channel; never hang on a dead server."""
    try:
        session.client.set_retry_policies([])
    except Exception:  # noqa: BLE001
        pass
    try:
        session.stop()
    except Exception:  # noqa: BLE001 - the server may be gone already
        try:
            session.client.close()
        except Exception:  # noqa: BLE001
            pass


def is_session_lost(exc: BaseException) -> bool:
    return bool(_SESSION_LOST.search(f"{type(exc).__name__} {exc}"))


def first_line(exc: BaseException) -> str:
    """The error's first line, without Spark's SQLSTATE suffix and JVM stack trace."""
    text = str(exc).strip() or type(exc).__name__
    details = _GRPC_DETAILS.search(text)  # a raw gRPC error: its "details" say what happened
    line = details[1] if details else text.splitlines()[0].strip()
    line = re.sub(r"\s*SQLSTATE: \w+\.?", "", line)
    return line.rstrip(". ")


def query_frame(session: Any, text: str) -> Any:
    """A DataFrame of the query ``text``, made here: ``session.sql`` sends the text to the
    server first, which for a query (not a command) only answers with this same relation, one
    round trip for nothing (the query is parsed and analyzed again when it runs)."""
    from pyspark.sql.connect.dataframe import DataFrame
    from pyspark.sql.connect.plan import SQL

    return DataFrame(SQL(text), session)


def command_rows(frame: Any) -> Any:
    """The Arrow table a command (``SHOW ...``) sent back with its answer to ``session.sql``,
    read here; ``toArrow()`` would send those rows to the server to have them sent back. None
    when ``frame`` is anything else (a query: it runs with ``toArrow()``)."""
    relation = getattr(getattr(frame, "_plan", None), "_plan", None)  # pyspark's CachedRelation
    if relation is None or not relation.HasField("local_relation") \
            or not relation.local_relation.data:
        return None
    import pyarrow as pa

    return pa.ipc.open_stream(relation.local_relation.data).read_all()


def frame_table(frame: Any) -> Any:
    """All of ``frame``'s rows as an Arrow table: a command's as they came with its answer
    (``command_rows``), anything else run (``toArrow``)."""
    table = command_rows(frame)
    return frame.toArrow() if table is None else table


def arrow_rows(table: Any) -> list[tuple[Any, ...]]:
    """An Arrow table (or record batch) as Python tuples; zoned timestamps become the naive
    local times Spark shows for them."""
    columns = [python_values(column) for column in table.columns]
    return list(zip(*columns)) if columns else [() for _ in range(table.num_rows)]


def python_values(column: Any) -> list[Any]:
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_timestamp(column.type) and column.type.tz is not None:
        column = pc.local_timestamp(column)
    if pa.types.is_map(column.type):  # Arrow hands out a map as (key, value) pairs
        return [None if pairs is None else {_json_key(key): value for key, value in pairs}
                for pairs in column.to_pylist()]
    return column.to_pylist()


def _json_key(key: Any) -> Any:
    """A map key as a JSON object can have it (a struct or array key as its text)."""
    return key if isinstance(key, (str, int, float, bool)) or key is None else str(key)


def _arrow_csv_writer(sink: ResultSink, schema: Any) -> Any:
    """A function writing one record batch as CSV through ``nl2sql.workspace.csv_arrow`` into ``sink``,
    or ``False`` when the sink takes no CSV blocks or a column type needs the row path (zoned
    timestamps, nested types...)."""
    if not hasattr(getattr(sink, "sink", sink), "write_csv_block") \
            or not all(writes(field.type) for field in schema):
        return False

    def write(batch: Any) -> None:
        if batch.num_rows:
            sink.write_csv_block(*record_bytes(format_batch(batch)))  # type: ignore[attr-defined]

    return write


class SparkOperations(DbOperations):
    connection: SparkConnection

    #: A result stops (``truncated``) once its Arrow batches pass this many bytes.
    max_result_bytes: ClassVar[int] = 1 << 30

    def _stream(self, sql: str, sink: ResultSink, *, max_rows: int, timeout: float,
                is_explain: bool, admit: Admission | None = None) -> QueryStats:
        body = sql.rstrip().rstrip(";").rstrip()
        self._admit(None, admit)  # Spark has no transaction: checked just before it runs
        started = threading.Event()  # set once the sink got something: no retry after that

        def run(session: Any) -> QueryStats:
            with self._tagged(session, timeout):
                text = body if is_explain else self._bounded(session, body, max_rows)
                return self._stream_batches(session, text, sink, max_rows, started)

        try:
            return self.connection.with_session(run, retry=lambda: not started.is_set())
        except Nl2SqlPassThrough + (QueryTimeoutError,):
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._rejected(exc, 0 if is_explain else 1) from None

    def _bounded(self, session: Any, body: str, max_rows: int) -> str:
        """``body`` wrapped for the row cap, each text or binary value over ``max_value_bytes``
        turned into an error on the server (``raise_error``), so no such value is ever sent,
        intervals with months as Spark writes them (``INTERVAL '1-2' YEAR TO MONTH``:
        pyarrow cannot read a year-month interval, and a month has no fixed length), a
        ``VARIANT`` as its JSON text and a 4-byte ``FLOAT`` as the double of its shortest
        digits (``0.1``, not ``0.10000000149011612``): the columns' types come from an
        analysis of the query (nothing runs)."""
        wrapped = f"{_WRAP_PREFIX}{body}\n) AS nl2sql_result"
        fields = query_frame(session, wrapped).schema.fields
        limit = self.connection.config.max_value_bytes
        names = [f"c{i}" for i in range(len(fields))]
        checked = []
        for name, field in zip(names, fields):
            alias = "`" + field.name.replace("`", "``") + "`"
            kind = field.dataType.typeName()
            if kind in _SIZED_TYPES or kind == "variant":
                value = f"CAST({name} AS STRING)" if kind == "variant" else name
                checked.append(f"CASE WHEN octet_length({value}) > {limit} THEN "
                               f"raise_error('{_VALUE_TOO_BIG}') ELSE {value} END AS {alias}")
            elif kind in _MONTH_INTERVALS:  # a day-time interval is a duration (timedelta)
                checked.append(f"CAST({name} AS STRING) AS {alias}")
            elif kind == "float":  # 0.1, not its double 0.10000000149011612
                checked.append(f"CAST(CAST({name} AS STRING) AS DOUBLE) AS {alias}")
            else:
                checked.append(f"{name} AS {alias}")
        return (f"SELECT {', '.join(checked) or '*'} FROM (\n{body}\n) AS "
                f"nl2sql_result{'(' + ', '.join(names) + ')' if names else ''} "
                f"LIMIT {max_rows + 1}")

    def _stream_batches(self, session: Any, text: str, sink: ResultSink, max_rows: int,
                        started: threading.Event) -> QueryStats:
        df = query_frame(session, text)
        plan = df._plan.to_proto(session.client)
        columns: list[str] | None = None
        types: list[str | None] | None = None
        count, size, truncated = 0, 0, False
        arrow_csv: Any = None  # decided on the first batch: a writer, or False
        batches = session.client.to_table_as_iterator(plan, {})
        try:
            for item in batches:
                if not hasattr(item, "num_rows"):  # the StructType announcing the columns
                    if columns is None:
                        columns = list(item.names)
                        types = [column_types.from_type_name(field.dataType.typeName())
                                 for field in item.fields]
                        sink.begin(columns)
                        started.set()
                    continue
                if columns is None:
                    columns = list(item.column_names)
                    sink.begin(columns)
                    started.set()
                if types is None:
                    types = [_arrow_column_type(field.type) for field in item.schema]
                if item.num_rows == 0:
                    continue
                if count + item.num_rows > max_rows:
                    item, truncated = item.slice(0, max_rows - count), True
                size += item.nbytes
                if item.num_rows:
                    if arrow_csv is None:
                        arrow_csv = _arrow_csv_writer(sink, item.schema)
                    if arrow_csv:  # CSV text from Arrow kernels, no Python value per cell
                        for batch in item.to_batches() if hasattr(item, "to_batches") else [item]:
                            arrow_csv(batch)
                    else:
                        for start in range(0, item.num_rows, self.batch_size):
                            sink.write_rows(arrow_rows(item.slice(start, self.batch_size)))
                    count += item.num_rows
                if truncated or size > self.max_result_bytes:
                    truncated = True
                    break
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()
        if columns is None:
            columns = list(df.columns)
            sink.begin(columns)
        return QueryStats(columns, count, truncated, column_types=types)

    @contextmanager
    def _tagged(self, session: Any, timeout: float) -> Iterator[None]:
        """Tag the thread's operations; interrupt them at the time limit."""
        tag = f"nl2sql-{uuid.uuid4().hex}"
        fired = threading.Event()

        def interrupt() -> None:
            fired.set()
            try:
                session.interruptTag(tag)
            except Exception:  # noqa: BLE001 - best effort; the caller reports the timeout
                log.warning("could not interrupt Spark operations tagged %s", tag)

        timer = threading.Timer(timeout, interrupt)
        timer.daemon = True
        session.addTag(tag)
        timer.start()
        try:
            # stop_with interrupts again until the block is left: an interruptTag that lands
            # while the request is on its way (a loaded machine) would stop nothing
            stop = functools.partial(session.interruptTag, tag)
            with stop_with(f"database '{self.db_id}'", stop):
                yield
        except Exception:
            if fired.is_set():  # whatever the interrupted call raised, it was the time limit
                raise self._timeout(timeout) from None
            raise
        finally:
            timer.cancel()
            try:
                session.removeTag(tag)
            except Exception:  # noqa: BLE001
                pass
        if fired.is_set():
            raise self._timeout(timeout)

    def _timeout(self, timeout: float) -> QueryTimeoutError:
        return QueryTimeoutError(
            f"Query on database '{self.db_id}' stopped after {timeout:g} s; add a LIMIT/filter "
            f"or raise query_timeout_seconds for db {self.db_id} in dbs.yaml.", db_id=self.db_id)

    def _rejected(self, exc: BaseException, lines_added: int) -> Exception:
        message = first_line(exc)
        if _VALUE_TOO_BIG in str(exc):
            return self._value_too_big_error()
        if not type(exc).__module__.startswith(("pyspark", "grpc", "py4j")):
            # Not Spark's answer: reading its batches failed here (pyarrow's KeyError: 21 for
            # a type it has no class for), which the query's text cannot fix.
            return QueryExecutionError(
                f"The result on database '{self.db_id}' has a value nl2sql cannot read "
                f"({type(exc).__name__}: {message}); cast unusual columns (intervals, nested "
                f"values) to STRING in the SELECT and try again.", db_id=self.db_id)
        match = _POSITION.search(str(exc))
        if match:
            line = max(1, int(match[1]) - lines_added)
            message = _POSITION.sub("", message).rstrip(". ") + f" (line {line})"
        return QueryExecutionError(
            f"Spark rejected the query on database '{self.db_id}': {message}; fix the SQL and "
            f"try again.", db_id=self.db_id)

    @contextmanager
    def _read_only(self, timeout: float, *, admit: Admission | None = None
                   ) -> Iterator[SparkSqlConnection]:  # type: ignore[override]
        """For the neutral row lookups: the SQLAlchemy-shaped face, tagged and time-limited."""
        self._admit(None, admit)
        session = self.connection.session()
        try:
            with self._tagged(session, timeout):
                yield SparkSqlConnection(self.connection.fetch, session)
        except DBAPIError as exc:  # the face's wrapping of our own QueryExecutionError
            raise exc.orig from None  # type: ignore[misc]
        except Nl2SqlPassThrough + (QueryExecutionError,):
            raise
        except Exception as exc:  # noqa: BLE001
            raise self._rejected(exc, 0) from None


def _arrow_column_type(arrow_type: Any) -> str | None:
    """The column type of an Arrow type (a batch's schema, when no Spark schema came first)."""
    for check, found in ((pa.types.is_boolean, column_types.BOOLEAN),
                         (pa.types.is_integer, column_types.INTEGER),
                         (pa.types.is_floating, column_types.NUMBER),
                         (pa.types.is_decimal, column_types.NUMBER),
                         (pa.types.is_date, column_types.DATE),
                         (pa.types.is_timestamp, column_types.TIMESTAMP),
                         (pa.types.is_binary, column_types.BINARY),
                         (pa.types.is_large_binary, column_types.BINARY)):
        if check(arrow_type):
            return found
    return column_types.TEXT
