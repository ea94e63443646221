"""Catalog ranking: every database scored for a question, with a short reason.

One BM25 index over the databases (each a document of its description, table and column
words), the best table embeddings of each database, and the stored values the question names
(one value lookup across the catalog). Rebuilt when a database's index changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nl2sql.context.models import Candidate
from nl2sql.context.values import ValueLookup
from nl2sql.context.words import terms

if TYPE_CHECKING:
    import numpy as np

    from nl2sql.context.retrieval import DbIndex

LEXICAL_WEIGHT = 0.5
SEMANTIC_WEIGHT = 0.3
VALUE_WEIGHT = 0.25
_SEP = "\x1f"


class CatalogIndex:
    def __init__(self, indexes: list[DbIndex]) -> None:
        import bm25s

        self.indexes = indexes
        docs = []
        for index in indexes:
            doc = terms(index.data.description) * 3
            for entry in index.entries:
                doc += entry.name_terms * 2
                doc += [t for words in entry.column_terms for t in words]
            docs.append(doc or ["_"])
        self.vocabulary = {t for doc in docs for t in doc}
        self.bm25 = bm25s.BM25()
        if docs:
            self.bm25.index(docs, show_progress=False)
        self.values = ValueLookup([(f"{index.db_id}{_SEP}{table}", column, value)
                                   for index in indexes for (table, column, value) in
                                   _locations(index)])

    def rank(self, question: str, question_vector: np.ndarray | None) -> list[Candidate]:
        import numpy as np

        n = len(self.indexes)
        if not n:
            return []
        query = [t for t in dict.fromkeys(terms(question)) if t in self.vocabulary]
        lexical = (np.asarray(self.bm25.get_scores(query), dtype=np.float32) if query
                   else np.zeros(n, dtype=np.float32))
        if lexical.max() > 0:
            lexical = lexical / lexical.max()
        semantic = np.zeros(n, dtype=np.float32)
        if question_vector is not None:
            for i, index in enumerate(self.indexes):
                if len(index.vectors):
                    best = np.sort(index.vectors @ question_vector)[-3:]
                    semantic[i] = float(best.mean())
            low, high = float(semantic.min()), float(semantic.max())
            if high > low:
                semantic = (semantic - low) / (high - low)
        matched: dict[str, list[tuple[str, str, str]]] = {}
        for match in self.values.match(question, fuzzy=False, limit=200):
            db_id, table = match.table.split(_SEP, 1)
            matched.setdefault(db_id, []).append((match.matched, f"{table}.{match.column}",
                                                  match.value))
        query_set = set(query)
        candidates = []
        for i, index in enumerate(self.indexes):
            phrases = {m[0].casefold() for m in matched.get(index.db_id, [])}
            value_score = min(1.0, sum(min(1.0, len(p) / 8) for p in phrases))
            score = (LEXICAL_WEIGHT * float(lexical[i]) + SEMANTIC_WEIGHT * float(semantic[i])
                     + VALUE_WEIGHT * value_score)
            candidates.append(Candidate(db_id=index.db_id, score=round(score, 4),
                                        reason=_reason(index, query_set,
                                                       matched.get(index.db_id, []))))
        candidates.sort(key=lambda c: -c.score)
        return candidates


def _locations(index: DbIndex) -> list[tuple[str, str, str]]:
    return [(e.name, column, value) for e in index.entries
            for column, items in e.values.items() for value in items]


def _reason(index: DbIndex, query: set[str], values: list[tuple[str, str, str]]) -> str:
    tables = [e.name for e in index.entries if query.intersection(e.name_terms)]
    parts = []
    if tables:
        parts.append(f"tables {', '.join(tables[:4])} match the question")
    else:
        columns = sorted({f"{e.name}.{c}" for e in index.entries
                          for c, words in zip(e.columns, e.column_terms)
                          if query.intersection(words)})
        if columns:
            parts.append(f"columns {', '.join(columns[:3])} match the question")
    seen: set[str] = set()
    for _phrase, where, value in values:
        if where not in seen and len(seen) < 2:
            seen.add(where)
            parts.append(f"value '{value}' in {where}")
    if index.data.description and not parts:
        parts.append(f"described as: {index.data.description.strip().splitlines()[0][:80]}")
    return "; ".join(parts) or "nothing in the question matches it"


