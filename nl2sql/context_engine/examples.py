"""Few-shot examples for a question: verified answers first (SQL a person marked right, stale
ones left out), then the cache's validated example queries, each group ranked by similarity,
bounded together. Saved queries that merely ran are not examples (they may be wrong); they stay
searchable with ``saved_queries_list``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nl2sql.context_engine.prompt_context import ContextExample
from nl2sql.schema.words import terms
from nl2sql.schema.models import DbInfo
from nl2sql.context_engine import embeddings

if TYPE_CHECKING:
    import numpy as np

    from nl2sql.store.store import Store

MAX_EXAMPLES = 3
MAX_EXAMPLE_TOKENS = 800
MIN_SIMILARITY = 0.2
#: Newest verified answers ranked per question (each is embedded per call: bounded work).
MAX_VERIFIED_CANDIDATES = 300


def verified_examples(store: Store, db_id: str) -> list[ContextExample]:
    """The verified answers of ``db_id`` that are not stale (never a proposal)."""
    return [ContextExample(question=v.question, sql=v.sql)
            for v in store.answers(db_id).list(include_stale=False,
                                               limit=MAX_VERIFIED_CANDIDATES)]


def rank_examples(question: str, question_vector: np.ndarray | None,
                  *groups: list[ContextExample]) -> list[ContextExample]:
    """The most similar examples (word overlap and embedding similarity), an earlier group's
    ahead of a later one's, bounded in count and tokens together; each question once."""
    seen: set[str] = set()
    ranked = []
    for group in groups:
        fresh = []
        for example in group:
            key = " ".join(example.question.split()).casefold()
            if key not in seen:
                seen.add(key)
                fresh.append(example)
        ranked += _similar(question, question_vector, fresh)
    chosen, tokens = [], 0
    for example in ranked:
        cost = (len(example.question) + len(example.sql)) // 4 + 4
        if len(chosen) >= MAX_EXAMPLES or tokens + cost > MAX_EXAMPLE_TOKENS:
            continue
        chosen.append(example)
        tokens += cost
    return chosen


def _similar(question: str, question_vector: np.ndarray | None,
             unique: list[ContextExample]) -> list[ContextExample]:
    """``unique`` examples similar enough to ``question``, most similar first."""
    if not unique:
        return []

    query = set(terms(question))
    vectors = (embeddings.embed([c.question for c in unique])
               if question_vector is not None else None)
    scored = []
    for i, example in enumerate(unique):
        words = set(terms(example.question))
        overlap = len(query & words) / max(1, len(query | words))
        cosine = float(vectors[i] @ question_vector) if vectors is not None else 0.0
        score = 0.6 * overlap + 0.4 * cosine
        if score >= MIN_SIMILARITY:
            scored.append((score, i, example))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [example for _score, _i, example in scored]


def cache_examples(info: DbInfo) -> list[ContextExample]:
    return [ContextExample(question=e.question, sql=e.sql) for e in info.example_queries]
