"""Full-text index of the saved queries in a workspace (SQLite FTS5), never stale.

The metadata files (``{name}.metadata.json``) are the truth; the index at
``{workspace}/.nl2sql_index.sqlite`` is a disposable copy of them. Every search first syncs it
from the files' names, sizes and mtimes (one ``scandir`` walk, re-reading only what changed), so
a file written by another process, renamed or deleted is reflected on the next call. A missing,
corrupt or older-format index is rebuilt from the files; when the file stays locked past the busy
timeout, or the workspace is read-only, one call builds a throwaway index in memory instead.

Concurrency: WAL mode (readers never block the writer), a busy timeout so concurrent servers wait
instead of failing, and ``BEGIN IMMEDIATE`` for the sync so two writers never deadlock on an
upgrade from a read lock. Each call opens its own connection: nothing is shared across threads.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from nl2sql.workspace.results import METADATA_SUFFIX

INDEX_FILENAME = ".nl2sql_index.sqlite"
BUSY_TIMEOUT_MS = 30_000
_SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE saved_query (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,          -- metadata file, relative to the workspace, '/' separated
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
CREATE INDEX saved_query_timestamp ON saved_query (timestamp);
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
_T = TypeVar("_T")


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

    # -- connection -----------------------------------------------------------------------
    def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """``work`` on the index file. The files are the truth and the index only a cache, so:
        a corrupt index is deleted and rebuilt; one still locked after the busy timeout, or a
        read-only workspace, gets a throwaway in-memory index for this call (slower, correct)."""
        self.workspace.mkdir(parents=True, exist_ok=True)
        if not os.access(self.workspace, os.W_OK):
            return self._run_on(":memory:", work)
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
        # isolation_level=None: we issue BEGIN/COMMIT ourselves (BEGIN IMMEDIATE for writes).
        db = sqlite3.connect(target, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                             check_same_thread=False)
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            if db.execute("PRAGMA user_version").fetchone()[0] != _SCHEMA_VERSION:
                self._create_schema(db)
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
                db.execute("DROP TABLE IF EXISTS saved_query")
                db.execute("DROP TABLE IF EXISTS saved_query_fts")
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
    def _scan(self) -> dict[str, tuple[int, int]]:
        """Metadata files under the workspace: relative path -> (mtime_ns, size)."""
        found: dict[str, tuple[int, int]] = {}
        stack = [self.workspace]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue  # the index itself, temporary files of atomic writes
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.name.endswith(METADATA_SUFFIX) \
                            and entry.is_file(follow_symlinks=False):  # no symlinks out
                        stat = entry.stat()
                        rel = Path(entry.path).relative_to(self.workspace).as_posix()
                        found[rel] = (stat.st_mtime_ns, stat.st_size)
                except FileNotFoundError:
                    continue  # deleted while we looked
        return found

    def _indexed(self, db: sqlite3.Connection) -> dict[str, tuple[int, int]]:
        return {path: (mtime, size) for path, mtime, size
                in db.execute("SELECT path, mtime_ns, size FROM saved_query")}

    def _sync(self, db: sqlite3.Connection) -> None:
        on_disk = self._scan()
        if self._indexed(db) == on_disk:
            return  # the common case: nothing changed, no write lock taken
        db.execute("BEGIN IMMEDIATE")
        try:
            indexed = self._indexed(db)  # again, under the lock: another process may have synced
            for path in indexed.keys() - on_disk.keys():
                self._delete(db, path)
            for path, stamp in on_disk.items():
                if indexed.get(path) != stamp:
                    self._upsert(db, path, stamp)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    @staticmethod
    def _delete(db: sqlite3.Connection, path: str) -> None:
        row = db.execute("SELECT id FROM saved_query WHERE path = ?", (path,)).fetchone()
        if row:
            db.execute("DELETE FROM saved_query_fts WHERE rowid = ?", row)
            db.execute("DELETE FROM saved_query WHERE id = ?", row)

    def _upsert(self, db: sqlite3.Connection, path: str, stamp: tuple[int, int]) -> None:
        self._delete(db, path)
        values = _read_metadata(self.workspace / path)
        cursor = db.execute(
            f"INSERT INTO saved_query (path, mtime_ns, size, valid, {', '.join(_FIELDS)}) "
            f"VALUES (?, ?, ?, ?, {', '.join('?' * len(_FIELDS))})",
            (path, *stamp, values is not None, *[(values or {}).get(f) for f in _FIELDS]))
        if values is not None:
            db.execute("INSERT INTO saved_query_fts (rowid, natural_language_query, sql_query) "
                       "VALUES (?, ?, ?)", (cursor.lastrowid, values.get("natural_language_query"),
                                            values.get("sql_query")))


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
