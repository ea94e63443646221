"""``csv_head_op`` / ``csv_tail_op``: the first or last rows of a result CSV in the workspace.

Both read only what they show. The tail seeks backwards from the end of the file in blocks; a
newline inside a quoted field is told apart from a record end by quote parity counted from the
end of the file: in RFC 4180 CSV (what the csv module writes) every ``"`` belongs to a quoted
field and toggles "inside quotes", and the end of the file is outside quotes, so a newline with
an even number of ``"`` after it ends a record. Files with stray, unbalanced quotes are not
valid CSV; their tail may then start mid-record. A blank line is a record with one empty field
(PostgreSQL's CSV writes a one-column NULL that way), in the head and the tail alike.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from nl2sql.workspace import csv_dialect  # noqa: F401 - raises the csv field size limit for the readers
from nl2sql.errors import WorkspaceFileError, WorkspacePathError
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.params import CsvFile, RowCount
from nl2sql.workspace.results import read_metadata_for_csv, resolve_workspace_path, result_lock
from nl2sql._helpers import ELLIPSIS

MAX_ROWS = 1000
#: Cells longer than this are cut in what csv_head / csv_tail show (the file keeps them whole).
SHOWN_CELL_CHARS = 2000
_BLOCK = 64 * 1024
_ENCODING = "utf-8-sig"  # tolerate a BOM written by spreadsheet tools


class CsvRows(BaseModel):
    """Some rows of a CSV file, with its header."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    csv_file: str
    position: str  # "first" or "last"
    columns: list[str]
    rows: list[list[str]]
    total_rows: int | None = None  # from the metadata file when there is one

    def render(self) -> str:
        total = f" of {self.total_rows}" if self.total_rows is not None else ""
        if not self.rows:
            return f"{self.csv_file} has no data rows; columns: {', '.join(self.columns)}."
        title = f"{self.position.capitalize()} {len(self.rows)}{total} rows of {self.csv_file}:"
        cut = 0
        rows = []
        for row in self.rows:
            rows.append([_cut_cell(v) for v in row])
            cut += sum(len(v) > SHOWN_CELL_CHARS for v in row)
        text = f"{title}\n{_to_csv([self.columns, *rows])}"
        if cut:
            text += (f"\n{cut} cell(s) longer than {SHOWN_CELL_CHARS:,} characters are cut here "
                     f"(marked {ELLIPSIS}[N characters]); the file has the whole values.")
        return text


def _cut_cell(value: str) -> str:
    if len(value) <= SHOWN_CELL_CHARS:
        return value
    return f"{value[:SHOWN_CELL_CHARS]}{ELLIPSIS}[{len(value):,} characters]"


def csv_head_op(ctx: OpsContext, csv_file: CsvFile, n: RowCount = 10, *,
                db_id: str | None = None) -> CsvRows:
    """The header and the first ``n`` rows of a CSV file in the workspace (with ``db_id``:
    only of a result of that database)."""
    path = _resolve(ctx, csv_file)
    with result_lock(path.parent, shared=True):  # the CSV and its metadata from one run
        require_result_of(db_id, path, ctx.workspace)
        columns, rows = read_head(path, _bounded(n))
        total = _metadata_row_count(path, ctx.workspace)
    return CsvRows(csv_file=csv_file, position="first", columns=columns, rows=rows,
                   total_rows=total)


def csv_tail_op(ctx: OpsContext, csv_file: CsvFile, n: RowCount = 10, *,
                db_id: str | None = None) -> CsvRows:
    """The header and the last ``n`` rows of a CSV file, read from the end of the file (with
    ``db_id``: only of a result of that database)."""
    path = _resolve(ctx, csv_file)
    with result_lock(path.parent, shared=True):
        require_result_of(db_id, path, ctx.workspace)
        columns, _ = read_head(path, 0)
        rows = read_tail(path, _bounded(n))
        total = _metadata_row_count(path, ctx.workspace)
    return CsvRows(csv_file=csv_file, position="last", columns=columns, rows=rows,
                   total_rows=total)


# -- reading ------------------------------------------------------------------------------

def read_head(path: Path, n: int) -> tuple[list[str], list[list[str]]]:
    """Header and first ``n`` rows; reads no further than that."""
    try:
        with path.open(newline="", encoding=_ENCODING) as handle:
            reader = csv.reader(handle)
            columns = next(reader, [])
            rows = [row or [""] for _, row in zip(range(n), reader)]
    except (UnicodeDecodeError, csv.Error) as exc:
        raise _not_csv(path, exc) from None
    return columns, rows


def _not_csv(path: Path, exc: Exception) -> WorkspaceFileError:
    reason = "it is not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else \
        f"it is not valid CSV ({str(exc).rstrip('.')})"
    return WorkspaceFileError(f"Cannot read {path.name} as CSV: {reason}; csv_head and "
                              f"csv_tail read the result files db_execute_sql writes.")


def read_tail(path: Path, n: int) -> list[list[str]]:
    """The last ``n`` data rows (never the header), reading blocks backwards from the end."""
    if n <= 0:
        return []
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        start, reached_start = _tail_start(handle, size, n)
        handle.seek(start)
        data = handle.read(size - start)
    try:
        text = data.decode(_ENCODING if start == 0 else "utf-8")
        rows = [row or [""] for row in csv.reader(io.StringIO(text, newline=""))]
    except (UnicodeDecodeError, csv.Error) as exc:
        raise _not_csv(path, exc) from None
    if reached_start:
        rows = rows[1:]  # the first record of the file is the header
    return rows[-n:]


def _tail_start(handle: io.BufferedReader, size: int, n: int) -> tuple[int, bool]:
    """Offset where the last ``n`` records begin, and whether that is the start of the file."""
    end = size
    # A final record terminator is not the start of a record: look for one more boundary.
    handle.seek(max(size - 1, 0))
    needed = n + (1 if size and handle.read(1) == b"\n" else 0)
    quotes = 0  # '"' seen between the current position and the end of the file
    found = 0
    while end > 0:
        begin = max(end - _BLOCK, 0)
        handle.seek(begin)
        block = handle.read(end - begin)
        for i in range(len(block) - 1, -1, -1):
            byte = block[i]
            if byte == 0x22:  # '"' (never part of a multi-byte UTF-8 sequence)
                quotes += 1
            elif byte == 0x0A and quotes % 2 == 0:  # '\n' outside quotes: a record boundary
                found += 1
                if found == needed:
                    return begin + i + 1, False
        end = begin
    return 0, True


# -- helpers ------------------------------------------------------------------------------

def _resolve(ctx: OpsContext, csv_file: str) -> Path:
    return resolve_workspace_path(ctx.workspace, csv_file, must_exist=True)


def require_result_of(db_id: str | None, csv_path: Path, workspace: Path) -> None:
    """With ``db_id``, refuse a file that is not a result of that database (no metadata, or
    another database's): an agent pinned to one database reads nothing of the others."""
    if db_id is None:
        return
    metadata = read_metadata_for_csv(csv_path, workspace)
    if metadata is None or metadata.db_id != db_id:
        raise WorkspacePathError(f"'{csv_path.name}' is not a result of the database {db_id}; "
                                 f"read only the results of your own queries.")


def _bounded(n: int) -> int:
    return max(1, min(int(n), MAX_ROWS))


def _metadata_row_count(csv_path: Path, workspace: Path) -> int | None:
    """Row count from the sibling ``{name}.metadata.json``, when it exists and says so."""
    metadata = read_metadata_for_csv(csv_path, workspace)
    return metadata.row_count if metadata is not None else None


def _to_csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().rstrip("\n")
