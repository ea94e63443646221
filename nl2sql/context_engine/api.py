"""``nl2sql.context()``: the context for one question, from the cache and the offline indexes."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from nl2sql.access.users import local_caller
from nl2sql.access.permissions import scope
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.context_engine.engine import engine_for
from nl2sql.context_engine.prompt_context import PromptContext


class HasConfigs(Protocol):
    """What ``config=`` may also be: an object holding a registry (an ``OpsContext``)."""

    configs: DbConnectionConfigs


def resolve_configs(config: object = None) -> DbConnectionConfigs:
    """The registry from ``config``: a ``DbConnectionConfigs``, an ``OpsContext`` (its caller's
    view), a dbs.yaml path, or None (``NL2SQL_CONFIG`` or ./dbs.yaml, as everywhere else). A
    registry that is not a caller's view yet is the OS account's (``local_caller``): a
    configured user sees their groups' databases only."""
    configs = getattr(config, "configs", None)
    if isinstance(configs, DbConnectionConfigs):
        return configs
    if isinstance(config, DbConnectionConfigs):
        registry = config
    elif config is None or isinstance(config, (str, Path)):
        registry = DbConnectionConfigs.load(config)
    else:
        raise TypeError(f"config must be a DbConnectionConfigs, an OpsContext or a path to "
                        f"dbs.yaml, not {type(config).__name__}")
    if registry.scoped_for is not None:
        return registry
    return scope(registry, local_caller(registry))

def context(question: str, *, db_id: str | None = None, budget_tokens: int | None = None,
            config: DbConnectionConfigs | HasConfigs | str | Path | None = None) -> PromptContext:
    """What a model should be shown to answer ``question``.

    ``db_id`` None: every configured database is scored (``candidates``) and the best is used.
    ``budget_tokens`` (default 6,000; chars/4): above it the schema is pruned to the tables that
    matter (with reasons), the tables that join them, and the values the question names; at or
    above ``full_schema_tokens`` nothing is pruned.

    Example:
        >>> ctx = nl2sql.context("How many books did each author write?")
        >>> print(ctx.db_id, [t.name for t in ctx.tables])
    """
    configs = resolve_configs(config)
    return engine_for(configs).context(question, db_id=db_id, budget_tokens=budget_tokens)
