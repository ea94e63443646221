"""MySQL/MariaDB geometry values as WKT text, as ``ST_AsText`` writes them.

The driver hands a ``GEOMETRY`` value out in the server's storage format: a 4-byte SRID, then the
geometry's WKB. A result showed that as hex (``\\x00000000010100...``), which neither a person nor
a model reads; this writes ``POINT(1 2.5)``, ``POLYGON((0 0,4 0,4 4,0 0))``..., prefixed with
``SRID=4326;`` when the SRID is not 0 (PostGIS's EWKT). Coordinates are written in storage order
(x y: longitude latitude for a geographic SRID); MySQL 8's ``ST_AsText`` writes latitude first
for such an SRID. A value that is no WKB this reader knows keeps the driver's bytes.
"""

from __future__ import annotations

import struct

from nl2sql.workspace.csv_dialect import float_text

_NAMES = {1: "POINT", 2: "LINESTRING", 3: "POLYGON", 4: "MULTIPOINT", 5: "MULTILINESTRING",
          6: "MULTIPOLYGON", 7: "GEOMETRYCOLLECTION"}


def geometry_text(value: bytes) -> str | bytes:
    """``value`` (SRID + WKB) as WKT, or ``value`` itself when it cannot be read."""
    try:
        (srid,) = struct.unpack_from("<I", value)
        text, end = _geometry(value, 4)
    except (struct.error, KeyError):
        return value
    if end != len(value):
        return value
    return f"SRID={srid};{text}" if srid else text


def _geometry(data: bytes, at: int) -> tuple[str, int]:
    """The WKT of the WKB geometry at ``at``, and where it ends."""
    order = "<" if data[at] == 1 else ">"
    (kind,) = struct.unpack_from(order + "I", data, at + 1)
    name, at = _NAMES[kind], at + 5
    if kind == 1:
        point, at = _points(data, at, order, 1)
        return f"{name}({point})", at
    if kind == 2:
        line, at = _points(data, at, order)
        return f"{name}({line})", at
    if kind == 3:
        rings, at = _rings(data, at, order)
        return f"{name}({rings})", at
    (count,) = struct.unpack_from(order + "I", data, at)
    at += 4
    parts = []
    for _ in range(count):
        part, at = _geometry(data, at)
        # MULTIPOINT(1 1,2 2), MULTILINESTRING((0 0,1 1),...): the parts without their names
        parts.append(part if kind == 7 else part[part.index("("):])
    if kind == 4:
        parts = [part[1:-1] for part in parts]
    return f"{name}({','.join(parts)})", at


def _points(data: bytes, at: int, order: str, count: int | None = None) -> tuple[str, int]:
    if count is None:
        (count,) = struct.unpack_from(order + "I", data, at)
        at += 4
    values = struct.unpack_from(f"{order}{2 * count}d", data, at)
    pairs = (f"{float_text(values[i])} {float_text(values[i + 1])}"
             for i in range(0, len(values), 2))
    return ",".join(pairs), at + 16 * count


def _rings(data: bytes, at: int, order: str) -> tuple[str, int]:
    (count,) = struct.unpack_from(order + "I", data, at)
    at += 4
    rings = []
    for _ in range(count):
        ring, at = _points(data, at, order)
        rings.append(f"({ring})")
    return ",".join(rings), at
