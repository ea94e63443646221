"""The context engine of one data dir: loaded caches and indexes, shared across calls."""

from __future__ import annotations

import threading
from pathlib import Path

from nl2sql.cache import cache_path, load_db_info
from nl2sql.config import DbConnectionConfigs
from nl2sql.context.models import Candidate, KeptTable, PromptContext
from nl2sql.errors import SchemaCacheError, SchemaCacheMissingError
from nl2sql.models import DbInfo

DEFAULT_BUDGET_TOKENS = 6000


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` as a model would count them, roughly: characters / 4."""
    return (len(text) + 3) // 4


class ContextEngine:
    def __init__(self, configs: DbConnectionConfigs) -> None:
        self.configs = configs
        self._db_infos: dict[str, tuple[float, DbInfo]] = {}
        self._lock = threading.Lock()

    @property
    def data_dir(self) -> Path:
        return self.configs.data_dir

    def db_info(self, db_id: str) -> DbInfo:
        self.configs.get(db_id)
        path = cache_path(self.data_dir, db_id)
        mtime = path.stat().st_mtime if path.is_file() else -1.0
        with self._lock:
            cached = self._db_infos.get(db_id)
            if cached and cached[0] == mtime:
                return cached[1]
        info = load_db_info(self.data_dir, db_id)
        with self._lock:
            self._db_infos[db_id] = (mtime, info)
        return info

    def context(self, question: str, *, db_id: str | None = None,
                budget_tokens: int | None = None) -> PromptContext:
        from nl2sql.formatting import format_schema

        candidates = []
        for config in self.configs:
            try:
                self.db_info(config.db_id)
            except (SchemaCacheMissingError, SchemaCacheError):
                continue
            candidates.append(Candidate(db_id=config.db_id, score=0.0, reason="no ranking yet"))
        chosen = db_id or (candidates[0].db_id if candidates else None)
        if chosen is None:
            return PromptContext(question=question, db_id=None, candidates=candidates)
        info = self.db_info(chosen)
        schema_sql = format_schema(info)
        tokens = estimate_tokens(schema_sql)
        return PromptContext(
            question=question, db_id=chosen, candidates=candidates,
            tables=[KeptTable(name=t.name, reason="whole schema") for t in info.tables],
            schema_sql=schema_sql, schema_tokens=tokens, full_schema_tokens=tokens)


_ENGINES: dict[tuple[Path, tuple[str, ...]], ContextEngine] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(configs: DbConnectionConfigs) -> ContextEngine:
    """The shared engine of ``configs``' data dir and databases (indexes load once)."""
    key = (configs.data_dir.resolve(), tuple(sorted(configs.ids())))
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None or engine.configs is not configs:
            if engine is None:
                engine = _ENGINES[key] = ContextEngine(configs)
            else:
                engine.configs = configs
        return engine
