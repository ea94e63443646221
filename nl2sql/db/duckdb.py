"""DuckDB: a ``.duckdb`` file and/or CSV/Parquet/JSON files, each file exposed as a view.

Engine layers (ARCHITECTURE.md, "Read-only, in layers"), each holding without the parser guard:
- the database file is opened ``read_only`` (files-only: an in-memory database);
- ``enable_external_access = false`` with ``allowed_paths`` = the configured files, extension
  auto-install/auto-load off, then ``lock_configuration = true``: SQL cannot read other files
  (``/etc/passwd``), write files (COPY), ATTACH, INSTALL/LOAD or change a setting;
- DuckDB's own parser (``extract_statements``) must find exactly one statement of type
  SELECT, which alone is executed (DuckDB would otherwise run every statement of a text);
- a timer interrupts the connection (``interrupt()``) at the time limit; each call is rolled
  back.
The file views are temporary views created on every pooled connection before it is used.
"""

from __future__ import annotations

import glob
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import QueuePool

from nl2sql.db.base import (Admission, CsvResultSink, DbConnection, DbOperations, QueryStats,
                            ResultSink)
from nl2sql._call_stop import stop_with
from nl2sql.config.memory_cap import ENV_MAX_MEMORY, warn_near_cap
from nl2sql.config.registry import FileViewSetting
from nl2sql.errors import ConfigError, DatabaseConnectionError, QueryExecutionError, QueryTimeoutError
from nl2sql.sql_guard.implicit_calls import OPERATOR_CHARS, ImplicitCalls
from nl2sql.sql_guard.user_functions import UserFunctions, from_view_definitions
from nl2sql.workspace import column_types
from nl2sql.workspace.csv_arrow import format_batch, record_bytes

import duckdb  # the duckdb extra; without it the backend registry says which to install

#: File suffixes and the DuckDB table function that reads them.
READERS = {".csv": "read_csv", ".tsv": "read_csv", ".txt": "read_csv", ".parquet": "read_parquet",
           ".json": "read_json", ".jsonl": "read_json", ".ndjson": "read_json"}
_COMPRESSED = (".gz", ".zst")
_VIEW_NAME = re.compile(r"[^0-9A-Za-z_]+")


#: A Hive partition folder (``year=2024``): its files are one dataset's, the folder's name and
#: value a column of it.
_PARTITION = re.compile(r"^[^=/\\]+=[^/\\]*$")


@dataclass(frozen=True)
class FileView:
    """A view over configured files: one file, or a dataset of several (a Hive-partitioned
    folder, or a name given several files in dbs.yaml) read as one table."""

    files: tuple[Path, ...]
    reader: str
    #: The files lie in ``key=value`` folders: each such folder is a column of the view.
    partitioned: bool = False
    #: ``read_csv``'s parameters as SQL (``, delim = ';'``): the database's ``csv_options``
    #: and the view's own over them.
    csv_options: str = ""

    def source(self) -> str:
        """The view's ``SELECT *`` source: the reader over its file or files (a list of
        files by name, never a folder or a pattern: external access allows only these)."""
        if len(self.files) == 1 and not self.partitioned:
            files = _literal(str(self.files[0]))
        else:
            files = "[" + ", ".join(_literal(str(file)) for file in self.files) + "]"
            files += (f", union_by_name = true, hive_partitioning = "
                      f"{'true' if self.partitioned else 'false'}")
        options = self.csv_options if self.reader == "read_csv" else ""
        return f"{self.reader}({files}{options})"


def _reader(path: Path) -> str | None:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSED:
        suffixes = suffixes[:-1]
    return READERS.get(suffixes[-1]) if suffixes and path.is_file() else None


def _view_name(text: str) -> str:
    return _VIEW_NAME.sub("_", text).strip("_") or "file"


def _dataset(path: Path) -> Path | None:
    """The folder of the Hive-partitioned dataset ``path`` belongs to: the one above the
    ``key=value`` folders that hold the file (``sales`` of ``sales/year=2024/month=1/x.parquet``),
    or None."""
    folder = path.parent
    while _PARTITION.match(folder.name) and folder.parent != folder:
        folder = folder.parent
    return folder if folder != path.parent else None


def file_views(patterns: list[str] | dict[str, str | list[str] | FileViewSetting] | None,
               db_id: str, csv_options: dict[str, Any] | None = None) -> dict[str, FileView]:
    """``view name -> FileView`` for the files the glob patterns match, sorted.

    A list of patterns: each file is a view named after the file without its suffixes,
    non-word characters replaced by ``_``, except that the files of a Hive-partitioned dataset
    (``sales/year=2024/month=1/data_0.parquet``) are one view named after its folder
    (``sales``). A mapping: each name is one view of every file its pattern(s) match, with
    ``read_csv`` parameters of its own over the database's ``csv_options``.
    """
    own: dict[str, dict[str, Any]] = {}
    if isinstance(patterns, dict):
        named = {}
        for name, items in patterns.items():
            if isinstance(items, FileViewSetting):
                own[name] = items.csv_options or {}
                items = items.files
            named[name] = _matches(name, [items] if isinstance(items, str) else items, db_id)
    else:
        named = {}
        places: dict[str, Path] = {}  # view name -> the file or dataset folder it reads
        for path in _matches(None, patterns or [], db_id):
            dataset = _dataset(path)
            place = dataset if dataset is not None else path
            name = _view_name(place.name if dataset is not None else
                              path.name[: len(path.name) - sum(len(s) for s in path.suffixes)])
            if places.setdefault(name, place) != place:
                raise ConfigError(
                    f"Database '{db_id}': {places[name]} and {place} would both be the view "
                    f"'{name}'; name a view for each in 'files' (files: {{orders_2024: "
                    f"'2024/orders.csv', ...}}), rename one or narrow 'files' in dbs.yaml.",
                    db_id=db_id)
            named.setdefault(name, []).append(path)
    views: dict[str, FileView] = {}
    for name, paths in named.items():
        readers = {_reader(path) for path in paths}
        if len(readers) > 1:
            kinds = ", ".join(sorted(r.removeprefix("read_") for r in readers if r))
            raise ConfigError(
                f"Database '{db_id}': the view '{name}' would read {kinds} files together; "
                f"give each kind its own name in 'files' in dbs.yaml.", db_id=db_id)
        options = {**(csv_options or {}), **own.get(name, {})}
        views[name] = FileView(tuple(sorted(set(paths))), readers.pop() or "",
                               any(_dataset(path) is not None for path in paths),
                               "".join(f", {key} = {_option(value)}"
                                       for key, value in options.items()))
    return views


def _matches(name: str | None, patterns: list[str], db_id: str) -> list[Path]:
    """The readable files (a known suffix) the patterns match, resolved; a pattern matching
    no file at all is a setup error."""
    found: list[Path] = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern, recursive=True))
        if not matches:
            where = f"'files' ({name})" if name else "'files'"
            raise ConfigError(f"Database '{db_id}': no file matches '{pattern}' in {where}; "
                              f"fix the pattern in dbs.yaml (relative to its folder).",
                              db_id=db_id)
        found += [Path(match).resolve() for match in matches if _reader(Path(match))]
    if name is not None and not found:
        raise ConfigError(f"Database '{db_id}': no CSV, Parquet or JSON file for the view "
                          f"'{name}' in 'files'; fix its pattern in dbs.yaml.", db_id=db_id)
    return found


#: DuckDB types whose text (a cast to VARCHAR) is already what the CSV dialect writes.
_PLAIN_TYPES = {"tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint", "usmallint",
                "uinteger", "ubigint", "uhugeint", "decimal", "date"}


def csv_record_sql(types: list[Any]) -> str | None:
    """A DuckDB expression over ``c0, c1, ...`` giving one whole CSV record in the dialect of
    ``nl2sql.workspace.csv_dialect`` (NULL empty, '' as "", minimal quoting, t/f, ISO dates), or None
    when a column type needs Python's formatting (floats, timestamps, blobs, nested...) or
    the result has one column (its special cases stay in one place)."""
    if len(types) < 2:
        return None
    parts = []
    for i, kind in enumerate(types):
        name, c = str(getattr(kind, "id", kind)).lower(), f"c{i}"
        if name in _PLAIN_TYPES:
            parts.append(f"coalesce(CAST({c} AS VARCHAR), '')")
        elif name == "boolean":
            parts.append(f"CASE WHEN {c} THEN 't' WHEN NOT {c} THEN 'f' ELSE '' END")
        elif name == "varchar":
            parts.append(f"CASE WHEN {c} IS NULL THEN '' WHEN {c} = '' OR strpos({c}, ',') > 0 "
                         f"OR strpos({c}, '\"') > 0 OR strpos({c}, chr(10)) > 0 "
                         f"OR strpos({c}, chr(13)) > 0 "
                         f"THEN '\"' || replace({c}, '\"', '\"\"') || '\"' ELSE {c} END")
        else:
            return None
    return " || ',' || ".join(parts) + " || chr(10)"


#: DuckDB types ``nl2sql.workspace.csv_arrow`` writes from Arrow exactly as the row path writes them.
_ARROW_TYPES = _PLAIN_TYPES | {"boolean", "varchar", "double", "float", "blob", "date",
                               "decimal", "uuid"}
_ARROW_BATCH_ROWS = 8192


def arrow_formats(types: list[Any]) -> bool:
    """Every column of this type list goes through the Arrow formatter (and pyarrow is here)."""
    if not all(str(getattr(kind, "id", kind)).lower() in _ARROW_TYPES for kind in types):
        return False
    try:
        import pyarrow  # noqa: F401 - a base dependency, but a trimmed install may lack it
    except ImportError:
        return False
    return True


#: The error text of a value over max_value_bytes (DuckDB's ``error()``), told apart from others.
_VALUE_TOO_BIG = "nl2sql: a value over max_value_bytes"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _identifier(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _option(value: Any) -> str:
    """A ``csv_options`` value as DuckDB SQL: text, a number, a boolean, a list of text
    (``names``, ``nullstr``) or a map of text (``types: {price: DOUBLE}``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(str(item)) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(str(k))}: {_literal(str(v))}"
                               for k, v in value.items()) + "}"
    return _literal(str(value))


def _typed(raw: Any, stats: QueryStats, type_names: list[str]) -> QueryStats:
    """``stats`` with the columns' types (DuckDB's type names) and, when a column is a
    ``TIMESTAMPTZ``, the session's time zone, which DuckDB writes those values in."""
    stats.column_types = [column_types.from_type_name(name) for name in type_names]
    if "timestamp with time zone" in type_names:
        stats.time_zone = raw.execute("SELECT current_setting('TimeZone')").fetchone()[0]
    return stats


class DuckdbConnection(DbConnection):
    refuses_big_literal_counts = True  # values are built in nl2sql's own memory
    #: and its interrupt does not stop one scalar function building a value: repeat('x', id *
    #: 300000000) ran 7 s and range(id * 100000000) 86 s past a 1 s time limit
    refuses_computed_counts = True
    #: csv_arrow writes the batches; pyarrow loads its pandas shim when it writes the first.
    first_use_imports = ("nl2sql.workspace.csv_arrow", "pyarrow.pandas_compat",
                         "pyarrow.vendored.version", "pandas")
    _database: Any = None
    #: How many times the database was opened: the catalogue's version (see ``catalogue_version``).
    _openings = 0

    def statement_stop(self, raw: Any) -> Callable[[], object]:
        return raw.interrupt

    @property
    def views(self) -> dict[str, FileView]:
        """The configured files as ``view name -> FileView``."""
        return file_views(self.config.files, self.db_id, self.config.csv_options)

    def _create_engine(self) -> Engine:
        path = self.config.path
        if path is not None and not path.is_file():
            raise DatabaseConnectionError(
                f"DuckDB file {path} for database '{self.db_id}' does not exist; fix its "
                f"'path' in dbs.yaml.", db_id=self.db_id)
        views = self.views
        try:
            # The process's memory and cores are the MCP server's: bounded per database.
            database = duckdb.connect(str(path) if path else ":memory:",
                                      read_only=path is not None,
                                      config={"autoinstall_known_extensions": False,
                                              "autoload_known_extensions": False,
                                              "memory_limit": self.config.memory_limit,
                                              "threads": self.config.threads})
            # DuckDB shares one instance per file and configuration in a process: a second
            # connection to the same file finds it already locked down by the first.
            locked = database.execute("SELECT current_setting('lock_configuration')").fetchone()
            if not (locked and locked[0]):
                allowed = ", ".join(_literal(str(file)) for view in views.values()
                                    for file in view.files)
                database.execute(f"SET allowed_paths = [{allowed}]")
                database.execute("SET enable_external_access = false")
                database.execute("SET lock_configuration = true")
        except duckdb.Error as exc:
            raise DatabaseConnectionError(
                f"Cannot open DuckDB database '{self.db_id}': {str(exc).splitlines()[0]}; "
                f"check 'path' in dbs.yaml.", db_id=self.db_id) from None
        warn_near_cap(f"database '{self.db_id}'", self.config.memory_limit, "memory_limit")
        self._database = database
        self._openings += 1
        statements = [f"CREATE TEMP VIEW {_identifier(name)} AS SELECT * FROM "
                      f"{view.source()}" for name, view in views.items()]
        if any(view.csv_options for view in views.values()):
            # a parameter read_csv does not take, or a value it cannot use: said once
            with database.cursor() as cursor:
                self._create_views(cursor, statements, views)

        search_path = self._search_path(database)

        def connect() -> Any:
            from duckdb_engine import ConnectionWrapper

            cursor = database.cursor()  # a connection of its own to the same database
            self._create_views(cursor, statements, views)
            if search_path:
                cursor.execute(f"SET search_path = {_literal(search_path)}")
            return ConnectionWrapper(cursor)

        engine = create_engine("duckdb://", creator=connect, poolclass=QueuePool,
                               pool_size=5, max_overflow=-1)
        return engine

    def _search_path(self, database: Any) -> str:
        """With several schemas configured, DuckDB's ``search_path`` naming them in order (for
        ``*`` every schema of the file, ``main`` first), so a bare table name is looked up in
        each, as on PostgreSQL; empty with one schema. (Set on each connection: it is a
        session's setting, which the locked configuration leaves settable.)"""
        wanted = self.config.schemas
        if not wanted:
            return ""
        existing = [name for (name,) in database.execute(
            "SELECT schema_name FROM duckdb_schemas() WHERE database_name = current_database()"
        ).fetchall()]
        if wanted == ["*"]:
            wanted = sorted(existing, key=lambda name: (name != "main", name))
        # a schema the file lacks is the extraction's one line, not a failed connection
        return ",".join(_identifier(name) for name in wanted if name in existing)

    def _create_views(self, cursor: Any, statements: list[str],
                      views: dict[str, FileView]) -> None:
        """Create the file views on ``cursor``; a file DuckDB cannot read is one line naming it
        and what to set (its encoding above all: Excel and Windows programs save Latin-1)."""
        for statement, (name, view) in zip(statements, views.items()):
            try:
                cursor.execute(statement)
            except duckdb.Error as exc:
                cursor.close()
                raise ConfigError(self._unreadable_file(exc, name, view),
                                  db_id=self.db_id) from None

    def _unreadable_file(self, exc: duckdb.Error, name: str, view: FileView) -> str:
        first, *rest = str(exc).splitlines()
        where = f"Database '{self.db_id}'"
        named = next((line.split("=", 1)[1].strip() for line in rest
                      if line.strip().startswith("file =")), None)
        file = named or (view.files[0].name if len(view.files) == 1 else f"the view '{name}'")
        if "not utf-8 encoded" in str(exc):
            return (f"{where}: {file} is not UTF-8 ({first.split(': ', 1)[-1]}); a file saved "
                    f"by Excel or another Windows program is usually Latin-1: add csv_options: "
                    f"{{encoding: latin-1}} (or utf-16) in dbs.yaml.")
        if view.csv_options and "CSV Error" not in first:
            hint = next((f"; d{line[1:].rstrip('?')}?" for line in rest
                         if line.startswith("Did you mean")), "")
            return (f"{where}: read_csv refuses its csv_options ({first}{hint}); fix "
                    f"'csv_options' in dbs.yaml.")
        reason = next((line.strip() for line in rest[1:] if line.strip()
                       and not line.startswith(("Original Line", "Possible Solution"))), "")
        return (f"{where}: DuckDB cannot read {file} ({first}{'; ' + reason if reason else ''}"
                f"); fix the file, or set read_csv's parameters in 'csv_options' in dbs.yaml.")

    def catalogue_version(self, conn: Any) -> int:
        """The database's opening: while nl2sql holds the file open read-only, no other
        connection or process can write it (DuckDB's file lock), so its macros and views can
        only have changed when it was closed and opened again."""
        return self._openings

    def read_user_functions(self, conn: Connection | None = None) -> UserFunctions:
        """Macros (DuckDB's user-defined functions) and the views that call one; macros
        named like a built-in, which DuckDB also calls for SQL syntax (``_shadowing``); the
        file's views, judged by the allowlist too (``view_reach.py``)."""
        with self._on(conn) as on:
            functions = [tuple(r) for r in on.exec_driver_sql(
                "SELECT DISTINCT schema_name, function_name FROM duckdb_functions() "
                "WHERE NOT internal")]
            # Temporary views are nl2sql's own, over the configured files (read_csv...).
            views = [tuple(r) for r in on.exec_driver_sql(
                "SELECT schema_name, view_name, sql FROM duckdb_views() "
                "WHERE NOT internal AND NOT temporary")]
            shadowing = on.exec_driver_sql(_SHADOWING_MACROS).all()
        return from_view_definitions(functions, views, "duckdb", implicit=_shadowing(shadowing))

    def read_keywords(self, conn: Connection) -> list[str]:
        # SQLAlchemy and sqlglot have no list of DuckDB's keywords: its own catalogue's. An
        # 'unreserved' or 'column_name' one is a fine column name; a 'type_function' one such
        # as 'at' is not (ORDER BY at fails, "at or near" the word after it).
        return [row[0] for row in conn.exec_driver_sql(
            "SELECT keyword_name FROM duckdb_keywords() "
            "WHERE keyword_category IN ('reserved', 'type_function')")]

    def dispose(self) -> None:
        super().dispose()
        if self._database is not None:
            self._database.close()
            self._database = None


class DuckdbOperations(DbOperations):
    connection: DuckdbConnection

    @contextmanager
    def _read_only(self, timeout: float, *, admit: Admission | None = None
                   ) -> Iterator[Connection]:
        with self.connection.connect() as conn:
            raw = conn.connection.driver_connection
            timer = threading.Timer(timeout, raw.interrupt)
            timer.daemon = True
            timer.start()
            try:
                self._admit(conn, admit)
                with stop_with(f"database '{self.db_id}'", raw.interrupt):
                    yield conn
            except DBAPIError as exc:
                raise self._translate(exc.orig, timeout) from None
            except duckdb.Error as exc:
                raise self._translate(exc, timeout) from None
            except MemoryError:  # Arrow formatting the rows, under the process's memory cap
                raise QueryExecutionError(
                    f"The result on database '{self.db_id}' needs more memory than nl2sql's "
                    f"process may use ({ENV_MAX_MEMORY}): select fewer rows or columns, or "
                    f"raise {ENV_MAX_MEMORY}.", db_id=self.db_id) from None
            finally:
                timer.cancel()
                try:
                    raw.rollback()
                except duckdb.ResourceInUseException:
                    conn.invalidate()  # a result still open: the connection is not reusable
                except duckdb.Error:
                    pass  # no transaction was open

    def _stream(self, sql: str, sink: ResultSink, *, max_rows: int, timeout: float,
                is_explain: bool, admit: Admission | None = None) -> QueryStats:
        with self._read_only(timeout, admit=admit) as conn:
            raw = conn.connection.driver_connection
            statement = self._one_select(raw, sql, is_explain)
            if isinstance(sink, CsvResultSink) and not is_explain:
                relation = raw.sql(statement.query)  # binds the query (types), runs nothing
                names = [kind.id for kind in relation.types]
                bounded = self._bounded(statement.query, relation.types)
                if hasattr(getattr(sink, "sink", sink), "write_csv_block") \
                        and arrow_formats(relation.types):
                    return _typed(raw, self._stream_arrow(raw, bounded, relation.columns, sink,
                                                          max_rows), names)
                record = csv_record_sql(relation.types)
                if record is not None:
                    return _typed(raw, self._stream_csv(raw, bounded, relation.columns, record,
                                                        sink, max_rows), names)
                # The rest (floats, timestamps, nested values...) as Python values, intervals
                # as DuckDB's text (``_bounded``): Python's timedelta has no months.
                raw.execute(bounded)
                return _typed(raw, self._drain(raw, sink, relation.columns, max_rows), names)
            raw.execute(statement)
            columns = [d[0] for d in raw.description or ()]
            return _typed(raw, self._drain(raw, sink, columns, max_rows),
                          [str(getattr(d[1], "id", d[1])) for d in raw.description or ()])

    def _stream_csv(self, raw: Any, bounded: str, columns: list[str], record: str,
                    sink: CsvResultSink, max_rows: int) -> QueryStats:
        """DuckDB writes each CSV record of ``bounded`` (the query as ``_bounded`` wraps it)
        itself (``csv_record_sql``); Python only moves bytes. Several times faster than
        formatting Python values (bench/export_mysql_duckdb.py)."""
        raw.execute(f"SELECT {record} FROM ({bounded}) AS nl2sql_bounded "
                    f"LIMIT {max_rows + 1}")
        sink.begin(columns)
        count, truncated = 0, False
        while batch := raw.fetchmany(self.batch_size):
            if count + len(batch) > max_rows:
                batch, truncated = batch[: max_rows - count], True
            if batch:
                sink.write_csv_records([row[0].encode("utf-8") for row in batch])
                count += len(batch)
            if truncated:
                break
        return QueryStats(columns, count, truncated)

    def _stream_arrow(self, raw: Any, bounded: str, columns: list[str], sink: Any,
                      max_rows: int) -> QueryStats:
        """DuckDB hands the result out as Arrow record batches and ``nl2sql.workspace.csv_arrow`` writes
        their CSV records in Arrow's kernels: no Python object per value, and no per-record
        string to move either (bench/export_mysql_duckdb.py)."""
        relation = raw.sql(f"{bounded} LIMIT {max_rows + 1}")
        # The relation's reader (a DB-API result's makes an extra copy of the rows); DuckDB 2
        # calls it to_arrow_reader, 1.x fetch_arrow_reader.
        reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
        reader = reader(_ARROW_BATCH_ROWS)
        sink.begin(columns)
        count, truncated = 0, False
        try:
            for batch in reader:
                if count + batch.num_rows > max_rows:
                    batch, truncated = batch.slice(0, max_rows - count), True
                if batch.num_rows:
                    sink.write_csv_block(*record_bytes(format_batch(batch)))
                    count += batch.num_rows
                if truncated:
                    break
        finally:  # a reader left open holds the connection: nothing else runs on it
            reader.close()
        return QueryStats(columns, count, truncated)

    def _bounded(self, query: str, types: list[Any]) -> str:
        """``query`` with its columns named ``c0, c1...``, each text or binary value over
        ``max_value_bytes`` turned into an error by DuckDB itself, before it is handed out,
        intervals as DuckDB writes them (``1 year 2 months``; Python's ``timedelta``
        counts a month as 30 days) and a 4-byte ``FLOAT`` as the double of its shortest
        digits, as PostgreSQL writes a ``real`` (``0.1``, not ``0.10000000149011612``).
        ``types``: the query's column types, from the relation it was bound to."""
        limit = self.connection.config.max_value_bytes
        names = [f"c{i}" for i in range(len(types))]
        checked = []
        for name, kind in zip(names, types):
            size = {"VARCHAR": f"strlen({name})", "BLOB": f"octet_length({name})"}.get(
                str(kind))
            if size:
                checked.append(f"CASE WHEN {size} > {limit} THEN error('{_VALUE_TOO_BIG}') "
                               f"ELSE {name} END AS {name}")
            elif str(kind) == "INTERVAL":
                checked.append(f"CAST({name} AS VARCHAR) AS {name}")
            elif str(kind) == "FLOAT":  # 0.1, not its double 0.10000000149011612
                checked.append(f"CAST(CAST({name} AS VARCHAR) AS DOUBLE) AS {name}")
            else:
                checked.append(name)
        body = query.rstrip().rstrip(";")
        return (f"SELECT {', '.join(checked)} FROM (\n{body}\n) AS "
                f"nl2sql_result({', '.join(names)})")

    def _one_select(self, raw: Any, sql: str, is_explain: bool) -> Any:
        """DuckDB's own parse of ``sql``: exactly one statement, a SELECT (or an EXPLAIN the
        parser guard accepted)."""
        statements = raw.extract_statements(sql)
        allowed = {duckdb.StatementType.SELECT}
        if is_explain:
            allowed.add(duckdb.StatementType.EXPLAIN)
        if len(statements) != 1 or statements[0].type not in allowed:
            kinds = ", ".join(s.type.name for s in statements) or "none"
            raise QueryExecutionError(
                f"DuckDB refused the query on database '{self.db_id}': only one SELECT "
                f"statement may run (found: {kinds}); send one SELECT, WITH or VALUES query.",
                db_id=self.db_id)
        return statements[0]

    def _translate(self, exc: BaseException | None, timeout: float) -> Exception:
        if isinstance(exc, duckdb.InterruptException):
            return QueryTimeoutError(
                f"Query on database '{self.db_id}' stopped after {timeout:g} s; add a "
                f"LIMIT/filter or raise query_timeout_seconds for db {self.db_id} in dbs.yaml.",
                db_id=self.db_id)
        message = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        if _VALUE_TOO_BIG in message:
            return self._value_too_big_error()
        if isinstance(exc, duckdb.OutOfMemoryException):
            return QueryExecutionError(
                f"The query on database '{self.db_id}' needs more memory than its limit "
                f"({self.connection.config.memory_limit}, memory_limit): select fewer rows or "
                f"columns, or raise memory_limit for db {self.db_id} in dbs.yaml.",
                db_id=self.db_id)
        return QueryExecutionError(f"DuckDB rejected the query on database '{self.db_id}': "
                                   f"{message.rstrip('.')}; fix the SQL and try again.",
                                   db_id=self.db_id)


# Macros named like a built-in function: DuckDB binds operators and syntax to functions by
# name (``a - b`` to ``-``, ``LIKE`` to ``~~``, ``||``, ``EXTRACT`` to ``date_part``...) and
# a macro of that name comes first, so it runs with no call of it in the query.
_SHADOWING_MACROS = """
SELECT DISTINCT schema_name, function_name FROM duckdb_functions()
WHERE NOT internal AND function_type IN ('macro', 'table_macro')
  AND function_name IN (SELECT function_name FROM duckdb_functions() WHERE internal)"""


def _shadowing(macros: list[Any]) -> ImplicitCalls:
    """A macro named like an operator is reached where the query spells the operator (or
    LIKE, IN...); one named like a built-in function by any query (syntax that calls it,
    such as ``EXTRACT``, names nothing)."""
    rows = []
    for schema, name in macros:
        symbol = all(char in OPERATOR_CHARS for char in name)
        what = f"the macro {schema}.{name}, which DuckDB calls in place of its built-in {name}"
        rows.append(("operator" if symbol else "every query", schema, name, schema, name, what))
    return ImplicitCalls.from_catalogue(rows)
