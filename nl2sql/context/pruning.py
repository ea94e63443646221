"""Pruning: the tables (and, in wide tables, the columns) that fit a token budget, plus the
tables needed to join them, each with a reason; under the budget the whole schema, unchanged."""

from __future__ import annotations

from dataclasses import dataclass

from nl2sql.context.models import KeptTable
from nl2sql.context.retrieval import DbIndex, TableScore
from nl2sql.formatting import format_table
from nl2sql.models import DbInfo, TableInfo

#: A table is relevant when its score is at least this share of the best table's score.
RELATIVE_CUTOFF = 0.2
MIN_SCORE = 0.12
#: A kept table may use at most this share of the budget; wider ones show their best columns.
TABLE_SHARE = 0.35
MAX_JOIN_EDGES = 3


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` as a model counts them, roughly: characters / 4."""
    return (len(text) + 3) // 4


@dataclass
class Pruned:
    tables: list[KeptTable]
    schema_sql: str


def header(info: DbInfo, shown: int) -> str:
    lines = [f"-- Database: {info.db_id} ({info.db_type})"]
    if info.schema_name:
        lines.append(f"-- Schema: {info.schema_name}")
    if info.description:
        lines += [f"-- {line}".rstrip() for line in info.description.strip().splitlines()]
    lines.append(f"-- {shown} of {len(info.tables)} tables shown, chosen for the question; "
                 f"db_show_schema with a table list shows any other table.")
    return "\n".join(lines)


def prune(info: DbInfo, index: DbIndex, scores: list[TableScore], question: str,
          budget: int) -> Pruned:
    """Keep the best tables within ``budget`` tokens, with join paths and bridge tables."""
    by_name = {s.name: s for s in scores}
    top = scores[0].score if scores else 0.0
    cutoff = max(MIN_SCORE, RELATIVE_CUTOFF * top)
    reasons: dict[str, str] = {}
    rendered: dict[str, str] = {}
    used = estimate_tokens(header(info, 0)) + 5
    table_cap = max(200, int(budget * TABLE_SHARE))

    def cost(name: str) -> int:
        if name not in rendered:
            rendered[name] = render_table(info.table(name), index, question, by_name.get(name),
                                          table_cap)
        return estimate_tokens(rendered[name]) + 1

    def try_add(names: list[str], why: dict[str, str]) -> bool:
        nonlocal used
        new = [n for n in names if n not in reasons]
        total = sum(cost(n) for n in new)
        if used + total > budget:
            return False
        used += total
        for name in new:
            reasons[name] = why[name]
        return True

    for item in scores:
        if item.score < cutoff and reasons:
            break
        path = index.graph.path(item.name, set(reasons), max_length=MAX_JOIN_EDGES) \
            if reasons else None
        names, why = [item.name], {item.name: item.reason()}
        if path and len(path) > 2:
            for a, middle, b in zip(path, path[1:], path[2:]):
                why.setdefault(middle, f"joins {a} to {b}")
            names = [*path[1:-1], item.name]
        if not try_add(names, why) and path and len(path) > 2:
            try_add([item.name], why)  # too costly with its join path: the table alone
    for bridge, (a, b) in sorted(index.graph.bridges(set(reasons)).items(),
                                 key=lambda kv: -by_name[kv[0]].score if kv[0] in by_name else 0):
        try_add([bridge], {bridge: f"links {a} and {b} (many-to-many)"})
    if not reasons and scores:  # nothing fits: the best table, cut to the budget
        name = scores[0].name
        rendered[name] = render_table(info.table(name), index, question, scores[0],
                                      max(50, budget - used))
        reasons[name] = scores[0].reason()
    order = [t.name for t in info.tables if t.name in reasons]
    parts = [header(info, len(order)), *[rendered[n] for n in order]]
    return Pruned([KeptTable(name=n, reason=reasons[n]) for n in order],
                  "\n\n".join(parts) + "\n")


def render_table(table: TableInfo | None, index: DbIndex, question: str,
                 score: TableScore | None, cap: int) -> str:
    """The table's schema SQL; over ``cap`` tokens only its most relevant columns."""
    assert table is not None
    text = format_table(table, table.db.db_type)
    if estimate_tokens(text) <= cap or len(table.columns) <= 3:
        return text
    text = format_table(table, table.db.db_type, include_samples=False)
    if estimate_tokens(text) <= cap:
        return text
    return _narrow(table, index, question, score, cap)


def _narrow(table: TableInfo, index: DbIndex, question: str, score: TableScore | None,
            cap: int) -> str:
    relevance = index.column_scores(table.name, question)
    valued = {m.column for m in (score.values if score else [])}
    fk_columns = {c for fk in table.foreign_keys for c in fk.columns}

    def rank(position_column: tuple[int, object]) -> tuple[float, int]:
        position, column = position_column
        name = column.name  # type: ignore[attr-defined]
        weight = (4.0 * (name in valued) + 3.0 * column.is_primary_key  # type: ignore[attr-defined]
                  + 2.0 * relevance.get(name, 0.0) + 1.5 * (name in fk_columns))
        return (-weight, position)

    ordered = [c for _, c in sorted(enumerate(table.columns), key=rank)]
    low, high = 1, len(ordered)
    best = _subset(table, ordered[:1])
    while low <= high:  # the most columns (in relevance order) that fit the cap
        middle = (low + high) // 2
        text = _subset(table, ordered[:middle])
        if estimate_tokens(text) <= cap:
            best, low = text, middle + 1
        else:
            high = middle - 1
    return best


def _subset(table: TableInfo, columns: list) -> str:  # type: ignore[type-arg]
    keep = {c.name for c in columns}
    narrow = table.model_copy(update={
        "columns": [c for c in table.columns if c.name in keep],
        "foreign_keys": [fk for fk in table.foreign_keys if set(fk.columns) <= keep],
        "indexes": [i for i in table.indexes if set(i.columns) <= keep],
        "sample_data_csv": None,
    })
    narrow._db = table._db
    hidden = len(table.columns) - len(keep)
    text = format_table(narrow, table.db.db_type, include_samples=False)
    return text + (f"\n-- {hidden} more columns not shown (db_show_schema with "
                   f"tables=['{table.name}'] lists them all)" if hidden else "")


__all__ = ["Pruned", "estimate_tokens", "prune", "render_table"]
