"""Hybrid table retrieval over one loaded index: BM25 on the tables' words (bm25s), cosine
similarity of static embeddings (WordLlama), and the stored values the question names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nl2sql.context_engine.embeddings import similarities
from nl2sql.context_engine.graph import JoinGraph
from nl2sql.context_engine.index import IndexData
from nl2sql.context_engine.values import ValueLookup, ValueMatch
from nl2sql.schema.words import synonyms, terms
from nl2sql._helpers import quiet_imports

if TYPE_CHECKING:
    import numpy as np

LEXICAL_WEIGHT = 0.55
SEMANTIC_WEIGHT = 0.30
VALUE_WEIGHT = 0.45
#: Added in proportion to the share of the table name's words the question says.
NAME_WEIGHT = 0.35
#: Share of the best foreign-key neighbour's score a table gets.
NEIGHBOUR_SHARE = 0.15
#: Weight of the words a question word stands for (synonyms), against the word itself.
SYNONYM_WEIGHT = 0.6
#: A question that measures something ("revenue", "how much", "average") needs the fact table
#: that holds the measure: a table referencing two or more others, with a measure column, gets
#: this much.
FACT_WEIGHT = 0.3
MEASURE_WORDS = frozenset(terms(
    "revenue sales spend spent turnover income total sum average mean much amount value cost "
    "costs price paid earned earnings margin profit volume units sold bought worth"))
MEASURE_COLUMN_WORDS = frozenset(terms(
    "amount total price cost net gross value revenue sales quantity qty fee fare balance salary "
    "payment paid units score runs points margin profit tax discount"))
#: Tables scored in full per question (the rest cannot reach the budget anyway).
MAX_SCORED = 300


@dataclass
class TableScore:
    name: str
    score: float
    lexical: float = 0.0
    semantic: float = 0.0
    name_hits: list[str] = field(default_factory=list)
    column_hits: list[tuple[str, str]] = field(default_factory=list)  # (column, term)
    values: list[ValueMatch] = field(default_factory=list)
    #: The strongest table this one is joined to (by a foreign key), when that raised its score.
    neighbour: str | None = None
    #: Name hits the question said in other words: name word (or table) -> the question's word.
    said_as: dict[str, str] = field(default_factory=dict)
    #: Measure columns of a fact table, when the question measures something.
    measures: list[str] = field(default_factory=list)

    def reason(self) -> str:
        parts = []
        if self.name_hits:
            parts.append("name matches " + ", ".join(
                f"'{self.said_as[t]}'" + (f" (as {t})" if t in self.said_as else "")
                if t in self.said_as else f"'{t}'" for t in self.name_hits[:3]))
        if self.column_hits:
            parts.append("column " + ", ".join(f"{c} matches '{t}'"
                                               for c, t in self.column_hits[:2]))
        for match in self.values[:2]:
            parts.append(f"value '{match.value}' in {match.table}.{match.column}")
        if self.measures and not parts:
            parts.append(f"holds the measures ({', '.join(self.measures)}) the question sums up")
        if not parts and self.semantic < 0.1 and self.neighbour:
            parts.append(f"joined to {self.neighbour}, which the question is about")
        if not parts:
            parts.append(f"similar in meaning to the question ({self.semantic:.2f})")
        return "; ".join(parts)


def _prefix_hit(word: str, query: set[str], query_prefixes: set[str]) -> bool:
    """``word`` and a question word start alike ("shipper" and "ship", "cust" and "customer"),
    four letters at least. ``query_prefixes``: every prefix of four letters or more of the
    question's words."""
    if len(word) < 4:
        return False
    return word in query_prefixes or any(word[:k] in query for k in range(4, len(word)))


def _prefixes(words: set[str]) -> set[str]:
    return {w[:k] for w in words if len(w) >= 4 for k in range(4, len(w) + 1)}


class DbIndex:
    """One database's index, loaded: BM25 over tables, embeddings, values, join graph."""

    def __init__(self, data: IndexData, vectors: np.ndarray) -> None:
        self.data = data
        self.db_id = data.db_id
        self.entries = data.tables
        self.position = {e.name: i for i, e in enumerate(self.entries)}
        self.vectors = vectors
        self.graph = JoinGraph({e.name: e.neighbours for e in self.entries})
        self._values: ValueLookup | None = None
        self.vocabulary = {t for e in self.entries for t in e.doc_terms}
        self._bm25: Any = None
        self._rendered: dict[tuple[str, str], str] = {}

    def rendered(self, table: Any, kind: str, render: Any) -> str:
        """A question-independent rendering of ``table`` ("full", "whole", "keys"), cached."""
        stored = self.entries[self.position[table.name]].texts.get(kind)
        if stored is not None:
            return stored
        key = (table.name, kind)
        text = self._rendered.get(key)
        if text is None:
            text = self._rendered[key] = render()
        return text

    @property
    def values(self) -> ValueLookup:
        """The value lookup of this database (built on first use: routing across a catalog
        uses the catalog's own)."""
        if self._values is None:
            schema_words = {t for e in self.entries for t in e.name_terms}
            schema_words |= {t for e in self.entries for c in e.columns for t in terms(c)}
            locations: list[tuple[str, str, str]] = []
            keys: list[list[str]] = []
            for entry in self.entries:
                more, more_keys = entry.value_locations()
                locations += more
                keys += more_keys
            self._values = ValueLookup(locations, schema_words, keys)
        return self._values

    @property
    def bm25(self) -> Any:
        if self._bm25 is None:
            with quiet_imports("bm25s"):  # it logs at DEBUG; tqdm.auto warns in notebooks
                import bm25s
            retriever = bm25s.BM25()
            retriever.index([e.doc_terms or ["_"] for e in self.entries], show_progress=False)
            self._bm25 = retriever
        return self._bm25

    def score_tables(self, question: str, question_vector: np.ndarray | None,
                     value_matches: list[ValueMatch]) -> list[TableScore]:
        """Every table scored for ``question``, best first."""
        import numpy as np

        query = list(dict.fromkeys(terms(question)))
        stands_for = {other: word for word in query for other in synonyms(word)
                      if other not in query}
        n = len(self.entries)
        lexical = np.zeros(n, dtype=np.float32)
        known = [t for t in query if t in self.vocabulary]
        if known and n:
            lexical = np.asarray(self.bm25.get_scores(known), dtype=np.float32)
        related = [t for t in stands_for if t in self.vocabulary]
        if related and n:
            lexical += SYNONYM_WEIGHT * np.asarray(self.bm25.get_scores(related),
                                                   dtype=np.float32)
        top = float(lexical.max()) if n else 0.0
        if top > 0:
            lexical = lexical / top
        semantic = np.zeros(n, dtype=np.float32)
        if question_vector is not None and n:
            cosine = similarities(self.vectors, question_vector)
            low, high = float(np.median(cosine)), float(cosine.max())
            if high > low:
                semantic = np.clip((cosine - low) / (high - low), 0, 1) * min(1.0, high * 2)
        valued: dict[str, list[ValueMatch]] = {}
        for match in value_matches:
            valued.setdefault(match.table, []).append(match)
        total = LEXICAL_WEIGHT * lexical + SEMANTIC_WEIGHT * semantic
        query_set = set(query)
        # Only the best tables by words and meaning, and those holding a named value, can win.
        chosen = set(np.argsort(-total)[:MAX_SCORED].tolist()) if n > MAX_SCORED else set(
            range(n))
        chosen |= {self.position[t] for t in valued if t in self.position}
        query_prefixes = _prefixes(query_set)
        scores = []
        for i in sorted(chosen):
            entry = self.entries[i]
            matches = valued.get(entry.name, [])
            name_hits = [t for t in dict.fromkeys(entry.name_terms) if t in query_set]
            partial = [t for t in dict.fromkeys(entry.name_terms)
                       if t not in query_set and _prefix_hit(t, query_set, query_prefixes)]
            # a word the question says in other words ("games" for match) or a role the
            # table plays ("bowlers" for player): half a name hit, said in the reason
            said_as = {t: stands_for[t] for t in dict.fromkeys(entry.name_terms)
                       if t in stands_for and t not in name_hits}
            role = next((t for t in entry.role_terms if t in query_set), None)
            if role:
                said_as[entry.name] = role
            partial += list(said_as)
            score = float(total[i]) + (VALUE_WEIGHT * max(m.score for m in matches)
                                       if matches else 0.0)
            words = len(set(entry.name_terms)) or 1
            score += NAME_WEIGHT * (len(name_hits) + 0.5 * len(partial)) / words
            scores.append(TableScore(entry.name, score, float(lexical[i]), float(semantic[i]),
                                     name_hits=name_hits + partial, values=matches,
                                     said_as=said_as))
        # A table next to a strong one (by a foreign key) is likely needed to answer: it gets
        # a share of its best neighbour's score.
        if query_set & MEASURE_WORDS:
            for item in scores:
                entry = self.entries[self.position[item.name]]
                measures = [c for c, words in zip(entry.columns, entry.column_terms)
                            if MEASURE_COLUMN_WORDS.intersection(words[:3])]
                if measures and len(entry.references) >= 2:
                    item.score += FACT_WEIGHT
                    item.measures = measures[:2]
        direct = {s.name: s.score for s in scores}
        for item in scores:
            best, by = max(((direct.get(n, 0.0), n)
                            for n in self.graph.neighbours.get(item.name, ())),
                           default=(0.0, None))
            item.score += NEIGHBOUR_SHARE * best
            item.neighbour = by if best > 0 else None
        scores.sort(key=lambda s: -s.score)
        for item in scores[:60]:  # column hits only where they can matter
            entry = self.entries[self.position[item.name]]
            hits = []
            for column, words in zip(entry.columns, entry.column_terms):
                hit = next((w for w in words if w in query_set and w not in item.name_hits),
                           None)
                if hit:
                    hits.append((column, hit))
            item.column_hits = hits
        return scores

    def column_scores(self, table: str, question: str) -> dict[str, float]:
        """Columns of ``table`` by how much the question's words touch them (0 when not)."""
        entry = self.entries[self.position[table]]
        query = set(terms(question))
        return {column: float(len(query.intersection(words)))
                for column, words in zip(entry.columns, entry.column_terms)}
