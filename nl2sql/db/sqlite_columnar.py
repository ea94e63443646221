"""When a SQLite result turns out big, hand it to the columnar export (ADBC -> Arrow -> CSV).

Every query starts on the row path: the guarded ``sqlite3`` connection (``mode=ro``, the
authorizer, ``SQLITE_LIMIT_LENGTH``, the progress-handler deadline). Small results never leave
it. Once ``SWITCH_ROWS`` rows have been written and more are coming, ``ColumnarTakeOver`` asks
the columnar worker process to write the whole result again, from the start, at C++ speed, into
a file beside the row path's; if it succeeds that file replaces the row path's, else the row
path simply goes on from where it paused (its cursor stays open meanwhile).

Why the worker's plain ``mode=ro`` ADBC connection is a sound place to run the query:
- The text the worker runs was compiled on the guarded connection first, under the same
  per-query authorizer: the user's query itself (it is running there) and, when a check column
  is added, the wrapped text (``EXPLAIN`` prepares it: the authorizer fires at prepare time,
  nothing runs). So every table, function and pragma it touches was allowed there, and the
  parser guard had passed the query before any of this.
- The worker's connection is opened ``mode=ro`` on the same file, with no ATTACH in the text
  (the authorizer refuses it) and the driver's extension loading off: it cannot write.
- The time limit is the same deadline: the parent waits for the worker until then and kills it
  (``columnar_worker``). Row cap, byte budget and the value size limit are applied by the worker
  exactly as the row path applies them (``sqlite_arrow_export``).
- The file is byte-identical to the row path's: SQLite's dynamic typing is the hard part, see
  ``sqlite_arrow_export``; the column kinds it must find are the ones the row path saw here.

``NL2SQL_COLUMNAR_EXPORT=0`` switches the take-over off (the row path then writes everything).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from nl2sql.workspace.csv_dialect import CsvRowFormatter

if TYPE_CHECKING:
    from nl2sql.db.base import QueryStats, _BoundedSink
    from nl2sql.workspace.results import CsvResultWriter

logger = logging.getLogger(__name__)

#: Rows the row path writes before a result counts as big; the column kinds come from them.
#: Measured on 1M bench rows: 2,000 rows take the row path 9-10 ms, 10,000 rows 32-38 ms, all of
#: it done again by the worker. ADBC infers its Arrow types from its own first batch, which may reach
#: further: a column whose kind changes there arrives with another Arrow type than its kind
#: expects, and the worker answers "unsupported".
SWITCH_ROWS = 2_000
#: Rows per Arrow batch: up to this many, fewer for wide rows (``_BATCH_BYTES`` per batch).
#: 32,768 measured a little faster than 8,192 and 4,096 (fewer calls per row).
_MAX_BATCH_ROWS = 32_768
_MIN_BATCH_ROWS = 64
_BATCH_BYTES = 4 << 20
_NONE = type(None)
_available: bool | None = None
_NEUTRAL_NODES: tuple[type, ...] = ()


def columnar_available() -> bool:
    """Arrow and the ADBC SQLite driver are installed, and the take-over is not switched off."""
    global _available
    if os.environ.get("NL2SQL_COLUMNAR_EXPORT", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    if _available is None:
        _available = all(importlib.util.find_spec(name) is not None
                         for name in ("pyarrow", "adbc_driver_sqlite"))
    return _available


def column_kind(types: set[type]) -> str | None:
    """The one Arrow-typed kind of a column that held these Python types; ``None``: mixed."""
    kinds = types - {_NONE}
    if not kinds:
        return "null"
    if kinds == {int}:
        return "int"
    if kinds <= {int, float}:
        return "float"
    if kinds == {str}:
        return "text"
    if kinds == {bytes}:
        return "blob"
    return None


def version_neutral(sql: str) -> bool:
    """The query reads stored values, compares them and does arithmetic, nothing more: no
    function, cast, ``||``, LIKE/GLOB or window, no float literal. Such a query gives the same rows
    on any SQLite 3 version. Others may not: e.g. turning a float into text (a CAST, ``||``, a
    text function, a float compared with a TEXT column) writes ``1.0e+15`` with SQLite 3.40 and
    ``1000000000000000.0`` with 3.53, so they stay on the row path when the ADBC driver's
    SQLite is another version than Python's."""
    global _NEUTRAL_NODES
    from sqlglot import exp, parse_one

    _NEUTRAL_NODES = _NEUTRAL_NODES or _neutral_nodes()
    try:
        tree = parse_one(sql, read="sqlite")
    except Exception:  # noqa: BLE001
        return False
    for node in tree.walk():
        if not isinstance(node, _NEUTRAL_NODES):
            return False
        if isinstance(node, exp.Literal) and not node.is_string and not node.this.isdigit():
            return False
    return True


def _neutral_nodes() -> tuple[type, ...]:
    from sqlglot import exp

    return (exp.Select, exp.Star, exp.Column, exp.Identifier, exp.Table, exp.TableAlias,
            exp.Alias, exp.From, exp.Join, exp.Where, exp.Order, exp.Ordered, exp.Limit,
            exp.Offset, exp.Group, exp.Distinct, exp.Paren, exp.Literal, exp.Null,
            exp.Boolean, exp.Neg, exp.And, exp.Or, exp.Not, exp.Is, exp.EQ, exp.NEQ, exp.GT,
            exp.GTE, exp.LT, exp.LTE, exp.In, exp.Between, exp.Tuple, exp.Subquery,
            exp.Union, exp.Intersect, exp.Except, exp.Add, exp.Sub, exp.Mul, exp.Div,
            exp.Mod)


def affinity(declared: str) -> str:
    """SQLite's column affinity for a declared type (the rules of "Datatypes In SQLite", 3.1)."""
    text = declared.upper()
    if "INT" in text:
        return "integer"
    if any(word in text for word in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if "BLOB" in text or not text.strip():
        return "blob"
    if any(word in text for word in ("REAL", "FLOA", "DOUB")):
        return "real"
    return "numeric"


def column_affinities(raw: sqlite3.Connection, sql: str, tables: dict[str, list[str]],
                      count: int) -> list[str | None]:
    """The affinity of each result column that is a plain column of a table (not a view, not
    an expression), else ``None``; all ``None`` when the query is not one plain SELECT.

    An affinity is a promise about every stored value: a TEXT column holds no number (SQLite
    turns numbers into text on insert), a REAL column no integer. It spares the check column
    those tests (``checked_sql``), which cost as much as reading the rows. ``tables`` (from the
    cached schema) lets sqlglot expand ``*``; the declared types come from the file itself."""
    from sqlglot import exp, parse_one
    from sqlglot.optimizer.qualify import qualify
    from sqlglot.optimizer.scope import build_scope

    unknown: list[str | None] = [None] * count
    try:
        schema = {name: {column: "TEXT" for column in columns}
                  for name, columns in tables.items()}
        tree = qualify(parse_one(sql, read="sqlite"), schema=schema, dialect="sqlite",
                       validate_qualify_columns=False)
        scope = build_scope(tree)
        if not isinstance(tree, exp.Select) or scope is None or len(tree.expressions) != count:
            return unknown
        origins: list[tuple[str, str] | None] = []
        for projection in tree.expressions:
            column = projection.this if isinstance(projection, exp.Alias) else projection
            source = scope.sources.get(column.table) if isinstance(column, exp.Column) else None
            origins.append((source.name, column.name) if isinstance(source, exp.Table)
                           and not source.args.get("db") else None)
        declared: dict[str, dict[str, str]] = {}
        for table in {origin[0] for origin in origins if origin}:
            kind = raw.execute("SELECT type FROM sqlite_schema WHERE name = ? COLLATE NOCASE",
                               (table,)).fetchone()
            if kind and kind[0] == "table":
                declared[table] = {name.lower(): decl or "" for name, decl in raw.execute(
                    "SELECT name, type FROM pragma_table_info(?)", (table,))}
        return [affinity(declared[table][column.lower()])
                if origin and (table := origin[0]) in declared
                and (column := origin[1]).lower() in declared[table] else None
                for origin in origins]
    except Exception as exc:  # noqa: BLE001 - no promise then: every column is checked
        logger.debug("column origins unknown (%s): every value is checked", exc)
        return unknown


def checked_sql(sql: str, kinds: Sequence[str],
                affinities: Sequence[str | None] | None = None) -> tuple[str, bool]:
    """The text the worker runs: ``sql`` itself, or ``sql`` with one more column that is 1 while
    every value is one ADBC hands over as the row path would write it, where ADBC could convert
    silently: in a text column only text (a blob or a float would be converted to text), in a
    blob column only blobs; in a float column no integer from 1e15 on (the row path writes its
    digits, ADBC made it a float: ``1e+15``). NULL is always fine; integer columns need no
    test (ADBC refuses any other value there). A column's affinity drops the tests it makes
    true (``column_affinities``). Comparisons, not ``typeof()``: SQLite orders NULL < numbers <
    text < blob; the ``typeof()`` call runs only for a big number."""
    affinities = affinities or [None] * len(kinds)
    full, not_blob = [], []
    for index, (kind, column_affinity) in enumerate(zip(kinds, affinities)):
        name = f"c{index}"
        if kind == "text" and column_affinity == "text":
            not_blob.append(f"{name} < x''")  # NULL for NULL: folded by coalesce below
        elif kind == "text":
            full.append(f"({name} IS NULL OR ({name} >= '' AND {name} < x''))")
        elif kind == "blob":
            full.append(f"({name} IS NULL OR {name} >= x'')")
        elif kind == "float" and column_affinity != "real":
            full.append(f"({name} IS NULL OR ({name} > -1e15 AND {name} < 1e15) "
                        f"OR typeof({name}) = 'real')")
    if not_blob:
        full.insert(0, f"coalesce({' AND '.join(not_blob)}, 1)")
    if not full:
        return sql, False
    names = ", ".join(f"c{index}" for index in range(len(kinds)))
    return (f"WITH nl2sql_checked({names}) AS (\n{sql}\n)\n"
            f"SELECT {names}, {' AND '.join(full)} FROM nl2sql_checked"), True


class ColumnarTakeOver:
    """The ``take_over`` hook of ``DbOperations._drain`` for one SQLite query."""

    def __init__(self, raw: sqlite3.Connection, uri: Callable[[], str], sql: str,
                 sink: _BoundedSink, writer: CsvResultWriter, columns: list[str], *,
                 max_rows: int, max_value_bytes: int, value_too_big: Callable[[], Exception],
                 tables: Callable[[], dict[str, list[str]]]) -> None:
        """``uri`` and ``tables`` (each table's columns) are asked for only when a result
        is big enough to hand over: every query makes this hook, most never use it."""
        self.raw = raw
        self.tables = tables
        self.uri = uri
        self.max_value_bytes = max_value_bytes
        self.value_too_big = value_too_big
        self.sql = sql
        self.sink = sink
        self.writer = writer
        self.columns = columns
        self.max_rows = max_rows
        self._types: list[set[type]] = [set() for _ in columns]
        self._done = max_rows <= SWITCH_ROWS

    def __call__(self, batch: Sequence[Sequence[Any]], count: int) -> QueryStats | None:
        if self._done:
            return None
        if count - len(batch) < SWITCH_ROWS:  # the kinds come from the first rows
            for types, values in zip(self._types, zip(*batch)):
                types.update(map(type, values))
        if count < SWITCH_ROWS:
            return None
        self._done = True  # one decision per query, unless the worker is not free yet
        return self._take_over(count)

    def _take_over(self, count: int) -> QueryStats | None:
        from nl2sql.db.base import QueryStats
        from nl2sql.db.columnar_worker import WorkerTimeout, shared_worker

        kinds = [column_kind(types) for types in self._types]
        if None in kinds:
            logger.debug("columnar export skipped: a column mixes storage classes")
            return None
        worker = shared_worker()
        try:
            if not worker.ready(timeout=0):
                # Starting, or busy with another export: the rows go on, and the next batch
                # asks again (a big first result still goes columnar once the worker is up).
                self._done = False
                return None
        except RuntimeError as exc:  # the child died while starting: rows, and a new one later
            logger.warning("columnar export worker failed to start: %s", exc)
            return None
        if worker.sqlite_version != sqlite3.sqlite_version and not version_neutral(self.sql):
            logger.debug("columnar export skipped: SQLite %s here, %s in the ADBC driver, and "
                         "the query computes values", sqlite3.sqlite_version,
                         worker.sqlite_version)
            return None
        affinities = column_affinities(self.raw, self.sql, self.tables(), len(kinds))
        sql, checked = checked_sql(self.sql, kinds, affinities)  # type: ignore[arg-type]
        if checked and not self._compiles_guarded(sql):
            return None
        header = CsvRowFormatter().header(self.columns)
        per_row = max(1, (self.writer.bytes_written - len(header.encode("utf-8"))) // count)
        out = self.writer.sibling_temp_file()
        request = {
            "uri": self.uri(), "sql": sql, "out": str(out),
            "header": header, "kinds": kinds, "checked": checked, "max_rows": self.max_rows,
            "max_bytes": self.writer.max_bytes,
            "max_value_bytes": self.max_value_bytes,
            "batch_rows": min(_MAX_BATCH_ROWS, max(_MIN_BATCH_ROWS, _BATCH_BYTES // per_row)),
        }
        adopted = False
        try:
            try:
                reply = worker.run(request, self.sink.deadline)
            except WorkerTimeout:
                raise self.sink.on_timeout() from None
            except (OSError, RuntimeError, ValueError) as exc:  # the worker broke: keep the rows
                logger.warning("columnar export failed, the row path goes on: %s", exc)
                return None
            if reply is None:  # another export took the worker meanwhile: ask again later
                self._done = False
                return None
            status = reply["status"]
            if status == "too_big":
                raise self.value_too_big()
            if status != "ok":
                logger.debug("columnar export fell back to rows: %s", reply.get("reason"))
                return None
            # Errors here are the workspace's own (e.g. the disk is full when the row path's
            # file is closed): they reach the caller like any write error, never "go on".
            self.writer.adopt_file(out, reply["bytes"])
            adopted = True
        finally:
            if not adopted:
                out.unlink(missing_ok=True)
        truncated_by = reply["truncated_by"]
        logger.debug("columnar export wrote %d rows (%s)", reply["rows"],
                     truncated_by or "whole result")
        return QueryStats(self.columns, reply["rows"], truncated_by is not None,
                          truncated_by=truncated_by)

    def _compiles_guarded(self, sql: str) -> bool:
        """Prepare ``sql`` on the guarded connection (authorizer and all), running nothing."""
        try:
            self.raw.execute("EXPLAIN " + sql).close()
        except sqlite3.Error as exc:
            logger.debug("columnar export skipped: the checked query does not compile (%s)", exc)
            return False
        return True
