"""Result files in the workspace: safe paths, streamed CSV, metadata, and the text preview.

Contract (ARCHITECTURE.md, "Result files"): ``{workspace}/{name}.csv`` plus
``{workspace}/{name}.metadata.json``. Both are written to temporary files and renamed, the
metadata last, so a reader (or the saved-queries index) never sees half a result.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nl2sql.cache import atomic_write_text, default_file_mode
from nl2sql.errors import WorkspacePathError
from nl2sql.models import utc_now
from nl2sql.text import shorten

PREVIEW_ROWS = 10
PREVIEW_CELL_CHARS = 80
CSV_SUFFIX = ".csv"
METADATA_SUFFIX = ".metadata.json"


def resolve_workspace_path(workspace: Path, name: str, *, must_exist: bool = False) -> Path:
    """``name`` resolved inside ``workspace`` (created if missing), or ``WorkspacePathError``.

    Refused: empty names, NUL bytes, absolute paths, ``..`` parts, and anything whose real path
    (after following symlinks) lies outside the workspace.
    """
    hint = "use a file name relative to the workspace, e.g. 'sales_2024.csv'"
    if not isinstance(name, str) or not name.strip():
        raise WorkspacePathError(f"The file name is empty; {hint}.")
    if "\x00" in name:
        raise WorkspacePathError(f"The file name contains a NUL byte; {hint}.")
    relative = Path(name)
    if relative.is_absolute() or name.startswith(("/", "\\", "~")):
        raise WorkspacePathError(f"Absolute path '{name}' is not allowed; {hint}.")
    if ".." in relative.parts or ".." in Path(name.replace("\\", "/")).parts:
        raise WorkspacePathError(f"Path '{name}' leaves the workspace; {hint}.")
    workspace.mkdir(parents=True, exist_ok=True)
    root = workspace.resolve()
    target = (root / relative).resolve()
    if target == root or not target.is_relative_to(root):
        raise WorkspacePathError(f"Path '{name}' resolves outside the workspace; {hint}.")
    if must_exist and not target.is_file():
        raise WorkspacePathError(f"File '{name}' does not exist in the workspace; list saved "
                                 f"results with saved_queries_list.")
    return target


def safe_name_from_query(query: str, *, max_slug: int = 40) -> str:
    """A readable, stable file stem: a slug of the query plus a short hash of its full text."""
    slug = ""
    for word in re.findall(r"[a-z0-9]+", query.lower()):
        if len(slug) + len(word) + 1 > max_slug:
            break
        slug = f"{slug}_{word}" if slug else word
    digest = hashlib.sha256(query.encode("utf-8")).hexdigest()[:6]
    return f"{slug or 'query'}_{digest}"


class ResultMetadata(BaseModel):
    """``{name}.metadata.json``: the contract fields first, then what else the run learned."""

    model_config = ConfigDict(extra="allow")

    sql_query: str
    timestamp: datetime = Field(default_factory=utc_now)
    row_count: int
    column_count: int
    csv_filename: str  # relative to the workspace
    db_id: str
    natural_language_query: str | None = None
    columns: list[str] = Field(default_factory=list)
    elapsed_seconds: float = 0.0
    truncated: bool = False  # the row cap cut the result
    max_rows: int | None = None

    @property
    def metadata_filename(self) -> str:
        return metadata_name_for(self.csv_filename)


def metadata_name_for(csv_name: str) -> str:
    """``x.csv`` -> ``x.metadata.json``: the metadata file that sits beside a result CSV."""
    return csv_name.removesuffix(CSV_SUFFIX) + METADATA_SUFFIX


def read_metadata_for_csv(csv_path: Path) -> ResultMetadata | None:
    """The metadata beside ``csv_path``, or None when it is missing or unreadable."""
    try:
        text = csv_path.with_name(metadata_name_for(csv_path.name)).read_text(encoding="utf-8")
        return ResultMetadata.model_validate_json(text)
    except (OSError, ValidationError):
        return None


class _Appender:
    """The file-like target ``csv.writer`` needs: ``write`` is a bound ``list.append``."""

    def __init__(self, write: Any) -> None:
        self.write = write


class CsvResultWriter:
    """A result sink that streams rows into a temporary CSV beside the final file.

    Takes Python rows (``write_rows``, formatted by ``csv.writer``) or ready CSV records from the
    server (``write_csv_records``, written as they are). Keeps only the first rows for the
    preview. ``publish`` renames the CSV into place and then writes the metadata.
    """

    def __init__(self, csv_path: Path, *, preview_rows: int = PREVIEW_ROWS) -> None:
        self.csv_path = csv_path
        self.preview_limit = preview_rows
        self.columns: list[str] = []
        self.preview: list[list[str]] = []
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=csv_path.parent, prefix=f".{csv_path.name}.",
                                   suffix=".tmp")
        os.fchmod(fd, default_file_mode())  # a result file is an ordinary file, not 0600
        self._tmp = Path(tmp)
        self._binary = os.fdopen(fd, "wb", buffering=1 << 20)
        # csv.writer calls write() once per row: a list's C-level append is the cheapest
        # target; each batch is then joined and encoded at once (measured faster per row
        # than a TextIOWrapper).
        self._lines: list[str] = []
        self._writer = csv.writer(_Appender(self._lines.append), lineterminator="\n")

    # -- ResultSink / CsvResultSink -------------------------------------------------------------
    def begin(self, columns: Sequence[str]) -> None:
        self.columns = list(columns)
        self._writer.writerow(self.columns)
        self._flush_lines()

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        if len(self.preview) < self.preview_limit:
            for row in rows[: self.preview_limit - len(self.preview)]:
                self.preview.append(["" if v is None else str(v) for v in row])
        self._writer.writerows(rows)
        self._flush_lines()

    def _flush_lines(self) -> None:
        self._binary.write("".join(self._lines).encode("utf-8"))
        self._lines.clear()

    def write_csv_records(self, records: Sequence[bytes]) -> None:
        if len(self.preview) < self.preview_limit:
            head = records[: self.preview_limit - len(self.preview)]
            text = b"".join(bytes(r) for r in head).decode("utf-8", errors="replace")
            self.preview.extend(csv.reader(io.StringIO(text, newline="")))
        self._binary.writelines(records)

    # -- finishing ------------------------------------------------------------------------------
    def publish(self, metadata: ResultMetadata) -> None:
        """Move the CSV into place, then write the metadata (last, so it marks a whole result)."""
        self._close()
        os.replace(self._tmp, self.csv_path)
        metadata_path = self.csv_path.with_name(metadata_name_for(self.csv_path.name))
        atomic_write_text(metadata_path, metadata.model_dump_json(indent=2) + "\n")

    def discard(self) -> None:
        self._close()
        self._tmp.unlink(missing_ok=True)

    def _close(self) -> None:
        if not self._binary.closed:
            self._binary.close()


def format_preview(metadata: ResultMetadata, rows: Sequence[Sequence[str]], *,
                   cell_chars: int = PREVIEW_CELL_CHARS) -> str:
    """The text a person or model sees: counts, file names, the first rows, every cut named."""
    lines = [f"{metadata.row_count:,} rows x {metadata.column_count} columns saved to "
             f"{metadata.csv_filename} (metadata: {metadata.metadata_filename})."]
    cut_cells = 0

    def cell(value: str) -> str:
        nonlocal cut_cells
        text = value.replace("\r", "\\r").replace("\n", "\\n").replace("|", "\\|")
        if len(text) > cell_chars:
            cut_cells += 1
        return shorten(text, cell_chars)

    if metadata.columns:
        lines.append("| " + " | ".join(cell(c) for c in metadata.columns) + " |")
        lines.append("|" + "---|" * len(metadata.columns))  # a Markdown table renders
        lines.extend("| " + " | ".join(cell(v) for v in row) + " |" for row in rows)
    if metadata.row_count == 0:
        lines.append("The query returned no rows.")
    elif len(rows) < metadata.row_count:
        lines.append(f"Preview: the first {len(rows)} of {metadata.row_count:,} rows; read more "
                     f"with csv_head/csv_tail on {metadata.csv_filename}.")
    if cut_cells:
        lines.append(f"{cut_cells} preview cell(s) longer than {cell_chars} characters were "
                     f"cut (marked …); the CSV has the full values.")
    if metadata.truncated:
        lines.append(f"Truncated: the result was cut at the row cap of {metadata.max_rows:,} "
                     f"rows; add a LIMIT or a filter, or raise max_rows for db "
                     f"{metadata.db_id} in dbs.yaml.")
    return "\n".join(lines)
