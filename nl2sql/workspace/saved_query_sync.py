"""The local saved-query index's mtime inference: finding what changed in a workspace's folders
without walking it, for results nl2sql did not record itself (files another program writes, or
edits in place). Only a local workspace needs it: with a shared store, the index is written as
results are saved and nothing is inferred (``saved_query_store``).

- Folders: a file created, renamed or deleted in a folder changes the folder's mtime (results
  and their metadata are written to a temporary file and renamed, by nl2sql and any other
  program that does so). The index keeps each folder's mtime; a call stats the known folders
  only, and lists (``scandir``, no ``stat`` per file) just the folders whose mtime moved,
  re-reading the entries whose inode is new. A listed folder's mtime younger than ``_RACY_NS``
  is not trusted (a change within the same clock tick would not move it again): that folder is
  listed again on the next call.
- Files changed in place (same inode, same folder mtime): each call stats ``SWEEP_FILES`` known
  files in turn, so a small workspace is checked whole on every call and a large one within a
  few calls.
- Results nl2sql saves or deletes itself: the writer ``record``s each as it is published, and
  the folder's new mtime is taken as known, so the next call lists nothing, when the writer's
  ``FolderTrace`` shows that only the writer changed the folder since the mtime the index knew:
  each of its changes (the temporary file at the query's start, the renames under the folder's
  lock) is bracketed by two ``stat`` calls, and each ``stat`` before must find the mtime of the
  one after the previous change. Anything else in between (another program's file, another
  query's temporary file), or a folder the index has marked to list again (``-1``), and the
  folder is listed as before. Not provable from mtimes, so found only when the folder is next
  listed (at its next change not recorded): a program other than nl2sql changing the folder
  between the two ``stat`` calls around one of our changes (microseconds), or after them within
  the same clock tick (none with the multigrain timestamps of Linux 6.13+; 1-10 ms before). A
  mtime in whole milliseconds (a file system with coarse timestamps, as FAT's 2 s) is never
  taken.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from collections.abc import Sequence
from pathlib import Path

from nl2sql.workspace.results import METADATA_SUFFIX

#: Known files stat'ed per call to catch metadata rewritten in place.
SWEEP_FILES = 200
#: A folder mtime this recent may hide a later change in the same clock tick: list it again.
_RACY_NS = 2_000_000_000
#: The indexed fields of a metadata file (``IndexedQuery`` after its path).
FIELDS = ("timestamp", "db_id", "row_count", "column_count", "csv_filename",
          "natural_language_query", "sql_query", "result_id")
#: Index column -> metadata field, where the names differ.
_METADATA_FIELD = {"result_id": "id"}
#: index -> the last row id stat'ed by the sweep in this process (where the next begins).
_SWEPT: dict[str, int] = {}


class WorkspaceSync:
    """The rows of one local index (a connection the caller holds) against ``workspace``'s
    files; ``key`` names the index (where the sweep goes on from)."""

    def __init__(self, workspace: Path, key: str) -> None:
        self.workspace = workspace
        self.key = key

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

    def sync(self, db: sqlite3.Connection) -> None:
        """Bring the rows in line with the metadata files: the folders whose mtime moved, and
        the sweep's share of the files (inside one write transaction when anything changed)."""
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

    def record(self, db: sqlite3.Connection, path: str, marks: Sequence[int]) -> None:
        """The row of ``path`` brought in line with its file now, and the folder's new mtime taken
        as known when the writer's ``marks`` prove only the writer changed it."""
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
        last = _SWEPT.get(self.key, 0)
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
            _SWEPT[self.key] = rows[-1][0]
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
        values = index_fields(self.workspace / path)
        folder = path.rpartition("/")[0]
        cursor = db.execute(
            f"INSERT INTO saved_query (path, folder, inode, mtime_ns, size, valid, "
            f"{', '.join(FIELDS)}) VALUES (?, ?, ?, ?, ?, ?, {', '.join('?' * len(FIELDS))})",
            (path, folder, *stamp, values is not None,
             *[(values or {}).get(f) for f in FIELDS]))
        if values is not None:
            db.execute("INSERT INTO saved_query_fts (rowid, natural_language_query, sql_query) "
                       "VALUES (?, ?, ?)", (cursor.lastrowid, values.get("natural_language_query"),
                                            values.get("sql_query")))


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def index_fields(path: Path) -> dict[str, object] | None:
    """The indexed fields of one metadata file, or None when it is not a readable JSON object."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict):
        return None
    values: dict[str, object] = {}
    for name in FIELDS:
        value = document.get(_METADATA_FIELD.get(name, name))
        if name in ("row_count", "column_count"):
            values[name] = value if isinstance(value, int) else None
        else:
            values[name] = None if value is None else str(value)
    return values
