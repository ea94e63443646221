"""The annotation cache: one ``DbInfo`` JSON file per database, written atomically.

Path contract: ``{data_dir}/database/{db_id}/{db_id}.db_info.json``. The runtime reads only
this file, never the database catalog.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from nl2sql.errors import SchemaCacheError, SchemaCacheMissingError
from nl2sql.schema.models import DbInfo
from nl2sql.schema.secret_columns import mark_secret_columns

log = logging.getLogger(__name__)


def cache_path(data_dir: Path, db_id: str) -> Path:
    return data_dir / "database" / db_id / f"{db_id}.db_info.json"


def _read_umask() -> int:
    # Linux reports the umask without changing it; os.umask() must set one to read it, which
    # would briefly give a file created by another thread a mode of 0666.
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


_UMASK = _read_umask()  # read once, at import


def default_file_mode() -> int:
    """0666 less the process umask: what ``open(path, "w")`` would give a new file."""
    return 0o666 & ~_UMASK


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename,
    so a reader sees either the old file or the whole new one, never a half-written file.

    ``durable`` also flushes the text to disk (``fsync``) before the rename, so the file
    survives a power loss or an OS crash right after the call; the rename alone already gives
    every reader the consistency above."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file 0600: keep the mode of the file being replaced, else give a new
        # file the mode the user's umask gives any new file. Set before the rename, so the
        # final path never has a wrong mode, even for a moment.
        os.fchmod(fd, stat.S_IMODE(path.stat().st_mode) if path.exists() else default_file_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_db_info(db_info: DbInfo, data_dir: Path) -> Path:
    path = cache_path(data_dir, db_info.db_id)
    atomic_write_text(path, db_info.model_dump_json(indent=2, by_alias=True) + "\n")
    return path


def has_cache(data_dir: Path, db_id: str) -> bool:
    return cache_path(data_dir, db_id).is_file()


def load_db_info(data_dir: Path, db_id: str,
                 secret_columns: Sequence[str] | None = None) -> DbInfo:
    """The cache of ``db_id``. With ``secret_columns`` (dbs.yaml's, as the database's config
    has them now): when they changed since annotation, the columns are marked again at once
    and a new secret's sample cells and values dropped, in the file too (so the context index,
    rebuilt from it, drops them as well): the next ``annotate-schema`` is not waited for."""
    info = _read_db_info(data_dir, db_id)
    if secret_columns is not None and info.secret_columns != list(secret_columns):
        mark_secret_columns(info, secret_columns)
        try:
            save_db_info(info, data_dir)
        except OSError as exc:  # a read-only data dir: applied in memory only
            log.warning("the schema cache of %s was not updated for its secret_columns: %s",
                        db_id, exc)
    return info


def _read_db_info(data_dir: Path, db_id: str) -> DbInfo:
    path = cache_path(data_dir, db_id)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaCacheMissingError(
            f"Database '{db_id}' has no schema cache yet ({path}); run "
            f"`annotate-schema {db_id}` first.", db_id=db_id) from None
    try:
        return DbInfo.model_validate_json(text)
    except ValidationError as exc:
        raise SchemaCacheError(
            f"The schema cache {path} is unreadable ({exc.error_count()} errors); re-create it "
            f"with `annotate-schema {db_id}`.", db_id=db_id) from None
