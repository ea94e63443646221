"""The annotation cache: one ``DbInfo`` JSON file per database, written atomically.

Path contract: ``{data_dir}/database/{db_id}/{db_id}.db_info.json``. The runtime reads only
this file, never the database catalog.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from nl2sql.errors import SchemaCacheError, SchemaCacheMissingError
from nl2sql.models import DbInfo


def cache_path(data_dir: Path, db_id: str) -> Path:
    return data_dir / "database" / db_id / f"{db_id}.db_info.json"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename,
    so a reader sees either the old file or the whole new one, never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
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


def load_db_info(data_dir: Path, db_id: str) -> DbInfo:
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
