"""Catalog ranking: every database scored for a question, with a short reason.

One BM25 index over the databases (each a document of its description, table and column
words), the best table embeddings of each database, and the stored values the question names
(one value lookup across the catalog). Rebuilt when a database's index changes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from nl2sql.context_engine.embeddings import similarities
from nl2sql.context_engine.prompt_context import Candidate
from nl2sql.context_engine.values import ValueLookup
from nl2sql.schema.words import synonyms, terms
from nl2sql._helpers import quiet_imports

if TYPE_CHECKING:
    import numpy as np

    from nl2sql.context_engine.retrieval import DbIndex

COVERAGE_WEIGHT = 0.35
LEXICAL_WEIGHT = 0.3
SEMANTIC_WEIGHT = 0.2
VALUE_WEIGHT = 0.5
#: Weight of the words a question word stands for (synonyms), against the word itself.
SYNONYM_WEIGHT = 0.6
#: Share of a value's weight when it is spelled like a schema word.
SCHEMA_WORD_VALUE = 0.3
#: How much a word counts where it occurs: in a table name, a column name, a description, a
#: stored enum value.
_PLACE_WEIGHTS = {"table": 1.0, "column": 0.7, "description": 0.5, "value": 0.3}
_SEP = "\x1f"
#: Candidates that get a full reason (the rest are ranked lower, said in one phrase).
EXPLAINED = 10


class CatalogIndex:
    def __init__(self, indexes: list[DbIndex]) -> None:
        import numpy as np

        with quiet_imports("bm25s"):  # it logs at DEBUG; tqdm.auto warns in notebooks
            import bm25s
        self.indexes = indexes
        docs = []
        self.places: list[dict[str, float]] = []
        for index in indexes:
            places: dict[str, float] = {}

            def put(words: list[str], place: str) -> None:
                weight = _PLACE_WEIGHTS[place]
                for word in words:
                    if places.get(word, 0.0) < weight:
                        places[word] = weight

            put(terms(index.data.description), "description")
            doc = terms(index.data.description)
            for entry in index.entries:
                put(entry.name_terms, "table")
                put(entry.role_terms, "column")
                doc += entry.name_terms + entry.role_terms
                for words in entry.column_terms:
                    put(words, "column")
                    doc += sorted(set(words))
            self.places.append(places)
            docs.append(doc or ["_"])
        self.document_frequency: dict[str, int] = {}
        for places in self.places:
            for word in places:
                self.document_frequency[word] = self.document_frequency.get(word, 0) + 1
        self.vocabulary = set(self.document_frequency)
        self.bm25 = bm25s.BM25()
        if docs:
            self.bm25.index(docs, show_progress=False)
        self.table_terms = [{t for e in index.entries for t in e.name_terms}
                            for index in indexes]
        locations: list[tuple[str, str, str]] = []
        keys: list[list[str]] = []
        for index in indexes:
            for entry in index.entries:
                more, more_keys = entry.value_locations(f"{index.db_id}{_SEP}")
                locations += more
                keys += more_keys
        self.values = ValueLookup(locations, keys=keys)
        self.vectors = (np.vstack([index.vectors for index in indexes]) if indexes
                        else np.zeros((0, 256), dtype=np.float32))
        self.starts = np.cumsum([0] + [len(index.vectors) for index in indexes])[:-1]
        self.sizes = np.array([len(index.vectors) for index in indexes])

    def idf(self, word: str) -> float:
        n, df = len(self.indexes), self.document_frequency.get(word, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def _coverage(self, said: list[str], query: list[str], related: dict[str, str],
                  matched: dict[str, list[tuple[str, str, str]]]) -> np.ndarray:
        """Per database, the idf-weighted share of the question's words it covers: by a
        table, column, description or enum word, by a synonym (at ``SYNONYM_WEIGHT``), or by a
        stored value it holds (words no schema has, as names, weigh by how few hold them)."""
        import numpy as np

        value_words: dict[str, set[str]] = {}  # word -> databases holding a value with it
        for db_id, found in matched.items():
            for phrase, _where, _value in found:
                for word in terms(phrase):
                    value_words.setdefault(word, set()).add(db_id)
        words = list(dict.fromkeys([*query, *[w for w in said if w in value_words]]))
        n = len(self.indexes)
        weights = {w: (self.idf(w) if w in self.vocabulary else
                       math.log(1 + (n - len(value_words[w]) + 0.5)
                                / (len(value_words[w]) + 0.5))) for w in words}
        total = sum(weights.values()) or 1.0
        by_word: dict[str, list[str]] = {}
        for other, word in related.items():
            by_word.setdefault(word, []).append(other)
        for word in said:  # a word only its synonyms match still counts
            if word not in weights and word in by_word:
                weights[word] = max(self.idf(o) for o in by_word[word])
                total += weights[word]
        result = np.zeros(n, dtype=np.float32)
        for i, (index, places) in enumerate(zip(self.indexes, self.places)):
            covered = 0.0
            for word, weight in weights.items():
                best = places.get(word, 0.0)
                if index.db_id in value_words.get(word, ()):
                    best = 1.0
                for other in by_word.get(word, ()):
                    best = max(best, SYNONYM_WEIGHT * places.get(other, 0.0))
                covered += weight * best
            result[i] = covered / total
        return result

    def rank(self, question: str, question_vector: np.ndarray | None) -> list[Candidate]:
        import numpy as np

        n = len(self.indexes)
        if not n:
            return []
        said = list(dict.fromkeys(terms(question)))
        query = [t for t in said if t in self.vocabulary]
        # a word said in other words counts where the schema has those ("shop": stores)
        related = {other: word for word in said for other in synonyms(word)
                   if other in self.vocabulary and other not in said}
        lexical = (np.asarray(self.bm25.get_scores(query), dtype=np.float32) if query
                   else np.zeros(n, dtype=np.float32))
        if related:
            lexical += SYNONYM_WEIGHT * np.asarray(self.bm25.get_scores(list(related)),
                                                   dtype=np.float32)
        if lexical.max() > 0:
            lexical = lexical / lexical.max()
        semantic = np.zeros(n, dtype=np.float32)
        if question_vector is not None and len(self.vectors):
            cosine = similarities(self.vectors, question_vector)
            has = self.sizes > 0  # the best table of each database
            semantic[has] = np.maximum.reduceat(cosine, self.starts[has])
            low, high = float(semantic.min()), float(semantic.max())
            semantic = (semantic - low) / max(high - low, 0.2)
        matched: dict[str, list[tuple[str, str, str]]] = {}
        for match in self.values.match(question, fuzzy=False, limit=400):
            db_id, table = match.table.split(_SEP, 1)
            matched.setdefault(db_id, []).append((match.matched.casefold(),
                                                  f"{table}.{match.column}", match.value))
        phrase_df: dict[str, int] = {}
        for found in matched.values():
            for phrase in {m[0] for m in found}:
                phrase_df[phrase] = phrase_df.get(phrase, 0) + 1
        coverage = self._coverage(said, query, related, matched)
        scored = []
        for i, index in enumerate(self.indexes):
            found = [m for m in matched.get(index.db_id, [])
                     if not set(terms(m[0])) <= self.table_terms[i]]  # "customers": a table
            phrases = {m[0] for m in found}
            # a value spelled like a schema word ('paid', 'Sales') says little about where
            value_score = min(2.0, sum(
                min(1.0, len(p) / 6) / phrase_df[p]
                * (SCHEMA_WORD_VALUE if set(terms(p)) <= self.vocabulary else 1.0)
                for p in phrases))
            score = (COVERAGE_WEIGHT * float(coverage[i]) + LEXICAL_WEIGHT * float(lexical[i])
                     + SEMANTIC_WEIGHT * float(semantic[i]) + VALUE_WEIGHT * value_score)
            scored.append((round(score, 4), i, found))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [Candidate(db_id=self.indexes[i].db_id, score=score,
                          reason=_reason(self.indexes[i], set(query), found)
                          if rank < EXPLAINED else "fewer of the question's words and values "
                          "match it")
                for rank, (score, i, found) in enumerate(scored)]


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


