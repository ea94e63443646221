"""Arrow record batches to CSV records of the one dialect (``nl2sql.workspace.csv_dialect``), in C++.

The columnar export paths (SQLite through ADBC, DuckDB natively) hand out Arrow record batches;
this module turns a batch into its CSV lines with Arrow compute kernels, never building a Python
object per value, and writes the bytes the row path (``CsvRowFormatter``) writes for the same
values. Arrow's own CSV writer is not used: it quotes every string (``"name 1"``) where the
dialect quotes only what needs it, and it has no ``\\x`` hex bytes or ``float8`` float text.

A column type this module does not know raises ``UnsupportedColumn``; the caller then keeps the
row path, so an unknown type can cost speed but never changes a file.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nl2sql.workspace.csv_dialect import float_text

#: Bytes that make a field quoted: ``,`` ``"`` ``\n`` ``\r``.
_SPECIAL_LOOKUP = np.zeros(256, dtype=bool)
_SPECIAL_LOOKUP[list(b',"\n\r')] = True
#: ``HEX_PAIRS[b]`` is the two lowercase hex digits of byte ``b`` as one little-endian uint16.
_HEX_PAIRS = np.frombuffer(b"".join(b"%02x" % b for b in range(256)), dtype=np.uint16)
#: PostgreSQL writes ``float8`` in fixed notation for decimal exponents -4..14.
_FIXED_LOW, _FIXED_HIGH = 1e-4, 1e15


class UnsupportedColumn(Exception):
    """A column this formatter cannot write byte-for-byte like the row path."""


def writes(kind: pa.DataType) -> bool:
    """Whether ``column_text`` writes a column of this Arrow type (else ``UnsupportedColumn``)."""
    return (pa.types.is_null(kind) or pa.types.is_integer(kind) or pa.types.is_floating(kind)
            or pa.types.is_boolean(kind) or pa.types.is_string(kind)
            or pa.types.is_large_string(kind) or pa.types.is_binary(kind)
            or pa.types.is_large_binary(kind) or pa.types.is_date32(kind)
            or (pa.types.is_decimal(kind) and kind.scale >= 0))


def format_batch(batch: pa.RecordBatch) -> pa.Array:
    """One string per row: the row's CSV record, line end included."""
    single = batch.num_columns == 1
    texts = [column_text(column, single_column=single) for column in batch.columns]
    if not texts:
        raise UnsupportedColumn("a result without columns")
    # The line end joins the last field alone (cheaper than a second pass over whole lines).
    texts[-1] = pc.binary_join_element_wise(texts[-1], "\n", "")
    return pc.binary_join_element_wise(*texts, ",") if len(texts) > 1 else texts[0]


def record_bytes(lines: pa.Array) -> tuple[memoryview, np.ndarray]:
    """The records of ``format_batch`` as one contiguous byte view, and each record's end
    offset within it (for cutting at a byte budget on a record boundary)."""
    offsets, data = _offsets_and_bytes(lines)
    return memoryview(data), offsets[1:] - offsets[0]


def _offsets_and_bytes(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string or binary array's ``len + 1`` value offsets (slice offset applied) and the
    bytes its values span, without copying."""
    large = pa.types.is_large_string(column.type) or pa.types.is_large_binary(column.type)
    _validity, offsets_buffer, data = column.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64 if large else np.int32,
                            count=column.offset + len(column) + 1)[column.offset:]
    start, end = int(offsets[0]), int(offsets[-1])
    if data is None or end == start:
        return offsets, np.empty(0, dtype=np.uint8)
    return offsets, np.frombuffer(data, dtype=np.uint8)[start:end]


def column_text(column: pa.Array, *, single_column: bool = False) -> pa.Array:
    """The column's fields as text, quoted where the dialect quotes, NULL as ``""``."""
    kind = column.type
    if pa.types.is_null(kind):
        return pa.array([""] * len(column), type=pa.string())
    if pa.types.is_integer(kind):
        return pc.fill_null(pc.cast(column, pa.string()), "")
    if pa.types.is_floating(kind):
        return pc.fill_null(_float_text(column), "")
    if pa.types.is_boolean(kind):
        return pc.fill_null(pc.if_else(column, "t", "f"), "")
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return pc.fill_null(_quoted(column, single_column), "")
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return pc.fill_null(_hex_text(column), "")
    if pa.types.is_decimal(kind) and kind.scale >= 0:
        return pc.fill_null(_decimal_text(column), "")
    if pa.types.is_date32(kind):
        return pc.fill_null(pc.cast(column, pa.string()), "")  # ISO 8601, as date.isoformat()
    raise UnsupportedColumn(f"column type {kind}")


def _float_text(column: pa.Array) -> pa.Array:
    """``float8`` text: Arrow's shortest digits where they are laid out as PostgreSQL lays them
    out; the rest (exponent forms, inf/nan) value by value through ``float_text``."""
    if not pa.types.is_float64(column.type):
        column = pc.cast(column, pa.float64())  # a float32 prints as its float64 value
    text = pc.cast(column, pa.string())
    magnitude = pc.abs(column)
    fixed_range = pc.or_(pc.equal(magnitude, 0.0),
                         pc.and_(pc.greater_equal(magnitude, _FIXED_LOW),
                                 pc.less(magnitude, _FIXED_HIGH)))
    has_exponent = pc.match_substring(text, "e")
    # Arrow agrees with the dialect on fixed notation for the fixed range (shortest digits,
    # no trailing ".0"); it differs on where exponents start, their padding, inf and nan.
    redo = pc.fill_null(pc.invert(pc.and_(fixed_range, pc.invert(has_exponent))), False)
    if not pc.any(redo).as_py():
        return text
    values = pc.filter(column, redo).to_pylist()
    return pc.replace_with_mask(text, redo, pa.array([float_text(v) for v in values],
                                                      type=pa.string()))


def _decimal_text(column: pa.Array) -> pa.Array:
    """Fixed point with every digit of the scale, as ``format(Decimal, "f")``: Arrow's text is
    that except for values below 1e-6 in magnitude (zero too), which it writes as ``0E-10``."""
    text = pc.cast(column, pa.string())
    redo = pc.fill_null(pc.match_substring(text, "E"), False)
    if not pc.any(redo).as_py():
        return text
    values = pc.filter(column, redo).to_pylist()
    return pc.replace_with_mask(text, redo, pa.array([format(v, "f") for v in values],
                                                      type=pa.string()))


def _quoted(column: pa.Array, single_column: bool) -> pa.Array:
    """Quote only what needs it: ``""`` for the empty string, ``"..."`` with ``""`` inside for
    fields holding a special byte, and a lone ``\\.`` in a one-column result."""
    offsets, text = _offsets_and_bytes(column)
    need = np.diff(offsets) == 0  # empty strings, and NULLs (cleared below)
    # One table lookup over the batch's text finds the special bytes; their owners are the
    # values to quote. A column without any (most) costs this one pass.
    hits = np.flatnonzero(_SPECIAL_LOOKUP[text])
    if len(hits):
        need[np.searchsorted(offsets, hits + offsets[0], side="right") - 1] = True
    if single_column:
        need |= np.asarray(pc.fill_null(pc.equal(column, "\\."), False))
    if column.null_count:
        need &= np.asarray(column.is_valid())
    if not need.any():
        return column
    mask = pa.array(need)
    if need.sum() * 4 < len(need):  # few: quote only those
        quoted = _quote(column.filter(mask))
        return pc.replace_with_mask(column, mask, quoted)
    return pc.if_else(mask, _quote(column), column)


def _quote(column: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise('"', pc.replace_substring(column, '"', '""'), '"', "")


def _hex_text(column: pa.Array) -> pa.Array:
    """``\\x`` + lowercase hex of each value (PostgreSQL's ``bytea`` output)."""
    if column.offset:  # a slice: copy it to offset 0 so its validity bitmap lines up
        column = pa.concat_arrays([column])
    large = pa.types.is_large_binary(column.type)
    offsets, raw = _offsets_and_bytes(column)
    hexed = _HEX_PAIRS[raw]  # two ASCII digits per byte
    new_offsets = ((offsets - offsets[0]) * 2).astype(np.int64 if large else np.int32)
    string_type = pa.large_string() if large else pa.string()
    hex_column = pa.Array.from_buffers(
        string_type, len(column), [column.buffers()[0], pa.py_buffer(new_offsets), pa.py_buffer(hexed)],
        null_count=column.null_count)
    return pc.binary_join_element_wise("\\x", hex_column, "")
