"""Pruning: the tables (and, in wide tables, the columns) that fit a token budget, plus the
tables needed to join them, each with a reason; under the budget the whole schema, unchanged.

Selection is greedy by score. A table joins with the shortest foreign-key path to the tables
already kept (declared or inferred keys); the tables on the path are shown with their key
columns only. Tables linking two kept tables (many-to-many) are added when they fit. Tables are
first costed without sample rows; budget left at the end buys their sample rows back, best
table first.
"""

from __future__ import annotations

from dataclasses import dataclass

from nl2sql.context_engine.prompt_context import KeptTable
from nl2sql.context_engine.narrow import key_columns, narrow_table
from nl2sql.context_engine.retrieval import DbIndex, TableScore
from nl2sql.schema.formatting import format_table
from nl2sql.schema.models import ColumnInfo, DbInfo, TableInfo

#: A table is relevant when its score is at least this share of the best table's score.
RELATIVE_CUTOFF = 0.2
MIN_SCORE = 0.12
#: A kept table may use at most this share of the budget; wider ones show their best columns.
TABLE_SHARE = 0.35
MAX_JOIN_EDGES = 3
#: Below the cutoff, tables are still added while the budget lasts, down to this score (or
#: this share of the best table's): under it a table has nothing to do with the question.
NEAR_ZERO = 0.03
NEAR_ZERO_SHARE = 0.05
#: Stop looking after this many tables in a row did not fit, or when less than
#: ``MIN_TABLE_TOKENS`` are left.
MAX_MISSES = 20
MIN_TABLE_TOKENS = 30


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


class _Selection:
    def __init__(self, info: DbInfo, index: DbIndex, scores: list[TableScore], question: str,
                 budget: int) -> None:
        self.info, self.index, self.question, self.budget = info, index, question, budget
        self.tables = {t.name: t for t in info.tables}
        self.by_name = {s.name: s for s in scores}
        self.reasons: dict[str, str] = {}
        self.rendered: dict[str, str] = {}
        self.keys_only: set[str] = set()
        self.narrowed: dict[str, str] = {}
        self.used = estimate_tokens(header(info, 0)) + 5
        self.table_cap = max(200, int(budget * TABLE_SHARE))

    def text(self, name: str, keys_only: bool) -> str:
        if name in self.narrowed:
            return self.narrowed[name]
        table = self.tables[name]
        if keys_only:
            return self.index.rendered(table, "keys", lambda: narrow_table(
                table, key_columns(table)))
        whole = self.index.rendered(table, "whole", lambda: format_table(
            table, table.db.db_type, include_samples=False))
        if estimate_tokens(whole) <= self.table_cap:
            return whole
        return render_table(table, self.index, self.question, self.by_name.get(name),
                            self.table_cap, samples=False)

    def narrow(self, name: str) -> None:
        """Show ``name`` with its keys and the columns the question touches only."""
        table = self.tables[name]
        relevance = self.index.column_scores(name, self.question)
        score = self.by_name.get(name)
        valued = {m.column for m in (score.values if score else [])}
        keys = {c.name for c in key_columns(table)}
        columns = [c for c in table.columns
                   if c.name in keys or c.name in valued or relevance.get(c.name)]
        if len(columns) < len(table.columns):
            self.narrowed[name] = narrow_table(table, columns)

    def add(self, names: list[str], why: dict[str, str], keys_only: set[str]) -> bool:
        new = [n for n in names if n not in self.reasons]
        texts = {n: self.text(n, n in keys_only) for n in new}
        total = sum(estimate_tokens(t) + 1 for t in texts.values())
        if self.used + total > self.budget:
            return False
        self.used += total
        for name in new:
            self.reasons[name] = why[name]
            self.rendered[name] = texts[name]
            if name in keys_only:
                self.keys_only.add(name)
        return True

    def upgrade(self, name: str, text: str) -> None:
        extra = estimate_tokens(text) - estimate_tokens(self.rendered[name])
        if extra <= 0 or self.used + extra <= self.budget:
            self.used += max(extra, 0)
            self.rendered[name] = text
            self.keys_only.discard(name)


def prune(info: DbInfo, index: DbIndex, scores: list[TableScore], question: str,
          budget: int) -> Pruned:
    """Keep the best tables within ``budget`` tokens, with join paths and bridge tables."""
    chosen = _Selection(info, index, scores, question, budget)
    top = scores[0].score if scores else 0.0
    cutoff = max(MIN_SCORE, RELATIVE_CUTOFF * top)
    _keep(chosen, index, [s for s in scores if s.score >= cutoff] or scores[:1], cutoff)
    # Budget left: key-only join tables get their other columns...
    for name in [n for n in chosen.reasons if n in chosen.keys_only or n in chosen.narrowed]:
        chosen.narrowed.pop(name, None)
        chosen.upgrade(name, chosen.text(name, keys_only=False))
    # ... then the next-best tables, until the budget is used or the rest score near nothing:
    # a model cannot join through a table it was not shown.
    floor = max(NEAR_ZERO, NEAR_ZERO_SHARE * top)
    _keep(chosen, index, [s for s in scores if floor <= s.score < cutoff], cutoff,
          note="less likely; kept while the budget lasts")
    for bridge, (a, b) in sorted(index.graph.bridges(set(chosen.reasons)).items()):
        chosen.add([bridge], {bridge: f"links {a} and {b} (many-to-many)"}, {bridge})
    if not chosen.reasons and scores:  # nothing fits: the best table, cut to the budget
        name = scores[0].name
        table = chosen.tables[name]
        chosen.rendered[name] = render_table(table, index, question, scores[0],
                                             max(50, budget - chosen.used), samples=False)
        chosen.reasons[name] = scores[0].reason()
    # Budget still left: tables get their sample rows, best table first.
    for item in scores:
        if item.name in chosen.reasons and item.name not in chosen.keys_only:
            table = chosen.tables[item.name]
            full = index.rendered(table, "full", lambda: format_table(table, table.db.db_type))
            if estimate_tokens(full) <= chosen.table_cap:
                chosen.upgrade(item.name, full)
    order = [t.name for t in info.tables if t.name in chosen.reasons]
    parts = [header(info, len(order)), *[chosen.rendered[n] for n in order]]
    return Pruned([KeptTable(name=n, reason=chosen.reasons[n]) for n in order],
                  "\n\n".join(parts) + "\n")


def _keep(chosen: _Selection, index: DbIndex, items: list[TableScore], cutoff: float, *,
          note: str = "") -> None:
    """Add ``items`` (best first) that fit, each with its join path to the tables kept;
    ``note`` is added to their reasons."""
    misses = 0
    for item in items:
        if item.name in chosen.reasons:
            continue
        if misses >= MAX_MISSES or chosen.budget - chosen.used < MIN_TABLE_TOKENS:
            break
        misses += 1
        kept = set(chosen.reasons)
        path = index.graph.path(item.name, kept, max_length=MAX_JOIN_EDGES) if kept else None
        why = {item.name: f"{item.reason()} ({note})" if note else item.reason()}
        middle = path[1:-1] if path and len(path) > 2 else []
        for a, via, b in zip(path or [], (path or [])[1:], (path or [])[2:]):
            why.setdefault(via, f"joins {a} to {b}")
        if middle:
            relevant = {m for m in middle if chosen.by_name.get(m) and
                        chosen.by_name[m].score >= cutoff}
            if chosen.add([*middle, item.name], why, set(middle) - relevant):
                misses = 0
                continue
            chosen.narrow(item.name)  # joined but narrow beats whole but unjoined
            if chosen.add([*middle, item.name], why, set(middle)):
                misses = 0
                continue
            chosen.narrowed.pop(item.name, None)
        if chosen.add([item.name], why, set()):
            misses = 0
            continue
        chosen.narrow(item.name)
        if chosen.add([item.name], why, set()):
            misses = 0
        else:
            chosen.narrowed.pop(item.name, None)


def render_table(table: TableInfo, index: DbIndex, question: str, score: TableScore | None,
                 cap: int, *, samples: bool = True) -> str:
    """The table's schema SQL; over ``cap`` tokens only its most relevant columns."""
    text = format_table(table, table.db.db_type, include_samples=samples)
    if estimate_tokens(text) <= cap or len(table.columns) <= 3:
        return text
    if samples:
        text = format_table(table, table.db.db_type, include_samples=False)
        if estimate_tokens(text) <= cap:
            return text
    relevance = index.column_scores(table.name, question)
    valued = {m.column for m in (score.values if score else [])}
    fk_columns = {c for fk in table.foreign_keys for c in fk.columns}

    def rank(item: tuple[int, ColumnInfo]) -> tuple[float, int]:
        position, column = item
        weight = (4.0 * (column.name in valued) + 3.0 * column.is_primary_key
                  + 2.0 * relevance.get(column.name, 0.0) + 1.5 * (column.name in fk_columns))
        return (-weight, position)

    ordered = [c for _, c in sorted(enumerate(table.columns), key=rank)]
    low, high = 1, len(ordered)
    best = narrow_table(table, ordered[:1])
    while low <= high:  # the most columns (in relevance order) that fit the cap
        middle = (low + high) // 2
        text = narrow_table(table, ordered[:middle])
        if estimate_tokens(text) <= cap:
            best, low = text, middle + 1
        else:
            high = middle - 1
    return best
