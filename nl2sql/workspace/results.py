"""Result files in the workspace: safe paths, streamed CSV, metadata, and the first rows kept for
the preview (``preview.py`` writes its text).

Contract (ARCHITECTURE.md, "Result files"): ``{workspace}/{name}.csv`` plus
``{workspace}/{name}.metadata.json``. Both are written to temporary files and renamed, the
metadata last, so a reader (or the saved-queries index) never sees half a result. The two
renames happen under an exclusive lock of the folder (``result_lock``), and readers that use
both files take it shared, so two writers of the same name never leave, and a reader never
sees, a CSV from one run beside the metadata of another. Each change a writer makes to the
folder is bracketed by two reads of the folder's mtime (``FolderTrace``), so the saved-query
index can take the new result in without listing the folder. The CSV format is
``nl2sql.workspace.csv_dialect``.
"""

from __future__ import annotations

import bisect
import csv
import errno
import fcntl
import hashlib
import io
import json
import logging
import os
import re
import secrets
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from nl2sql.workspace.column_types import ValueTypes
from nl2sql.workspace.csv_dialect import CsvRowFormatter, format_value
from nl2sql.workspace.names import HINT, MAX_NAME_BYTES, check_name
from nl2sql.errors import ResultExistsError, WorkspaceFileError, WorkspacePathError, free_space
from nl2sql.schema.models import utc_now

PREVIEW_ROWS = 10
PREVIEW_CELL_CHARS = 80
CSV_SUFFIX = ".csv"
METADATA_SUFFIX = ".metadata.json"
#: The words of a query that make its file name (``safe_name_from_query``).
_WORD = re.compile(r"[a-z0-9]+")
#: One path part of ASCII letters, digits, ``_``, ``-`` and ``.``, not starting with a dot.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*\Z")

logger = logging.getLogger(__name__)


def resolve_workspace_path(workspace: Path, name: str, *, must_exist: bool = False,
                           resolved: bool = False) -> Path:
    """``name`` resolved inside ``workspace`` (created if missing), or ``WorkspacePathError``.

    Refused: any name ``names.check_name`` refuses (empty, invisible or lookalike characters,
    absolute, ``..``, too long or too deep), and anything whose real path (after following
    symlinks) lies outside the workspace. ``resolved``: ``workspace`` is
    already the real path of an existing folder (``OpsContext.workspace_root``), so neither
    created nor resolved again; ``name`` is still resolved on every call.
    """
    if (resolved and isinstance(name, str) and len(name) <= MAX_NAME_BYTES
            and _PLAIN_NAME.match(name)):
        # The common case (a derived or simple name: one path part, no separator, no leading
        # dot, ASCII) needs none of the checks below but the last: the same real-path test,
        # on strings (os.path.realpath is what Path.resolve runs, without pathlib's objects).
        # Anything else (e.g. a symlink out) goes on to the full checks, which decide.
        root_text = str(workspace)
        real = os.path.realpath(os.path.join(root_text, name))
        if real != root_text and (os.path.dirname(real) == root_text
                                  or real.startswith(root_text + os.sep)):
            target = Path(real)
            if must_exist:
                _check_readable(target, name)
            return target
    check_name(name)
    relative = Path(name)
    if resolved:
        root = workspace
    else:
        workspace.mkdir(parents=True, exist_ok=True)
        root = workspace.resolve()
    target = (root / relative).resolve()
    if target == root or not target.is_relative_to(root):
        raise WorkspacePathError(f"Path '{name}' resolves outside the workspace; {HINT}.")
    if must_exist:
        _check_readable(target, name)
    return target


def _check_readable(target: Path, name: str) -> None:
    """An existing regular file with one link: a hard link made inside the workspace to a file
    outside it would pass every path check (it has no path outside), so any second link is
    refused."""
    try:
        status = target.stat()
    except OSError:
        status = None
    if status is None or not stat.S_ISREG(status.st_mode):
        raise WorkspacePathError(f"File '{name}' does not exist in the workspace; list saved "
                                 f"results with saved_queries_list.")
    if status.st_nlink != 1:
        raise WorkspacePathError(f"File '{name}' has {status.st_nlink} hard links (it may be a "
                                 f"file outside the workspace); nl2sql reads only files with "
                                 f"one link: copy it into the workspace instead.")


def safe_name_from_query(query: str, *, max_slug: int = 40) -> str:
    """A readable, stable file stem: a slug of the query plus a short hash of its full text."""
    slug = ""
    for word in _WORD.findall(query.lower()):
        if len(slug) + len(word) + 1 > max_slug:
            break
        slug = f"{slug}_{word}" if slug else word
    digest = hashlib.sha256(query.encode("utf-8")).hexdigest()[:6]
    return f"{slug or 'query'}_{digest}"


class ResultMetadata(BaseModel):
    """``{name}.metadata.json``: the contract fields first, then what else the run learned."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    sql_query: str
    timestamp: datetime = Field(default_factory=utc_now)
    row_count: int
    column_count: int
    csv_filename: str  # relative to the workspace
    db_id: str
    natural_language_query: str | None = None
    #: The answer's id (``Answer.id``; ``nl2sql-ask --accept ID`` finds the result by it).
    id: str | None = None
    columns: list[str] = Field(default_factory=list)
    elapsed_seconds: float = 0.0
    truncated: bool = False  # the row cap or the byte budget cut the result
    max_rows: int | None = None
    truncated_by: str | None = None  # "rows" (max_rows) or "bytes" (max_result_bytes)
    max_result_bytes: int | None = None
    #: Each column's type as the database gave it (``nl2sql.workspace.column_types``: integer,
    #: number, boolean, date, timestamp, text, binary; null where unknown); None: not known.
    column_types: list[str | None] | None = None
    #: The time zone (an IANA name such as Europe/Berlin) the database wrote the timestamps
    #: with a UTC offset in: its session's (PostgreSQL, DuckDB); None: not known.
    time_zone: str | None = None

    @property
    def metadata_filename(self) -> str:
        return metadata_name_for(self.csv_filename)


def new_result_id() -> str:
    """A new answer/result id: 12 hex digits, unique enough for one data dir."""
    return secrets.token_hex(6)


def metadata_name_for(csv_name: str) -> str:
    """``x.csv`` -> ``x.metadata.json``: the metadata file that sits beside a result CSV."""
    return csv_name.removesuffix(CSV_SUFFIX) + METADATA_SUFFIX


def types_beside(csv_path: Path, width: int) -> tuple[list[str | None], ZoneInfo | None]:
    """The ``column_types`` of the metadata beside ``csv_path`` when it names one for each of
    the ``width`` columns, else ``None`` for each (no metadata, an older result); and its
    ``time_zone`` when it names one this system knows."""
    try:
        found = json.loads(csv_path.with_name(metadata_name_for(csv_path.name)).read_bytes())
        kinds, zone = found.get("column_types"), found.get("time_zone")
    except (OSError, ValueError, AttributeError):
        kinds = zone = None
    if not isinstance(kinds, list) or len(kinds) != width:
        kinds = [None] * width
    return [kind if isinstance(kind, str) else None for kind in kinds], _zone(zone)


def _zone(name: object) -> ZoneInfo | None:
    if not isinstance(name, str):
        return None
    try:
        return ZoneInfo(name)
    except (ValueError, ZoneInfoNotFoundError):  # not a zone name, or not on this system
        return None


def read_metadata_for_csv(csv_path: Path, workspace: Path) -> ResultMetadata | None:
    """The metadata beside ``csv_path``, or None when it is missing, unreadable, or resolves
    outside ``workspace`` (a symlink out is refused as CSV paths are)."""
    meta_path = csv_path.with_name(metadata_name_for(csv_path.name))
    try:
        relative = meta_path.relative_to(workspace.resolve()).as_posix()
        resolve_workspace_path(workspace, relative)
        text = meta_path.read_text(encoding="utf-8")
        return ResultMetadata.model_validate_json(text)
    except WorkspacePathError:
        logger.warning("metadata file %s resolves outside the workspace: not read", meta_path)
        return None
    except (OSError, ValueError):  # ValueError: not below the workspace, or bad JSON
        return None


@contextmanager
def result_lock(folder: Path, *, shared: bool = False) -> Iterator[None]:
    """An advisory lock on a workspace folder (``flock``: works across processes): writers
    publish a CSV + metadata pair holding it exclusively, readers of both hold it shared."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def storage_error(exc: OSError, workspace: Path, what: str) -> Exception:
    """One sentence for a file-system failure while writing in the workspace."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return WorkspaceFileError(f"Cannot save {what}: the workspace disk is full "
                                  f"({free_space(workspace)}); delete old result files in "
                                  f"{workspace} or choose another workspace.")
    if exc.errno == errno.ENAMETOOLONG:
        return WorkspaceFileError(f"Cannot save {what}: the file name is too long for the file "
                                  f"system; choose a shorter output_file.")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return WorkspaceFileError(f"Cannot save {what}: the workspace {workspace} is not "
                                  f"writable ({os.strerror(exc.errno)}); fix its permissions "
                                  f"or choose another workspace.")
    return WorkspaceFileError(f"Cannot save {what} in the workspace {workspace}: "
                              f"{exc.strerror or type(exc).__name__}.")


def _result_exists(csv_path: Path) -> bool:
    return csv_path.exists() or csv_path.with_name(metadata_name_for(csv_path.name)).exists()


def _free_result_path(csv_path: Path) -> Path:
    """``<stem>_N.csv`` for the number after the last one taken (``csv_path`` itself is taken),
    in O(log N) checks: doubling from ``_2`` until a number is free, then halving the span
    between the last taken and that free one. Checking ``_2``, ``_3``... one by one cost the
    10,000th run of one query 10,000 checks under the folder's lock (1.0 ms per call at the
    first, 11.8 ms at the 3,000th). With a number freed by a deletion below the last, the
    search may stop at any free number: still a new name."""
    stem = csv_path.name.removesuffix(CSV_SUFFIX)

    def numbered(number: int) -> Path:
        return csv_path.with_name(f"{stem}_{number}{CSV_SUFFIX}")

    taken, free = 1, 2  # 1 stands for csv_path itself
    while _result_exists(numbered(free)):
        taken, free = free, free * 2
    while free - taken > 1:
        middle = (taken + free) // 2
        if _result_exists(numbered(middle)):
            taken = middle
        else:
            free = middle
    return numbered(free)


def refuse_existing_result(csv_path: Path) -> None:
    """``ResultExistsError`` when a result named like ``csv_path`` exists (never replaced
    without ``overwrite``)."""
    if _result_exists(csv_path):
        raise ResultExistsError(
            f"A result named '{csv_path.name}' already exists in the workspace; choose another "
            f"output_file, or pass overwrite=true to replace it.")


class FolderTrace:
    """The mtimes a folder went through while this process changed it, for as long as nothing
    else did (as far as the mtime tells).

    Each change is bracketed by two ``stat`` calls of the folder; the one before a change must
    find the mtime the one after the previous change found. ``marks`` is that chain (the
    mtime before the first change, then after each), or empty once it broke: something else
    changed the folder between two of ours, or the folder was missing. The saved-query index
    uses it to take this process's own result in without listing the folder
    (``SavedQueryIndex.record``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.marks: list[int] = []
        self._broken = False

    @contextmanager
    def change(self) -> Iterator[None]:
        """Around one change of the folder (a file created, renamed into it or deleted)."""
        before = _mtime_ns(self.folder)
        yield
        after = _mtime_ns(self.folder)
        if self._broken or before is None or after is None or \
                (self.marks and self.marks[-1] != before):
            self.marks, self._broken = [], True
        else:
            self.marks += [after] if self.marks else [before, after]


def _mtime_ns(folder: Path) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


def remove_result(csv_path: Path) -> FolderTrace:
    """Delete a result's CSV and metadata (either may be missing), under the folder's lock;
    the folder's trace of the deletion (for ``SavedQueryIndex.record``)."""
    trace = FolderTrace(csv_path.parent)
    with result_lock(csv_path.parent), trace.change():
        csv_path.with_name(metadata_name_for(csv_path.name)).unlink(missing_ok=True)
        csv_path.unlink(missing_ok=True)
    return trace


class CsvResultWriter:
    """A result sink that streams rows into a temporary CSV beside the final file.

    Takes Python rows (``write_rows``, formatted in the dialect of ``nl2sql.workspace.csv_dialect``) or
    ready CSV records from the server (``write_csv_records``, written as they are). Keeps only
    the first rows for the preview. With ``max_bytes``, keeps whole records up to that many
    bytes and then reports fewer rows kept than given (the caller marks the result truncated).
    ``publish`` renames the CSV into place and then writes the metadata; ``discard`` removes the
    temporary file whatever happened. ``trace`` follows the writer's changes to its folder.
    """

    def __init__(self, csv_path: Path, *, preview_rows: int = PREVIEW_ROWS,
                 max_bytes: int | None = None) -> None:
        self.csv_path = csv_path
        self.preview_limit = preview_rows
        self.max_bytes = max_bytes
        self.bytes_written = 0
        self.columns: list[str] = []
        self._value_types = ValueTypes(0)
        self.preview: list[list[str]] = []
        self._formatter = CsvRowFormatter()
        self.trace = FolderTrace(csv_path.parent)
        with self.trace.change():
            fd, self._tmp = create_temporary(csv_path)
        try:
            self._binary = os.fdopen(fd, "wb", buffering=1 << 20)
        except BaseException:
            os.close(fd)
            self._tmp.unlink(missing_ok=True)
            raise

    # -- ResultSink / CsvResultSink -------------------------------------------------------------
    def begin(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)
        self._value_types = ValueTypes(len(self.columns))
        self._write([self._formatter.header(self.columns).encode("utf-8")])

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> int:
        self._value_types.add(rows)
        records = self._formatter.records(rows)
        data = "".join(records).encode("utf-8")
        if self.max_bytes is None or self.bytes_written + len(data) <= self.max_bytes:
            self._write([data])
            kept = len(rows)
        else:
            kept = self._write([r.encode("utf-8") for r in records])
        if len(self.preview) < self.preview_limit:
            for row in rows[: min(kept, self.preview_limit - len(self.preview))]:
                self.preview.append([_preview_text(v) for v in row])
        return kept

    def write_csv_records(self, records: Sequence[bytes]) -> int:
        kept = self._write(records)
        if len(self.preview) < self.preview_limit:
            head = records[: min(kept, self.preview_limit - len(self.preview))]
            text = b"".join(bytes(r) for r in head).decode("utf-8", errors="replace")
            self.preview.extend(row or [""] for row in csv.reader(io.StringIO(text, newline="")))
        return kept

    def write_csv_block(self, data: memoryview, ends: Sequence[int]) -> int:
        """Records as one block of bytes with each record's end offset (a columnar path's
        batch): written whole while they fit the byte budget; how many were written."""
        kept = len(ends)
        if kept and self.max_bytes is not None and \
                self.bytes_written + int(ends[-1]) > self.max_bytes:
            kept = bisect.bisect_right(ends, self.max_bytes - self.bytes_written)
            data = data[:int(ends[kept - 1]) if kept else 0]
        self._binary.write(data)
        self.bytes_written += len(data)
        if len(self.preview) < self.preview_limit and kept:
            head = min(kept, self.preview_limit - len(self.preview))
            text = bytes(data[:int(ends[head - 1])]).decode("utf-8", errors="replace")
            self.preview.extend(row or [""] for row in csv.reader(io.StringIO(text, newline="")))
        return kept

    def _write(self, records: Sequence[bytes]) -> int:
        """Write whole records while they fit the byte budget; how many were written."""
        size = sum(map(len, records))
        if self.max_bytes is not None and self.bytes_written + size > self.max_bytes:
            room, fitting = self.max_bytes - self.bytes_written, 0
            for record in records:
                if len(record) > room:
                    break
                room -= len(record)
                fitting += 1
            records, size = records[:fitting], self.max_bytes - self.bytes_written - room
        self._binary.writelines(records)
        self.bytes_written += size
        return len(records)

    def column_types(self, described: Sequence[str | None] | None) -> list[str | None] | None:
        """Each column's type: as the database ``described`` them, else by the Python types
        of the values given to ``write_rows`` (SQLite's storage classes); None when neither
        says anything."""
        found = list(described) if described is not None else self._value_types.column_types()
        return found if any(found) else None

    # -- a whole result written by another process (the columnar export) ----------------------
    def sibling_temp_file(self) -> Path:
        """A new empty temporary file beside the result, for another writer to fill."""
        with self.trace.change():
            fd, tmp = create_temporary(self.csv_path)
        os.close(fd)
        return tmp

    def adopt_file(self, path: Path, bytes_written: int) -> None:
        """Make ``path`` (a whole result with its header, from ``sibling_temp_file``) this
        writer's file instead of what it wrote so far; the preview is read back from it."""
        self._close()
        with self.trace.change():
            self._tmp.unlink(missing_ok=True)
        self._tmp = path
        self.bytes_written = bytes_written
        self.preview = []
        with open(path, encoding="utf-8", errors="replace", newline="") as stream:
            records = csv.reader(stream)
            next(records, None)  # the header
            for row in records:
                if len(self.preview) >= self.preview_limit:
                    break
                self.preview.append(row or [""])

    # -- finishing ------------------------------------------------------------------------------
    def publish(self, metadata: ResultMetadata, *, overwrite: bool = True,
                rename: bool = False) -> None:
        """Move the CSV into place, then write the metadata (last, so it marks a whole result),
        both under the folder's exclusive ``result_lock``.

        An existing result (CSV or metadata) is replaced only with ``overwrite``; otherwise
        ``rename`` picks the first free ``<stem>_2``, ``_3``... (updating ``csv_path`` and
        ``metadata.csv_filename``), and without it ``ResultExistsError`` is raised. The check
        and the rename happen under the lock, so two writers never replace each other."""
        self._close()
        with result_lock(self.csv_path.parent):
            if not overwrite and _result_exists(self.csv_path):
                if not rename:
                    refuse_existing_result(self.csv_path)
                self.csv_path = _free_result_path(self.csv_path)
                metadata.csv_filename = PurePosixPath(metadata.csv_filename).with_name(
                    self.csv_path.name).as_posix()
            data = metadata.model_dump_json(indent=2).encode("utf-8") + b"\n"
            with self.trace.change():
                os.replace(self._tmp, self.csv_path)
                # No fsync (it was half of a point query's time): the renames are what readers
                # rely on (old or whole new file, metadata last, under the lock), and they stay
                # atomic without it. fsync only adds survival of a power loss or OS crash, which
                # a result does not need: it is re-run by calling the query again, and the CSV
                # itself was never synced, so syncing the metadata alone never made the pair
                # durable. After such a crash, readers treat a missing or empty metadata file
                # as no result.
                write_and_rename(self.metadata_path, data)

    @property
    def metadata_path(self) -> Path:
        """The metadata file beside the CSV (where ``publish`` writes it)."""
        return self.csv_path.with_name(metadata_name_for(self.csv_path.name))

    def discard(self) -> None:
        """Remove the temporary file; never raises (a failed close must not keep it)."""
        try:
            self._close()
        except OSError:
            pass
        finally:
            self._tmp.unlink(missing_ok=True)

    def _close(self) -> None:
        if not self._binary.closed:
            self._binary.close()


def create_temporary(final: Path) -> tuple[int, Path]:
    """A new, empty ``.{name}.XXXXXXXX.tmp`` beside ``final`` (its folder created when
    missing), opened for writing: the descriptor and the path.

    What ``tempfile.mkstemp`` does, in fewer system calls per result (a point query writes
    two): ``O_EXCL | O_NOFOLLOW`` as there, but created with mode 0666 so the process umask
    gives it the mode of any new file (``mkstemp`` makes 0600, then ``fchmod`` was needed),
    and the folder is created only when the first attempt finds it missing (not checked with
    ``mkdir`` + ``stat`` on every call)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    folder_made = False
    for _ in range(100):
        tmp = final.with_name(f".{final.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue  # a name taken by chance: draw another
        except FileNotFoundError:
            if folder_made:
                raise
            final.parent.mkdir(parents=True, exist_ok=True)
            folder_made = True
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(final.parent))


def write_and_rename(path: Path, data: bytes) -> None:
    """``path`` replaced by ``data`` through a temporary file and a rename (no ``fsync``, see
    ``CsvResultWriter.publish``); the temporary file never stays behind."""
    fd, tmp = create_temporary(path)
    try:
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _preview_text(value: Any) -> str:
    text = format_value(value)
    return "" if text is None else text
