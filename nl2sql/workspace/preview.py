"""The text a person or a model sees of a result: counts, the file, the first rows, every cut
named (``format_preview``, what ``db_execute_sql`` answers), and numbers written one way
(``preview_numbers``), whatever path wrote the rows and whichever face shows them.

The first rows come as the CSV writes them: a PostgreSQL ``numeric`` as the server's text with
its whole scale (``15375.000000000000``), a float the shortest way (``15375``), and
``nl2sql-ask`` shows them from a DataFrame, which read ``15375.0``. A preview writes a number
as ``float_text`` writes a float, in every column that holds only numbers (as pandas would read
it): ``15375``, ``2.5``; a sum of floats without its rounding noise (``17233.49``, not
``17233.49000000001``). The CSV keeps the exact text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nl2sql._helpers import shorten
from nl2sql.workspace.results import PREVIEW_CELL_CHARS, ResultMetadata

#: Significant digits below which a 16-17 digit float is taken for rounding noise around them.
NOISE_FREE_DIGITS = 12
#: A number as a CSV cell holds one (integers, fixed-point decimals, exponents).
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\Z")


def number_columns(rows: Sequence[Sequence[str]]) -> list[bool]:
    """For each column of ``rows``: whether it holds only numbers (or empty cells), at least
    one."""
    width = max((len(row) for row in rows), default=0)
    found = []
    for column in range(width):
        cells = [row[column] for row in rows if column < len(row) and row[column] != ""]
        found.append(bool(cells) and all(_NUMBER.match(cell) for cell in cells))
    return found


def preview_numbers(rows: Sequence[Sequence[str]],
                    numeric: Sequence[bool] | None = None) -> list[list[str]]:
    """``rows`` with each column of only numbers (or empty cells) written one way: a fixed-point
    decimal without the zeros that end its fraction (``15375.000000000000`` -> ``15375``,
    ``2.50`` -> ``2.5``); any other column as it is. ``numeric``: ``number_columns(rows)``
    when the caller has it already."""
    shown = [list(row) for row in rows]
    for column, numeric_column in enumerate(number_columns(shown) if numeric is None
                                            else numeric):
        if numeric_column:
            for row in shown:
                if column < len(row):
                    row[column] = plain_number(row[column])
    return shown


def plain_number(cell: str) -> str:
    """A fixed-point decimal's text without the zeros that end its fraction (``2.50`` ->
    ``2.5``, ``15375.000`` -> ``15375``) and without a binary float's rounding noise
    (``17233.49000000001`` -> ``17233.49``); other text as it is."""
    if "." not in cell or "e" in cell.lower():
        return cell
    cell = cell.rstrip("0").rstrip(".")
    return "0" if cell in ("", "-", "+", "-0") else _without_float_noise(cell)


def _without_float_noise(cell: str) -> str:
    """A sum of floats written in all its 16-17 digits (``18491.549999999992``,
    ``0.30000000000000004``) as the number of at most ``NOISE_FREE_DIGITS`` significant digits
    it is within rounding of (``18491.55``, ``0.3``); a number with real digits that far
    (``3141.592653589793``) as it is."""
    if _significant_digits(cell) < 16:
        return cell
    rounded = f"{float(cell):.15g}"
    if "e" in rounded or _significant_digits(rounded) > NOISE_FREE_DIGITS:
        return cell
    return rounded


def _significant_digits(number: str) -> int:
    """The digits of a fixed-point number's text, leading zeros aside."""
    return len(number.lstrip("+-").replace(".", "").lstrip("0"))


def format_preview(metadata: ResultMetadata, rows: Sequence[Sequence[str]], *,
                   cell_chars: int = PREVIEW_CELL_CHARS) -> str:
    """The text a person or model sees: counts, file names, the first rows, every cut named."""
    count, width = metadata.row_count, metadata.column_count
    lines = [f"{count:,} row{'' if count == 1 else 's'} x {width} column"
             f"{'' if width == 1 else 's'} saved to {metadata.csv_filename} (metadata: "
             f"{metadata.metadata_filename})."]
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
        lines.extend("| " + " | ".join(cell(v) for v in row) + " |"
                     for row in preview_numbers(rows))
    if metadata.row_count == 0:
        lines.append("The query returned no rows.")
    elif len(rows) < metadata.row_count:
        lines.append(f"Preview: the first {len(rows)} of {metadata.row_count:,} rows; read more "
                     f"with csv_head/csv_tail on {metadata.csv_filename}.")
    if cut_cells:
        lines.append(f"{cut_cells} preview cell(s) longer than {cell_chars} characters were "
                     f"cut (marked …); the CSV has the full values.")
    if metadata.truncated and metadata.truncated_by == "bytes":
        budget = f"{metadata.max_result_bytes:,} bytes" if metadata.max_result_bytes else "bytes"
        lines.append(f"Truncated: the result was cut at the file size budget of {budget} "
                     f"after {metadata.row_count:,} rows; select fewer or shorter columns, add "
                     f"a LIMIT or a filter, or raise max_result_bytes for db {metadata.db_id} "
                     f"in dbs.yaml.")
    elif metadata.truncated:
        lines.append(f"Truncated: the result was cut at the row cap of {metadata.max_rows:,} "
                     f"rows; add a LIMIT or a filter, or raise max_rows for db "
                     f"{metadata.db_id} in dbs.yaml.")
    return "\n".join(lines)
