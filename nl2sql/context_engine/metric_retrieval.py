"""The governed metrics a question needs, best first (``PromptContext.metrics``).

A metric matches when the question says its name, its label or a glossary synonym of either,
in a row or each of their words in any order
(words folded as everywhere in the engine: "revenues" is "revenue"; the glossary term whose
name is the metric's, or whose synonyms include it, lends its synonyms), says something within
a typo of one, or means what the metric's label and description say (embedding similarity).
The metrics saying more of the question's words come first. Unmatched metrics follow with
``matched`` None, so the model knows what else exists; for a question no metric answers, none
is matched.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from nl2sql.config.registry import DbConnectionConfig
from nl2sql.context_engine import embeddings
from nl2sql.context_engine.embeddings import similarities
from nl2sql.context_engine.glossary import close, load_glossary, said
from nl2sql.context_engine.prompt_context import MetricHint, SavedMetricQuery
from nl2sql.errors import Nl2SqlError
from nl2sql.semantic import MetricInfo, SemanticModel, describe, semantic_model
from nl2sql.schema.words import split_identifier, terms

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

#: Metrics listed at most (matched ones first).
MAX_METRICS = 12
#: Saved metric queries shown at most (only those the question seems to ask for).
MAX_SAVED_QUERIES = 3
#: Cosine similarity (question vs a metric's label and description) from which the question
#: means the metric without saying it (the glossary's threshold).
SEMANTIC_SIMILARITY = 0.45

#: Embeddings kept: a semantic model's metrics and its saved queries, for 32 models (one per
#: database is read at a time).
_KEPT_MODELS = 64
_VECTORS: dict[tuple[int, str], tuple[SemanticModel, np.ndarray]] = {}
_LOCK = threading.Lock()


def metric_hints(question: str, vector: np.ndarray | None, config: DbConnectionConfig,
                 data_dir: Path) -> tuple[list[MetricHint], list[SavedMetricQuery]]:
    """The metrics of ``config``'s database for ``question``, matched first, best first; and
    the saved metric queries it seems to ask for, best first."""
    try:
        model = semantic_model(config)
    except Nl2SqlError as exc:  # a missing semantic model: the metric tools say so
        log.warning("%s: metrics not shown: %s", config.db_id, exc)
        return [], []
    if model is None or not model.metrics:
        return [], []
    return (_metric_hints(question, vector, model, data_dir, config.db_id),
            _saved_metric_query_hints(question, vector, model))


def _saved_metric_query_hints(question: str, vector: np.ndarray | None,
                              model: SemanticModel) -> list[SavedMetricQuery]:
    """The saved queries whose name or label the question says (in a row or word by word),
    or whose label and description it means (embedding similarity); at most
    ``MAX_SAVED_QUERIES``."""
    queries = list(model.saved_metric_queries.values())
    if not queries:
        return []
    words = terms(question, expand=False)
    scores = _cached_similarities(model, "saved queries", [
        f"{q.label or ' '.join(split_identifier(q.name))}: {q.description}" for q in queries],
        vector)
    ranked: list[tuple[tuple[int, float], SavedMetricQuery]] = []
    for i, query in enumerate(queries):
        names = list(dict.fromkeys(n for n in (query.label, " ".join(
            split_identifier(query.name))) if n))
        if said_name := _said_name(names, words):
            found, reason = said_name
            rank = (0, -len(terms(found, expand=False)))
        elif scores is not None and scores[i] >= SEMANTIC_SIMILARITY:
            reason, rank = f"similar in meaning ({scores[i]:.2f})", (1, -float(scores[i]))
        else:
            continue
        ranked.append((rank, SavedMetricQuery.of(query, reason)))
    ranked.sort(key=lambda item: item[0])
    return [hint for _, hint in ranked[:MAX_SAVED_QUERIES]]


def _metric_hints(question: str, vector: np.ndarray | None, model: SemanticModel,
                  data_dir: Path, db_id: str) -> list[MetricHint]:
    """The metrics of ``model`` for ``question``: matched first, best first."""
    infos = describe(model)
    synonyms = _glossary_synonyms(infos, data_dir, db_id)
    words = terms(question, expand=False)
    folded = " ".join(question.casefold().split())
    scores = _similarities(model, infos, vector)
    ranked: list[tuple[tuple[int, float], MetricHint]] = []
    for i, info in enumerate(infos):
        names = _names(info) + synonyms.get(info.name, [])
        reason, rank = None, (3, -float(scores[i]) if scores is not None else 0.0)
        if said_name := _said_name(names, words):
            found, reason = said_name
            reason += "" if found in _names(info) else " (a glossary synonym)"
            rank = (0, -len(terms(found, expand=False)))
        elif found_close := close(names, folded):
            reason, rank = f"'{found_close[0]}' is close to '{found_close[1]}'", (1, 0.0)
        elif scores is not None and scores[i] >= SEMANTIC_SIMILARITY:
            reason = f"similar in meaning ({scores[i]:.2f})"
            rank = (2, -float(scores[i]))
        ranked.append((rank, MetricHint(name=info.name, label=info.label,
                                        description=info.description, matched=reason,
                                        dimensions=list(info.dimensions))))
    ranked.sort(key=lambda item: item[0])
    return [hint for _, hint in ranked[:MAX_METRICS]]


def _said_name(names: list[str], words: list[str]) -> tuple[str, str] | None:
    """The longest of ``names`` the question says, in a row or each of its words in any order,
    and the reason saying which."""
    together = said(sorted(names, key=lambda n: -len(terms(n, expand=False))), words)
    apart = _said_apart(names, words)
    found = max((together, apart), key=lambda n: len(terms(n or "", expand=False)))
    if not found:
        return None
    return found, ("the question says '{}'" if found == together else
                   "the question says each word of '{}'").format(found)


def _said_apart(names: list[str], words: list[str]) -> str | None:
    """The longest of ``names`` of two words or more whose every word the question says, in
    any order ("What share of the tracks are long?" says "Share of long tracks")."""
    said_words = set(words)
    apart = [(len(parts), name) for name in names
             if len(set(parts := terms(name, expand=False))) > 1 and set(parts) <= said_words]
    return max(apart, key=lambda found: found[0], default=(0, None))[1]


def _names(info: MetricInfo) -> list[str]:
    """How a question may say a metric: its label and its name in words; a Cube metric
    (``cube.member``) also by its member alone ("revenue" for ``invoices.revenue``)."""
    member = info.name.rpartition(".")[2]
    return list(dict.fromkeys([info.label, " ".join(split_identifier(info.name)),
                               " ".join(split_identifier(member))]))


def _glossary_synonyms(infos: list[MetricInfo], data_dir: Path, db_id: str
                       ) -> dict[str, list[str]]:
    """Metric name -> the words of glossary entries that name it (their term or a synonym is
    the metric's name or label)."""
    try:
        entries = load_glossary(data_dir, db_id)
    except Nl2SqlError:
        return {}
    found: dict[str, list[str]] = {}
    for info in infos:
        own = {" ".join(terms(n, expand=False)) for n in _names(info)}
        for entry in entries:
            if own & {" ".join(terms(n, expand=False)) for n in entry.names}:
                found.setdefault(info.name, []).extend(entry.names)
    return found


def _similarities(model: SemanticModel, infos: list[MetricInfo],
                  vector: np.ndarray | None) -> np.ndarray | None:
    texts = [f"{info.label}: {info.description}" if info.description else info.label
             for info in infos]
    return _cached_similarities(model, "metrics", texts, vector)


def _cached_similarities(model: SemanticModel, kind: str, texts: list[str],
                         vector: np.ndarray | None) -> np.ndarray | None:
    """The question's similarity to ``texts`` (``model``'s metrics or saved queries), their
    embeddings made once per model read."""
    if vector is None:
        return None
    key = (id(model), kind)
    with _LOCK:
        cached = _VECTORS.get(key)
    if cached is None or cached[0] is not model:
        cached = (model, embeddings.embed(texts))
        with _LOCK:
            while len(_VECTORS) >= _KEPT_MODELS:  # models read again replace their old copy
                _VECTORS.pop(next(iter(_VECTORS)))
            _VECTORS[key] = cached
    return similarities(cached[1], vector)
