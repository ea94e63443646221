"""The bundled ``bookstore`` SQLite sample, built from its committed SQL script on first use."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from nl2sql.config.bundled import bookstore_script_path


def ensure_bookstore(path: Path) -> Path:
    """Build the sample database at ``path`` unless it exists; returns ``path``.

    Built into a temporary file (one per process and thread) and renamed, so concurrent first
    uses never see half a file nor write into each other's.
    """
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.unlink(missing_ok=True)
    script = bookstore_script_path().read_text(encoding="utf-8")
    connection = sqlite3.connect(tmp)
    try:
        connection.executescript(script)
        connection.commit()
    finally:
        connection.close()
    os.replace(tmp, path)
    return path
