"""The columnar SQLite export, run inside the columnar worker process (``columnar_worker``).

SQLite -> ADBC SQLite driver (Arrow record batches, no Python object per value) ->
``nl2sql.workspace.csv_arrow`` (the dialect's CSV text, in Arrow kernels) -> the file. A reader thread
pulls batches while the main thread formats and writes the previous one (both release the GIL
in C/C++), so on two cores the two halves overlap.

Only the parent (``sqlite_columnar``) decides that a query may come here, after the query ran
through every read-only layer of the guarded connection; see that module for why this
connection is safe to read with. This module's job is to write the exact bytes the row path
would, or to say ``unsupported`` before the parent relies on anything it wrote:

- ADBC infers each column's Arrow type from the first batch of rows; a later value of another
  storage class either fails the read (``Type mismatch``: unsupported) or is converted. The
  conversions that would change a file are caught by a check column the parent adds
  (``sqlite_columnar.checked_sql``): every value of a text (blob) column still text (blob) or
  NULL, and no integer from 1e15 on in a float column (written as digits by the row path, as
  ``1e+15`` once ADBC made it a float).
- Row cap, byte budget (whole records only) and value size limit behave as on the row path.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator
from contextlib import closing
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nl2sql.workspace.csv_arrow import UnsupportedColumn, format_batch, record_bytes

#: The Arrow type ADBC must have inferred for each kind of column the parent saw.
_EXPECTED = {
    "int": (pa.types.is_integer,),
    "float": (pa.types.is_floating,),
    "text": (pa.types.is_string, pa.types.is_large_string),
    "blob": (pa.types.is_binary, pa.types.is_large_binary),
    "null": (pa.types.is_integer, pa.types.is_null),  # ADBC types an all-NULL batch as int64
}
_QUEUED_BATCHES = 2


class Unsupported(Exception):
    """This result cannot be written here byte-for-byte like the row path: use the row path."""


class ValueTooBig(Exception):
    """A value is larger than ``max_value_bytes`` (the row path's ``SQLITE_LIMIT_LENGTH``)."""


def warm_up() -> str:
    """Import the driver and initialise Arrow's compute kernels (their first call costs ~0.1 s
    and ~47 MB) before the first request; the driver's SQLite version."""
    import adbc_driver_manager
    import adbc_driver_sqlite

    format_batch(pa.record_batch({"i": [1], "f": [0.5], "s": ["a,b"], "b": [b"x"]}))
    with adbc_driver_sqlite.connect(":memory:") as database, \
            adbc_driver_manager.AdbcConnection(database) as connection, \
            adbc_driver_manager.AdbcStatement(connection) as statement:
        statement.set_sql_query("SELECT sqlite_version()")
        stream, _ = statement.execute_query()
        with pa.RecordBatchReader.from_stream(stream) as reader:
            return str(reader.read_all().column(0)[0])


def export(request: dict[str, Any]) -> dict[str, Any]:
    """Run one export request (see ``sqlite_columnar.ColumnarTakeOver``); the reply dict."""
    try:
        rows, written, truncated_by = _export(request)
    except Unsupported as exc:
        return {"status": "unsupported", "reason": str(exc)}
    except ValueTooBig:
        return {"status": "too_big"}
    except UnsupportedColumn as exc:
        return {"status": "unsupported", "reason": str(exc)}
    except Exception as exc:  # noqa: BLE001 - the parent falls back to the row path
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "Type mismatch" in message:
            return {"status": "unsupported", "reason": message}
        return {"status": "unsupported", "reason": f"{type(exc).__name__}: {message}"}
    return {"status": "ok", "rows": rows, "bytes": written, "truncated_by": truncated_by}


def _export(request: dict[str, Any]) -> tuple[int, int, str | None]:
    # The driver manager's low-level API: its DB-API module imports pandas (+54 MB of RSS).
    import adbc_driver_manager
    import adbc_driver_sqlite

    kinds: list[str] = request["kinds"]
    checked: bool = request["checked"]
    max_rows: int = request["max_rows"]
    max_bytes: int | None = request["max_bytes"]
    max_value_bytes: int = request["max_value_bytes"]
    header = request["header"].encode("utf-8")
    rows, truncated_by = 0, None
    written = len(header)
    with adbc_driver_sqlite.connect(request["uri"]) as database, \
            adbc_driver_manager.AdbcConnection(database) as connection, \
            adbc_driver_manager.AdbcStatement(connection) as statement:
        statement.set_options(**{"adbc.sqlite.query.batch_rows": str(request["batch_rows"])})
        statement.set_sql_query(request["sql"])
        stream, _ = statement.execute_query()
        reader = pa.RecordBatchReader.from_stream(stream)
        # closing(): the reading thread has ended before the statement closes, whatever happens.
        with reader, closing(_prefetched(reader)) as batches, \
                open(request["out"], "wb", buffering=0) as out:
            out.write(header)
            first = True
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                if rows == max_rows:  # one more row after the cap: the cap cut the result
                    truncated_by = "rows"
                    break
                batch = _checked(batch, kinds, checked, max_value_bytes, first)
                first = False
                if rows + batch.num_rows > max_rows:
                    batch, truncated_by = batch.slice(0, max_rows - rows), "rows"
                view, ends = record_bytes(format_batch(batch))
                if max_bytes is not None and written + len(view) > max_bytes:
                    fitting = int(np.searchsorted(ends, max_bytes - written, side="right"))
                    view = view[:int(ends[fitting - 1]) if fitting else 0]
                    out.write(view)
                    return rows + fitting, written + len(view), "bytes"
                out.write(view)
                rows += batch.num_rows
                written += len(view)
                if truncated_by:
                    break
            return rows, written, truncated_by


def _checked(batch: pa.RecordBatch, kinds: list[str], checked: bool, max_value_bytes: int,
             first: bool) -> pa.RecordBatch:
    """The batch without the check column, after every test that could make it differ from
    the row path's output."""
    if checked:
        flags = batch.column(batch.num_columns - 1)
        if not pc.all(pc.equal(flags, 1)).as_py():
            raise Unsupported("a value of another storage class than its column's first ones")
        batch = batch.select(range(batch.num_columns - 1))
    if batch.num_columns != len(kinds):
        raise Unsupported("the result's columns differ from the row path's")
    for column, kind in zip(batch.columns, kinds):
        if first and not any(test(column.type) for test in _EXPECTED[kind]):
            raise Unsupported(f"a {kind} column came as Arrow {column.type}")
        if kind in ("text", "blob") and column.null_count < len(column):
            if pc.max(pc.binary_length(column)).as_py() > max_value_bytes:
                raise ValueTooBig
    return batch


def _prefetched(reader: pa.RecordBatchReader) -> Generator[pa.RecordBatch, None, None]:
    """``reader``'s batches, read one or two ahead in a thread (SQLite's stepping and Arrow's
    formatting then run at the same time). Stopping early leaves the thread to finish its
    current batch and end."""
    batches: queue.Queue[Any] = queue.Queue(maxsize=_QUEUED_BATCHES)
    stop = threading.Event()
    done = object()

    def read() -> None:
        try:
            for batch in reader:
                while not stop.is_set():
                    try:
                        batches.put(batch, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            batches.put(done)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the consuming thread
            batches.put(exc)

    thread = threading.Thread(target=read, name="nl2sql-adbc-reader", daemon=True)
    thread.start()
    try:
        while True:
            item = batches.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()

