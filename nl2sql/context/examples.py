"""Few-shot examples for a question: the cache's validated example queries and the workspace's
saved queries that ran (a user's own past questions), ranked by similarity, bounded."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from nl2sql.context.models import ContextExample
from nl2sql.context.words import terms
from nl2sql.models import DbInfo

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

MAX_EXAMPLES = 3
MAX_EXAMPLE_TOKENS = 800
MIN_SIMILARITY = 0.2


def saved_examples(workspace: Path, db_id: str, *, limit: int = 200) -> list[ContextExample]:
    """Saved queries of ``db_id`` in the workspace that ran and have a question."""
    if not workspace.is_dir():
        return []
    from nl2sql.saved_query_index import SavedQueryIndex

    try:
        found, _total = SavedQueryIndex(workspace).search(None, limit=limit)
    except Exception as exc:  # noqa: BLE001  (examples are optional: never fail the context)
        log.warning("saved queries not read for examples: %s", exc)
        return []
    return [ContextExample(question=q.natural_language_query, sql=q.sql_query)
            for q in found if q.db_id == db_id and q.natural_language_query and q.sql_query]


def rank_examples(question: str, question_vector: np.ndarray | None,
                  candidates: list[ContextExample]) -> list[ContextExample]:
    """The most similar examples (word overlap and embedding similarity), bounded in count
    and tokens; each question once."""
    if not candidates:
        return []
    from nl2sql.context.embeddings import embed

    unique = list({" ".join(c.question.split()).casefold(): c for c in candidates}.values())
    query = set(terms(question))
    vectors = embed([c.question for c in unique]) if question_vector is not None else None
    scored = []
    for i, example in enumerate(unique):
        words = set(terms(example.question))
        overlap = len(query & words) / max(1, len(query | words))
        cosine = float(vectors[i] @ question_vector) if vectors is not None else 0.0
        score = 0.6 * overlap + 0.4 * cosine
        if score >= MIN_SIMILARITY:
            scored.append((score, i, example))
    scored.sort(key=lambda s: (-s[0], s[1]))
    chosen, tokens = [], 0
    for _score, _i, example in scored:
        cost = (len(example.question) + len(example.sql)) // 4 + 4
        if len(chosen) >= MAX_EXAMPLES or tokens + cost > MAX_EXAMPLE_TOKENS:
            continue
        chosen.append(example)
        tokens += cost
    return chosen


def cache_examples(info: DbInfo) -> list[ContextExample]:
    return [ContextExample(question=e.question, sql=e.sql) for e in info.example_queries]
