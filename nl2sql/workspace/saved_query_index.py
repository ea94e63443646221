"""The saved-query index of a local workspace: a full-text index (SQLite FTS5) of the results'
metadata files, kept current at a cost that does not grow with the workspace.

The metadata files (``{name}.metadata.json``) are the truth; the index at
``{workspace}/.nl2sql/saved_queries.sqlite`` is a disposable copy of them (in a folder of its
own, so that SQLite's ``-wal``/``-shm`` files coming and going do not move the workspace's
mtime). Results nl2sql saves or deletes (``db_execute_sql``; the candidates ``nl2sql-ask``
drops) are ``record``ed as they are published, so they are listed and searchable at once,
whichever process searches; everything else (a file another program writes, or edits in place)
is found by the mtime inference each search runs first (``saved_query_sync``), without walking
the workspace. With a shared store (``store: postgresql://...``) the store's index is used
instead (``saved_query_store``, chosen by ``saved_query_index``), and nothing is inferred.

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

import logging
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import TypeVar

from nl2sql.store.records import IndexedQuery
from nl2sql.workspace.saved_query_sync import FIELDS, WorkspaceSync

INDEX_FILENAME = ".nl2sql/saved_queries.sqlite"
BUSY_TIMEOUT_MS = 30_000
#: How long ``record`` waits for the index (it runs as a result is saved; giving up is safe).
RECORD_BUSY_TIMEOUT_MS = 500
_SCHEMA_VERSION = 3
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
#: A word of a search: each becomes a required prefix term.
TERM = re.compile(r"\w+", re.UNICODE)
_T = TypeVar("_T")
#: The connection ``record`` keeps open, for one index file at a time: path -> (the file's
#: inode, connection). Opening one costs ~2 ms when no other is open (SQLite sets up the WAL
#: files), several times what a record itself costs; a replaced file gets a new connection.
_RECORDER: dict[str, tuple[int, sqlite3.Connection]] = {}
_RECORDER_LOCK = threading.Lock()

logger = logging.getLogger(__name__)


def fts_query(text: str) -> str | None:
    """User text -> an FTS5 query that cannot be a syntax error: every word becomes a quoted
    prefix term (``"cust"*``), all of them required. None when the text has no word at all."""
    terms = TERM.findall(text)
    return " ".join(f'"{term}"*' for term in terms) if terms else None


class SavedQueryIndex:
    """The FTS5 index of one local workspace. Cheap to create; open one per call."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.path = workspace / INDEX_FILENAME
        self._sync = WorkspaceSync(workspace, str(self.path))

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
            self._sync.sync(db)
            total = db.execute(f"SELECT count(*) FROM saved_query WHERE {where}",
                               params).fetchone()[0]
            rows = db.execute(
                f"SELECT path, {', '.join(FIELDS)} FROM saved_query WHERE {where} "
                f"ORDER BY timestamp DESC, path DESC LIMIT ?", [*params, max(limit, 0)]).fetchall()
            return [IndexedQuery(*row) for row in rows], total

        return self._run(query)

    def find(self, result_id: str) -> IndexedQuery | None:
        """The saved query whose metadata has ``"id": result_id`` (the newest), or None."""

        def query(db: sqlite3.Connection) -> IndexedQuery | None:
            self._sync.sync(db)
            row = db.execute(
                f"SELECT path, {', '.join(FIELDS)} FROM saved_query WHERE valid = 1 AND "
                f"result_id = ? ORDER BY timestamp DESC LIMIT 1", (result_id,)).fetchone()
            return IndexedQuery(*row) if row else None

        return self._run(query)

    def sync(self) -> None:
        """Bring the index in line with the metadata files (``search`` does this itself)."""
        self._run(self._sync.sync)

    def record(self, metadata_path: Path, marks: Sequence[int] = ()) -> None:
        """This process just wrote, replaced or deleted ``metadata_path``: bring its row in
        line with the file now, and take the folder's new mtime as known when ``marks`` (the
        writer's ``FolderTrace``) shows that only this process changed the folder since the
        index last knew it, so the next call does not list the folder.

        Never raises and never waits long: when the index is missing (not built yet), of
        another version, busy or broken, nothing is recorded, and the next call finds the
        change as it finds anyone's (the folder's mtime moved)."""
        path = indexed_path(self.workspace, metadata_path)
        if path is None:
            return
        with _RECORDER_LOCK:
            try:
                db = self._recorder()
                if db is not None and \
                        db.execute("PRAGMA user_version").fetchone()[0] == _SCHEMA_VERSION:
                    self._sync.record(db, path, marks)
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


def indexed_path(workspace: Path, metadata_path: Path) -> str | None:
    """``metadata_path`` as an index names it (relative to ``workspace``, ``/``-separated), or
    None when it is outside the workspace or in a hidden folder (never listed)."""
    try:
        relative = metadata_path.relative_to(workspace)
    except ValueError:
        try:
            relative = metadata_path.relative_to(workspace.resolve())
        except (ValueError, OSError):
            return None
    if any(part.startswith(".") for part in relative.parts):
        return None
    return relative.as_posix()


def _close_recorder() -> None:
    for _inode, db in _RECORDER.values():
        db.close()
    _RECORDER.clear()
