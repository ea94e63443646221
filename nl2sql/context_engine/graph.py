"""The join graph of a database: declared and inferred foreign keys as undirected edges,
shortest join paths between kept tables, and bridge tables of many-to-many links."""

from __future__ import annotations

from collections import deque

from nl2sql.schema.models import ForeignKeyInfo, TableInfo


def foreign_keys(table: TableInfo) -> list[ForeignKeyInfo]:
    """Declared foreign keys and the implied ones annotation inferred (``inferred: true``)."""
    return list(table.foreign_keys)


class JoinGraph:
    def __init__(self, neighbours: dict[str, list[str]]) -> None:
        self.neighbours = neighbours

    def path(self, start: str, goals: set[str], *, max_length: int = 4) -> list[str] | None:
        """The shortest path from ``start`` to any of ``goals`` (both ends included), at most
        ``max_length`` edges, or None."""
        if start in goals:
            return [start]
        previous: dict[str, str | None] = {start: None}
        queue = deque([(start, 0)])
        while queue:
            node, depth = queue.popleft()
            if depth >= max_length:
                continue
            for nxt in self.neighbours.get(node, ()):
                if nxt in previous:
                    continue
                previous[nxt] = node
                if nxt in goals:
                    path = [nxt]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])  # type: ignore[arg-type]
                    return path[::-1]
                queue.append((nxt, depth + 1))
        return None

    def bridges(self, kept: set[str]) -> dict[str, tuple[str, str]]:
        """Tables outside ``kept`` linked to two kept tables (many-to-many link tables)."""
        found: dict[str, tuple[str, str]] = {}
        for table, links in self.neighbours.items():
            if table in kept:
                continue
            inside = sorted(set(links) & kept)
            if len(inside) >= 2:
                found[table] = (inside[0], inside[1])
        return found
