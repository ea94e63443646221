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

from nl2sql.csv_dialect import CsvRowFormatter

if TYPE_CHECKING:
    from nl2sql.db.base import QueryStats, _BoundedSink
    from nl2sql.results import CsvResultWriter

logger = logging.getLogger(__name__)

#: Rows the row path writes before a result counts as big (about 20 ms of work). It is above
#: the largest ADBC batch, so the rows ADBC infers its column types from were all seen here.
SWITCH_ROWS = 10_000
#: Rows per Arrow batch: up to this many, fewer for wide rows (``_BATCH_BYTES`` per batch).
_MAX_BATCH_ROWS = 8192
_MIN_BATCH_ROWS = 64
_BATCH_BYTES = 4 << 20
_NONE = type(None)
_available: bool | None = None


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


def checked_sql(sql: str, kinds: Sequence[str]) -> tuple[str, bool]:
    """The text the worker runs: ``sql`` itself, or, when there are text, blob or float columns,
    ``sql`` with one more column that is 1 while every such value is one ADBC hands over as the
    row path would write it: text (resp. blob) or NULL; in a float column, a real or a number
    below 1e15 (from there an integer is written differently from a float, and ADBC turns
    integers into floats). Comparisons first (SQLite orders NULL < numbers < text < blob), the
    ``typeof()`` call only for the rare big number."""
    checks = []
    for index, kind in enumerate(kinds):
        name = f"c{index}"
        if kind == "text":
            checks.append(f"({name} IS NULL OR ({name} >= '' AND {name} < x''))")
        elif kind == "blob":
            checks.append(f"({name} IS NULL OR {name} >= x'')")
        elif kind == "float":
            checks.append(f"({name} IS NULL OR ({name} > -1e15 AND {name} < 1e15) "
                          f"OR typeof({name}) = 'real')")
    if not checks:
        return sql, False
    names = ", ".join(f"c{index}" for index in range(len(kinds)))
    return (f"WITH nl2sql_checked({names}) AS (\n{sql}\n)\n"
            f"SELECT {names}, {' AND '.join(checks)} FROM nl2sql_checked"), True


class ColumnarTakeOver:
    """The ``take_over`` hook of ``DbOperations._drain`` for one SQLite query."""

    def __init__(self, raw: sqlite3.Connection, uri: str, sql: str, sink: _BoundedSink,
                 writer: CsvResultWriter, columns: list[str], *, max_rows: int,
                 max_value_bytes: int, value_too_big: Callable[[], Exception]) -> None:
        self.raw = raw
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
        for types, values in zip(self._types, zip(*batch)):
            types.update(map(type, values))
        if count < SWITCH_ROWS:
            return None
        self._done = True
        return self._take_over(count)

    def _take_over(self, count: int) -> QueryStats | None:
        from nl2sql.db.base import QueryStats
        from nl2sql.db.columnar_worker import WorkerTimeout, shared_worker

        kinds = [column_kind(types) for types in self._types]
        if None in kinds:
            logger.debug("columnar export skipped: a column mixes storage classes")
            return None
        sql, checked = checked_sql(self.sql, kinds)  # type: ignore[arg-type]
        if checked and not self._compiles_guarded(sql):
            return None
        header = CsvRowFormatter().header(self.columns)
        per_row = max(1, (self.writer.bytes_written - len(header.encode("utf-8"))) // count)
        out = self.writer.sibling_temp_file()
        request = {
            "uri": self.uri, "sql": sql, "out": str(out),
            "header": header, "kinds": kinds, "checked": checked, "max_rows": self.max_rows,
            "max_bytes": self.writer.max_bytes,
            "max_value_bytes": self.max_value_bytes,
            "batch_rows": max(1, min(SWITCH_ROWS, _MAX_BATCH_ROWS,
                                     max(_MIN_BATCH_ROWS, _BATCH_BYTES // per_row))),
        }
        adopted = False
        try:
            reply = shared_worker().run(request, self.sink.deadline)
            if reply is None:
                return None  # another big export is using the worker: stay on the row path
            status = reply["status"]
            if status == "too_big":
                raise self.value_too_big()
            if status != "ok":
                logger.debug("columnar export fell back to rows: %s", reply.get("reason"))
                return None
            self.writer.adopt_file(out, reply["bytes"])
            adopted = True
            truncated_by = reply["truncated_by"]
            logger.debug("columnar export wrote %d rows (%s)", reply["rows"],
                         truncated_by or "whole result")
            return QueryStats(self.columns, reply["rows"], truncated_by is not None,
                              truncated_by=truncated_by)
        except WorkerTimeout:
            raise self.sink.on_timeout() from None
        except (OSError, RuntimeError, ValueError) as exc:  # the worker broke: keep the rows
            logger.warning("columnar export failed, the row path goes on: %s", exc)
            return None
        finally:
            if not adopted:
                out.unlink(missing_ok=True)

    def _compiles_guarded(self, sql: str) -> bool:
        """Prepare ``sql`` on the guarded connection (authorizer and all), running nothing."""
        try:
            self.raw.execute("EXPLAIN " + sql).close()
        except sqlite3.Error as exc:
            logger.debug("columnar export skipped: the checked query does not compile (%s)", exc)
            return False
        return True
