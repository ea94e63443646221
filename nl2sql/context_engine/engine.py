"""The context engine of one registry: loaded caches and indexes, shared across calls.

Per database it keeps the cache (``DbInfo``), the loaded index (``DbIndex``) and the whole
schema's SQL and size, reloaded when ``annotate-schema`` rewrites the cache; an index that is
missing or was built from another cache version is rebuilt on load (never an error).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlglot import exp

from nl2sql.backends import Backend
from nl2sql.schema.models import DbInfo, holds_elements
from nl2sql.schema.provenance import without_placeholders
from nl2sql.schema.cache import cache_path, load_db_info
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.context_engine.examples import cache_examples, rank_examples, verified_examples
from nl2sql.context_engine.glossary import glossary_for
from nl2sql.context_engine.metric_retrieval import metric_hints
from nl2sql.context_engine.prompt_context import (WHOLE_SCHEMA_FITS, Candidate, KeptTable, PromptContext,
                                   ValueHint, ambiguous)
from nl2sql.context_engine.pruning import estimate_tokens, prune
from nl2sql.errors import (SchemaCacheError, SchemaCacheMissingError, require_question,
                           require_string, require_whole_number)
from nl2sql._helpers import gc_paused
from nl2sql.context_engine.index import build_index, embeddings_path, read_index
from nl2sql.context_engine.retrieval import DbIndex
from nl2sql.context_engine import embeddings
from nl2sql.schema.formatting import column_reference, format_schema
from nl2sql.context_engine.catalog import CatalogIndex
from nl2sql.store.store import Store

if TYPE_CHECKING:
    import numpy as np

    from nl2sql.context_engine.catalog import CatalogIndex
    from nl2sql.context_engine.retrieval import DbIndex

log = logging.getLogger(__name__)

DEFAULT_BUDGET_TOKENS = 6000
MAX_VALUE_HINTS = 8


@dataclass
class Loaded:
    """One database's index and, loaded on first use, its cache (``DbInfo``)."""

    signature: int
    db_id: str
    data_dir: Path
    index: DbIndex
    _info: DbInfo | None = None
    _full_sql: str | None = None
    #: dbs.yaml's ``secret_columns`` of the database (``load_db_info`` applies a change).
    secret_columns: tuple[str, ...] = ()

    @property
    def info(self) -> DbInfo:
        if self._info is None:
            self._info = without_placeholders(load_db_info(self.data_dir, self.db_id,
                                                           self.secret_columns))
        return self._info

    @property
    def full_tokens(self) -> int:
        return self.index.data.full_tokens

    @property
    def full_sql(self) -> str:
        """The whole annotated schema, exactly as ``db_show_schema`` shows it (made on first
        use: a big schema is pruned on every call and never needs it)."""
        if self._full_sql is None:
            self._full_sql = format_schema(self.info)
        return self._full_sql


def load_index(data_dir: Path, db_id: str, info: DbInfo | None = None,
               secret_columns: tuple[str, ...] = ()) -> tuple[DbIndex, DbInfo | None]:
    """The stored index of ``db_id``; rebuilt (and stored again) from the cache when missing,
    unreadable or stale, or made before dbs.yaml's ``secret_columns`` changed (the cache is
    then marked again first: ``load_db_info``). Returns the cache too when it had to be
    read."""
    import numpy as np

    data = read_index(data_dir, db_id)
    if data is not None and data.secret_columns != list(secret_columns):
        data = None
    vectors = None
    if data is not None:
        try:
            vectors = np.load(embeddings_path(data_dir, db_id), allow_pickle=False)
        except (OSError, ValueError):
            vectors = None
        if vectors is None or vectors.shape[0] != len(data.tables):
            data = None
    if data is None:
        log.info("building the context index of %s", db_id)
        info = info or without_placeholders(load_db_info(data_dir, db_id, secret_columns))
        data = build_index(info, data_dir)
        vectors = data.vectors()
    return DbIndex(data, vectors), info


class ContextEngine:
    #: Seconds during which the caches' modification times are not checked again.
    FRESHNESS_SECONDS = 1.0

    def __init__(self, configs: DbConnectionConfigs,
                 loaded: dict[str, Loaded] | None = None) -> None:
        self.configs = configs
        self.store = Store.of(configs)  # verified answers: the first examples
        #: db_id -> its loaded index; shared by the engines of one data dir (callers who see
        #: different databases have an engine each, the indexes are loaded once).
        self._loaded: dict[str, Loaded] = {} if loaded is None else loaded
        self._catalog: tuple[tuple[tuple[str, int], ...], CatalogIndex] | None = None
        self._available: tuple[float, list[Loaded]] | None = None
        self._lock = threading.RLock()

    @property
    def data_dir(self) -> Path:
        return self.configs.data_dir

    # -- loading ----------------------------------------------------------------------------
    def loaded(self, db_id: str) -> Loaded:
        """The index (and lazily the cache) of ``db_id``; raises the cache errors when it has
        no readable cache."""
        config = self.configs.get(db_id)
        path = cache_path(self.data_dir, db_id)
        try:
            mtime = path.stat().st_mtime_ns
        except FileNotFoundError:
            load_db_info(self.data_dir, db_id)  # raises the "run annotate-schema" error
            raise
        with self._lock:
            current = self._loaded.get(db_id)
            if current is not None and current.signature == mtime:
                return current
            with gc_paused():
                index, info = load_index(self.data_dir, db_id,
                                         secret_columns=config.secret_columns)
            current = Loaded(mtime, db_id, self.data_dir, index, info,
                             secret_columns=config.secret_columns)
            self._loaded[db_id] = current
            return current

    def available(self) -> list[Loaded]:
        """Every configured database with a readable cache, in registry order (checked
        against the files at most once per ``FRESHNESS_SECONDS``)."""
        now = time.monotonic()
        with self._lock:
            if self._available and now - self._available[0] < self.FRESHNESS_SECONDS:
                return self._available[1]
        found = []
        for config in self.configs:
            try:
                found.append(self.loaded(config.db_id))
            except (SchemaCacheMissingError, SchemaCacheError, FileNotFoundError):
                continue
        with self._lock:
            self._available = (now, found)
        return found

    def catalog(self) -> CatalogIndex:
        with gc_paused():
            available = self.available()
            key = tuple((item.db_id, item.signature) for item in available)
            with self._lock:
                if self._catalog is None or self._catalog[0] != key:
                    self._catalog = (key, CatalogIndex([item.index for item in available]))
                return self._catalog[1]

    # -- answering --------------------------------------------------------------------------
    def rank(self, question: str, vector: np.ndarray | None = None) -> list[Candidate]:
        """Every database with a cache, scored for ``question`` (best first); databases
        without a cache last, with score 0 and what to do."""
        if vector is None:
            vector = question_vector(question)
        ranked = self.catalog().rank(question, vector)
        known = {c.db_id for c in ranked}
        for config in self.configs:
            if config.db_id not in known:
                ranked.append(Candidate(
                    db_id=config.db_id, score=0.0,
                    reason=f"no schema cache yet; run `annotate-schema {config.db_id}`"))
        return ranked

    def context(self, question: str, *, db_id: str | None = None,
                budget_tokens: int | None = None) -> PromptContext:
        question = require_question(question)
        if db_id is not None:
            require_string(db_id, "db_id")
        budget = DEFAULT_BUDGET_TOKENS if budget_tokens is None else require_whole_number(
            budget_tokens, "budget_tokens")
        vector = question_vector(question)
        candidates = self.rank(question, vector)
        if db_id is None:
            usable = [c for c in candidates if c.score > 0 or len(candidates) == 1]
            if not usable:
                usable = [c for c in candidates if not c.reason.startswith("no schema cache")]
            if not usable:
                return PromptContext(question=question, db_id=None, candidates=candidates,
                                     ambiguous_between=ambiguous(candidates))
            db_id = usable[0].db_id
        loaded = self.loaded(db_id)
        index = loaded.index
        matches = index.values.match(question)
        # A table queries cannot read (``TableInfo.unreadable``) is no answer's source: shown
        # only when the whole schema is.
        scores = [s for s in index.score_tables(question, vector, matches)
                  if not loaded.info.table(s.name).unreadable]
        if budget >= loaded.full_tokens:
            relevant = {s.name: s for s in scores if s.score > 0.15}
            tables = [KeptTable(name=t.name, reason=relevant[t.name].reason()
                                if t.name in relevant else WHOLE_SCHEMA_FITS)
                      for t in loaded.info.tables]
            schema_sql, tokens = loaded.full_sql, loaded.full_tokens
        else:
            pruned = prune(loaded.info, index, scores, question, budget)
            tables, schema_sql = pruned.tables, pruned.schema_sql
            tokens = estimate_tokens(schema_sql)
        kept = {t.name for t in tables}
        hints = value_hints(matches, kept, self.configs.get(db_id).backend, loaded.info)
        examples = rank_examples(question, vector, verified_examples(self.store, db_id),
                                 cache_examples(loaded.info))
        glossary = glossary_for(question, vector, self.data_dir, db_id)
        metrics, saved = metric_hints(question, vector, self.configs.get(db_id), self.data_dir)
        return PromptContext(
            question=question, db_id=db_id, candidates=candidates, tables=tables,
            value_hints=hints, examples=examples, glossary=glossary, metrics=metrics,
            saved_metric_queries=saved,
            schema_sql=schema_sql,
            schema_tokens=tokens, full_schema_tokens=loaded.full_tokens,
            budget_tokens=budget, ambiguous_between=ambiguous(candidates))

def value_hints(matches: list, kept: set[str],  # type: ignore[type-arg]
                backend: Backend, info: DbInfo) -> list[ValueHint]:
    """The value matches as hints: in kept tables first, each (table, column, value) once,
    with the value written as a string literal of ``backend``'s dialect (in Spark SQL
    ``'it''s'`` is two strings run together: ``its``), and an element of an array or SET
    column of ``info`` found as one (``Backend.element_test``: ``'x' = ANY(t.c)``)."""
    dialect = backend.sqlglot_dialect
    ordered = sorted(matches, key=lambda m: (m.table not in kept, -m.score, -len(m.matched)))
    hints, seen = [], set()
    for match in ordered:
        key = (match.table, match.column, match.value)
        if key in seen:
            continue
        seen.add(key)
        literal = exp.Literal.string(match.value).sql(dialect=dialect)
        table = info.table(match.table)
        column = table.column(match.column) if table is not None else None
        condition = ""
        if table is not None and column is not None:
            reference = column_reference(table, column.name, info.db_type)
            condition = (backend.element_test.format(column=reference, value=literal)
                         if holds_elements(column.data_type) else f"{reference} = {literal}")
        hints.append(ValueHint(table=match.table, column=match.column, value=match.value,
                               matched=match.matched).written(literal, condition))
        if len(hints) >= MAX_VALUE_HINTS:
            break
    return hints


def question_vector(question: str) -> np.ndarray | None:
    try:
        return embeddings.embed([question])[0]
    except Exception as exc:  # noqa: BLE001  (lexical retrieval still works without it)
        log.warning("semantic retrieval off: the embedding model did not load (%s)", exc)
        return None


_ENGINES: dict[tuple[Path, tuple[str, ...]], ContextEngine] = {}
_LOADED: dict[Path, dict[str, Loaded]] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(configs: DbConnectionConfigs) -> ContextEngine:
    """The shared engine of ``configs``' data dir and databases (indexes load once per data
    dir, whichever databases a caller sees)."""
    data_dir = configs.data_dir.resolve()
    key = (data_dir, tuple(sorted(configs.ids())))
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = ContextEngine(configs, _LOADED.setdefault(data_dir, {}))
        else:
            engine.configs = configs
        return engine
