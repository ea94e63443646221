"""Full-text index of the saved queries in a workspace (SQLite FTS5), kept current at a cost
that does not grow with the workspace.

The metadata files (``{name}.metadata.json``) are the truth; the index at
``{workspace}/.nl2sql/saved_queries.sqlite`` is a disposable copy of them (in a folder of its
own, so that SQLite's ``-wal``/``-shm`` files coming and going do not move the workspace's
mtime). Every search first syncs it, without walking the workspace:

- Folders: a file created, renamed or deleted in a folder changes the folder's mtime (results
  and their metadata are written to a temporary file and renamed, by this server and any other
  nl2sql). The index keeps each folder's mtime; a call stats the known folders only, and lists
  (``scandir``, no ``stat`` per file) just the folders whose mtime moved, re-reading the
  entries whose inode is new. A listed folder's mtime younger than ``_RACY_NS`` is not
  trusted (a change within the same clock tick would not move it again): that folder is
  listed again on the next call.
- Files changed in place (same inode, same folder mtime): each call stats ``SWEEP_FILES`` known
  files in turn, so a small workspace is checked whole on every call and a large one within a
  few calls.
- Results nl2sql saves or deletes itself (``db_execute_sql``; the candidates ``nl2sql-ask``
  drops): the writer ``record``s each in the index as it is published, so it is listed and
  searchable at once, whichever process searches. It also takes the folder's new mtime as
  known, so that the next call lists nothing, when the writer's ``FolderTrace`` shows that
  only the writer changed the folder since the mtime the index knew: each of its changes (the
  temporary file at the query's start, the renames under the folder's lock) is bracketed by
  two ``stat`` calls, and each ``stat`` before must find the mtime of the one after the
  previous change. Anything else in between (another program's file, another query's
  temporary file), or a folder the index has marked to list again (``-1``), and the folder is
  listed as before. Another nl2sql process's results need no mtime: each records its own.
  Not provable from mtimes, so found only when the folder is next listed (at its next change
  not recorded): a program other than nl2sql changing the folder between the two ``stat``
  calls around one of our changes (microseconds), or after them within the same clock tick
  (none with the multigrain timestamps of Linux 6.13+; 1-10 ms before). A mtime in whole
  milliseconds (a file system with coarse timestamps, as FAT's 2 s) is never taken.

So a call with nothing new costs one ``stat`` per folder plus ``SWEEP_FILES``; a result nl2sql
saved costs its save one row written (~0.2 ms); a result written by anything else costs one
listing of its folder (``bench/saved_queries_index.py``). A missing, corrupt or older-format
index is rebuilt from the files; when the file stays locked past the busy timeout, or the
workspace is read-only, one call builds a throwaway index in memory instead. ``record`` never
builds an index, waits at most ``RECORD_BUSY_TIMEOUT_MS`` and never fails the save: what it
could not record is found as another program's result is.

Concurrency: WAL mode (readers never block the writer), a busy timeout so concurrent servers wait
instead of failing, and ``BEGIN IMMEDIATE`` for the sync so two writers never deadlock on an
upgrade from a read lock. Each call opens its own connection: nothing is shared across threads
but the one ``record`` keeps open (behind a lock), as opening one costs more than a record.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from nl2sql.workspace.results import METADATA_SUFFIX

INDEX_FILENAME = ".nl2sql/saved_queries.sqlite"
BUSY_TIMEOUT_MS = 30_000
#: How long ``record`` waits for the index (it runs as a result is saved; giving up is safe).
RECORD_BUSY_TIMEOUT_MS = 500
_SCHEMA_VERSION = 3
#: Known files stat'ed per call to catch metadata rewritten in place.
SWEEP_FILES = 200
#: A folder mtime this recent may hide a later change in the same clock tick: list it again.
_RACY_NS = 2_000_000_000
_SCHEMA = """
CREATE TABLE saved_query (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,          -- metadata file, relative to the workspace, '/' separated
    folder TEXT NOT NULL,               -- its folder, relative ('' for the workspace itself)
    inode INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    valid INTEGER NOT NULL,             -- 0: unreadable metadata, kept so it is not re-read
    timestamp TEXT,
    db_id TEXT,
    row_count INTEGER,
    column_count INTEGER,
    csv_filename TEXT,
    natural_language_query TEXT,
    sql_query TEXT,
    result_id TEXT                      -- the metadata's "id" (an answer's id)
);
CREATE INDEX saved_query_timestamp ON saved_query (timestamp, path);
CREATE INDEX saved_query_folder ON saved_query (folder);
CREATE TABLE folder (
    path TEXT PRIMARY KEY,              -- relative to the workspace ('' for itself)
    mtime_ns INTEGER NOT NULL           -- as last listed (-1: list it again)
);
CREATE INDEX saved_query_result_id ON saved_query (result_id);
CREATE VIRTUAL TABLE saved_query_fts USING fts5(
    natural_language_query, sql_query, tokenize = 'unicode61 remove_diacritics 2'
);
"""
_FIELDS = ("timestamp", "db_id", "row_count", "column_count", "csv_filename",
           "natural_language_query", "sql_query", "result_id")
#: Index column -> metadata field, where the names differ.
_METADATA_FIELD = {"result_id": "id"}
_TERM = re.compile(r"\w+", re.UNICODE)
#: index file -> the last row id stat'ed by the sweep in this process (where the next begins).
_SWEPT: dict[str, int] = {}
_T = TypeVar("_T")
#: The connection ``record`` keeps open, for one index file at a time: path -> (the file's
#: inode, connection). Opening one costs ~2 ms when no other is open (SQLite sets up the WAL
#: files), several times what a record itself costs; a replaced file gets a new connection.
_RECORDER: dict[str, tuple[int, sqlite3.Connection]] = {}
_RECORDER_LOCK = threading.Lock()

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IndexedQuery:
    """One saved query as the index knows it (``path`` is the metadata file, workspace-relative)."""

    path: str
    timestamp: str | None
    db_id: str | None
    row_count: int | None
    column_count: int | None
    csv_filename: str | None
    natural_language_query: str | None
    sql_query: str | None
    result_id: str | None = None


def fts_query(text: str) -> str | None:
    """User text -> an FTS5 query that cannot be a syntax error: every word becomes a quoted
    prefix term (``"cust"*``), all of them required. None when the text has no word at all."""
    terms = _TERM.findall(text)
    return " ".join(f'"{term}"*' for term in terms) if terms else None


class SavedQueryIndex:
    """The FTS5 index of one workspace. Cheap to create; open one per call."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.path = workspace / INDEX_FILENAME

    # -- public ---------------------------------------------------------------------------
    def search(self, text: str | None = None, *, limit: int = 50,
               db_id: str | None = None) -> tuple[list[IndexedQuery], int]:
        """Saved queries newest first (matching ``text`` when given; of ``db_id`` only when
        given), and how many matched."""
        if text is not None and text.strip():
            match = fts_query(text)
            if match is None:
                return [], 0
        else:
            match = None
        where = "valid = 1"
        params: list[object] = []
        if db_id is not None:
            where += " AND db_id = ?"
            params.append(db_id)
        if match is not None:
            where += " AND id IN (SELECT rowid FROM saved_query_fts WHERE saved_query_fts MATCH ?)"
            params.append(match)

        def query(db: sqlite3.Connection) -> tuple[list[IndexedQuery], int]:
            self._sync(db)
            total = db.execute(f"SELECT count(*) FROM saved_query WHERE {where}",
                               params).fetchone()[0]
            rows = db.execute(
                f"SELECT path, {', '.join(_FIELDS)} FROM saved_query WHERE {where} "
                f"ORDER BY timestamp DESC, path DESC LIMIT ?", [*params, max(limit, 0)]).fetchall()
            return [IndexedQuery(*row) for row in rows], total

        return self._run(query)

    def find(self, result_id: str) -> IndexedQuery | None:
        """The saved query whose metadata has ``"id": result_id`` (the newest), or None."""

        def query(db: sqlite3.Connection) -> IndexedQuery | None:
            self._sync(db)
            row = db.execute(
                f"SELECT path, {', '.join(_FIELDS)} FROM saved_query WHERE valid = 1 AND "
                f"result_id = ? ORDER BY timestamp DESC LIMIT 1", (result_id,)).fetchone()
            return IndexedQuery(*row) if row else None

        return self._run(query)

    def sync(self) -> None:
        """Bring the index in line with the metadata files (``search`` does this itself)."""
        self._run(self._sync)

    def record(self, metadata_path: Path, marks: Sequence[int] = ()) -> None:
        """This process just wrote, replaced or deleted ``metadata_path``: bring its row in
        line with the file now, and take the folder's new mtime as known when ``marks`` (the
        writer's ``FolderTrace``) shows that only this process changed the folder since the
        index last knew it, so the next call does not list the folder.

        Never raises and never waits long: when the index is missing (not built yet), of
        another version, busy or broken, nothing is recorded, and the next call finds the
        change as it finds anyone's (the folder's mtime moved)."""
        try:
            relative = metadata_path.relative_to(self.workspace)
        except ValueError:
            try:
                relative = metadata_path.relative_to(self.workspace.resolve())
            except (ValueError, OSError):
                return
        path = relative.as_posix()
        if any(part.startswith(".") for part in relative.parts):
            return  # in a hidden folder: never listed by the index either
        with _RECORDER_LOCK:
            try:
                db = self._recorder()
                if db is not None and \
                        db.execute("PRAGMA user_version").fetchone()[0] == _SCHEMA_VERSION:
                    self._record(db, path, marks)
            except (sqlite3.Error, OSError) as exc:
                _close_recorder()
                logger.debug("saved-query index: %s not recorded (%s); the next search "
                             "finds it", path, exc)

    # -- connection -----------------------------------------------------------------------
    def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """``work`` on the index file. The files are the truth and the index only a cache, so:
        a corrupt index is deleted and rebuilt; one still locked after the busy timeout, or a
        read-only workspace, gets a throwaway in-memory index for this call (slower, correct)."""
        self.workspace.mkdir(parents=True, exist_ok=True)
        if not os.access(self.workspace, os.W_OK):
            return self._run_on(":memory:", work)
        self.path.parent.mkdir(exist_ok=True)
        try:
            return self._run_on(self.path, work)
        except sqlite3.DatabaseError as exc:
            code = getattr(exc, "sqlite_errorcode", 0) & 0xFF  # the primary result code
            if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                return self._run_on(":memory:", work)
            if code not in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
                raise
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        return self._run_on(self.path, work)

    def _run_on(self, target: Path | str, work: Callable[[sqlite3.Connection], _T]) -> _T:
        with closing(self._open(target)) as db:
            return work(db)

    def _open(self, target: Path | str) -> sqlite3.Connection:
        db = self._connect(target, BUSY_TIMEOUT_MS)
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
                self._create_schema(db)
        except BaseException:
            db.close()
            raise
        return db

    def _recorder(self) -> sqlite3.Connection | None:
        """The kept connection to this index (under ``_RECORDER_LOCK``); None when there is no
        index file yet (the first search builds it)."""
        try:
            inode = os.stat(self.path).st_ino
        except FileNotFoundError:
            return None
        kept = _RECORDER.get(str(self.path))
        if kept is not None and kept[0] == inode:
            return kept[1]
        _close_recorder()
        db = self._connect(self.path, RECORD_BUSY_TIMEOUT_MS)
        _RECORDER[str(self.path)] = (inode, db)
        return db

    @staticmethod
    def _connect(target: Path | str, busy_timeout_ms: int) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves (BEGIN IMMEDIATE for writes).
        db = sqlite3.connect(target, timeout=busy_timeout_ms / 1000, isolation_level=None,
                             check_same_thread=False)
        try:
            db.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            db.close()
            raise
        return db

    @staticmethod
    def _create_schema(db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            # Re-check under the write lock: another process may have just created it.
            if db.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
                for table in ("saved_query", "saved_query_fts", "folder"):
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                # One statement at a time: executescript() would COMMIT our transaction.
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # -- sync -----------------------------------------------------------------------------
    def _folder_mtime(self, folder: str) -> int | None:
        try:
            status = os.stat(os.path.join(self.workspace, folder) if folder else self.workspace)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return None
        return status.st_mtime_ns if stat.S_ISDIR(status.st_mode) else None

    def _list(self, folder: str) -> tuple[dict[str, int], list[str]]:
        """One folder: its metadata files (relative path -> inode) and its sub-folders."""
        files: dict[str, int] = {}
        folders: list[str] = []
        prefix = f"{folder}/" if folder else ""
        try:
            entries = os.scandir(os.path.join(self.workspace, folder) if folder
                                 else self.workspace)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return files, folders
        with entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue  # the index itself, temporary files of atomic writes
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(prefix + name)
                    elif name.endswith(METADATA_SUFFIX) and entry.is_file(follow_symlinks=False):
                        files[prefix + name] = entry.inode()  # no symlinks out
                except FileNotFoundError:
                    continue  # deleted while we looked
        return files, folders

    def _changed_folders(self, db: sqlite3.Connection) -> dict[str, int | None]:
        """Known folders whose mtime moved (or that are gone: None); all of them, with the
        workspace itself, on a new index."""
        known = dict(db.execute("SELECT path, mtime_ns FROM folder"))
        if not known:
            known = {"": -1}
        changed = {}
        for folder, recorded in known.items():
            mtime = self._folder_mtime(folder)
            if mtime != recorded:
                changed[folder] = mtime
        return changed

    def _sync(self, db: sqlite3.Connection) -> None:
        changed = self._changed_folders(db)
        stale = self._sweep(db)
        if not changed and not stale:
            return  # the common case: nothing changed, no write lock taken
        db.execute("BEGIN IMMEDIATE")
        try:
            # again, under the lock: another process may have synced meanwhile
            for folder in self._changed_folders(db):
                self._sync_folder(db, folder)
            for path in stale:
                self._sync_file(db, path)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _sync_folder(self, db: sqlite3.Connection, folder: str) -> None:
        """List ``folder`` (and any new sub-folder in it) and bring its rows in line."""
        pending = [folder]
        while pending:
            folder = pending.pop()
            mtime = self._folder_mtime(folder)  # before listing: a later change moves it again
            if mtime is None:  # gone, with everything under it
                like = f"{_like_escape(folder)}/%"
                for (path,) in db.execute(
                        "SELECT path FROM saved_query WHERE folder = ? OR folder LIKE ? "
                        "ESCAPE '\\'", (folder, like)).fetchall():
                    self._delete(db, path)
                db.execute("DELETE FROM folder WHERE path = ? OR path LIKE ? ESCAPE '\\'",
                           (folder, like))
                continue
            files, folders = self._list(folder)
            indexed = dict(db.execute("SELECT path, inode FROM saved_query WHERE folder = ?",
                                      (folder,)))
            for path in indexed.keys() - files.keys():
                self._delete(db, path)
            for path, inode in files.items():
                if indexed.get(path) != inode:
                    self._sync_file(db, path)
            if time.time_ns() - mtime < _RACY_NS:
                mtime = -1  # too recent to prove nothing else changes in this tick
            db.execute("INSERT OR REPLACE INTO folder (path, mtime_ns) VALUES (?, ?)",
                       (folder, mtime))
            known = {path for (path,) in db.execute(
                "SELECT path FROM folder WHERE path IN (%s)" % ",".join("?" * len(folders)),
                folders)} if folders else set()
            pending += [sub for sub in folders if sub not in known]

    def _record(self, db: sqlite3.Connection, path: str, marks: Sequence[int]) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("SELECT 1 FROM folder WHERE path = ''").fetchone() is None:
                db.execute("COMMIT")
                return  # never built: the first call lists the whole workspace anyway
            self._sync_file(db, path)
            folder = path.rpartition("/")[0]
            row = db.execute("SELECT mtime_ns FROM folder WHERE path = ?", (folder,)).fetchone()
            if row is None:  # a folder the index has not seen (new, or created meanwhile)
                db.execute("INSERT INTO folder (path, mtime_ns) VALUES (?, -1)", (folder,))
            elif marks and row[0] != -1 and row[0] in marks[:-1] and marks[-1] % 1_000_000:
                # The index knew the folder at one of the writer's marks, and from there on
                # only the writer changed it: its last mark is the folder with this row in.
                # (A mark in whole milliseconds suggests a file system with coarse timestamps,
                # where a later change could keep that mtime: not taken, the folder is listed.)
                db.execute("UPDATE folder SET mtime_ns = ? WHERE path = ?", (marks[-1], folder))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _sweep(self, db: sqlite3.Connection) -> list[str]:
        """The next ``SWEEP_FILES`` known files (in turn) whose mtime or size changed."""
        last = _SWEPT.get(str(self.path), 0)
        rows = db.execute("SELECT id, path, inode, mtime_ns, size FROM saved_query "
                          "WHERE id > ? ORDER BY id LIMIT ?", (last, SWEEP_FILES)).fetchall()
        if len(rows) < SWEEP_FILES:  # wrap around
            rows += db.execute("SELECT id, path, inode, mtime_ns, size FROM saved_query "
                               "WHERE id <= ? ORDER BY id LIMIT ?",
                               (last, SWEEP_FILES - len(rows))).fetchall()
        stale = []
        for _id, path, inode, mtime, size in rows:
            try:
                status = os.stat(os.path.join(self.workspace, path))
            except OSError:
                stale.append(path)
                continue
            if (status.st_ino, status.st_mtime_ns, status.st_size) != (inode, mtime, size):
                stale.append(path)
        if rows:
            _SWEPT[str(self.path)] = rows[-1][0]
        return stale

    def _sync_file(self, db: sqlite3.Connection, path: str) -> None:
        """Re-read one metadata file (or drop it when it is gone)."""
        try:
            status = os.stat(os.path.join(self.workspace, path), follow_symlinks=False)
        except OSError:
            status = None
        if status is None or not stat.S_ISREG(status.st_mode):
            self._delete(db, path)
            return
        self._upsert(db, path, (status.st_ino, status.st_mtime_ns, status.st_size))

    @staticmethod
    def _delete(db: sqlite3.Connection, path: str) -> None:
        row = db.execute("SELECT id FROM saved_query WHERE path = ?", (path,)).fetchone()
        if row:
            db.execute("DELETE FROM saved_query_fts WHERE rowid = ?", row)
            db.execute("DELETE FROM saved_query WHERE id = ?", row)

    def _upsert(self, db: sqlite3.Connection, path: str, stamp: tuple[int, int, int]) -> None:
        self._delete(db, path)
        values = _read_metadata(self.workspace / path)
        folder = path.rpartition("/")[0]
        cursor = db.execute(
            f"INSERT INTO saved_query (path, folder, inode, mtime_ns, size, valid, "
            f"{', '.join(_FIELDS)}) VALUES (?, ?, ?, ?, ?, ?, {', '.join('?' * len(_FIELDS))})",
            (path, folder, *stamp, values is not None,
             *[(values or {}).get(f) for f in _FIELDS]))
        if values is not None:
            db.execute("INSERT INTO saved_query_fts (rowid, natural_language_query, sql_query) "
                       "VALUES (?, ?, ?)", (cursor.lastrowid, values.get("natural_language_query"),
                                            values.get("sql_query")))


def _close_recorder() -> None:
    for _inode, db in _RECORDER.values():
        db.close()
    _RECORDER.clear()


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _read_metadata(path: Path) -> dict[str, object] | None:
    """The indexed fields of one metadata file, or None when it is not a readable JSON object."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict):
        return None
    values: dict[str, object] = {}
    for name in _FIELDS:
        value = document.get(_METADATA_FIELD.get(name, name))
        if name in ("row_count", "column_count"):
            values[name] = value if isinstance(value, int) else None
        else:
            values[name] = None if value is None else str(value)
    return values
