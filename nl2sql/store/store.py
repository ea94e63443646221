"""``Store``: what nl2sql keeps besides the schema cache, behind one interface: verified answers
and proposals (``answers(db_id)``), conversations, users with tokens, the audit log, and (a
shared store only) the saved-query index.

Where it lives is dbs.yaml's top-level ``store:``: left out, SQLite files in the data dir, one
per area (as before the store: ``verified/{db_id}.sqlite``, ``conversations.sqlite``, and
``users.sqlite``, ``audit.sqlite``); ``store: postgresql://...``, every area in that one
database, so several servers share what they learn and who may ask (``schema``: the tables and
their migrations). One ``Store`` per face (``OpsContext.store``); it holds no connection of its
own (``database`` pools them per file and per URL for the whole process).
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nl2sql.config.registry import DbConnectionConfigs
    from nl2sql.store.answers import AnswerStore
    from nl2sql.store.audit import AuditLog
    from nl2sql.store.conversations import TurnStore
    from nl2sql.store.database import Database
    from nl2sql.store.saved_queries import SavedQueryTable
    from nl2sql.store.users import UserStore

#: The SQLite file of each area under the data dir (``answers``: one per database).
SQLITE_FILES = {"answers": "verified/{db_id}.sqlite", "conversations": "conversations.sqlite",
                "users": "users.sqlite", "audit": "audit.sqlite"}


class Store:
    """The store of ``data_dir`` (SQLite files), or the PostgreSQL database at ``url``."""

    def __init__(self, data_dir: Path, url: str | None = None) -> None:
        self.data_dir = data_dir
        self.url = url
        self._answers: dict[str, Database] = {}
        self._lock = threading.Lock()

    @classmethod
    def of(cls, configs: DbConnectionConfigs) -> Store:
        """The store ``configs`` (dbs.yaml) names."""
        return cls(configs.data_dir, configs.store)

    @property
    def shared(self) -> bool:
        """A database several servers share (PostgreSQL), not files of one machine."""
        return self.url is not None

    def describe(self) -> str:
        """Where the store is, for people (no password)."""
        return _storage().safe_url(self.url) if self.url else f"SQLite files in {self.data_dir}"

    # -- areas ----------------------------------------------------------------------------
    def answers(self, db_id: str) -> AnswerStore:
        """The verified answers and proposals of ``db_id``."""
        with self._lock:
            database = self._answers.get(db_id)
            if database is None:
                database = self._answers[db_id] = self._database("answers", db_id=db_id)
        return _storage().AnswerStore(database, db_id)

    @functools.cached_property
    def conversations(self) -> TurnStore:
        return _storage().TurnStore(self._database("conversations"))

    @functools.cached_property
    def users(self) -> UserStore:
        return _storage().UserStore(self._database("users"))

    @functools.cached_property
    def audit(self) -> AuditLog:
        storage = _storage()
        return storage.AuditLog(self._database(
            "audit", busy_timeout_ms=storage.APPEND_BUSY_TIMEOUT_MS))

    @functools.cached_property
    def saved_queries(self) -> SavedQueryTable:
        """The saved-query index of a shared store (a local workspace keeps its own index:
        ``nl2sql.workspace.saved_query_index``)."""
        assert self.shared, "only a shared (PostgreSQL) store keeps the saved-query index"
        return _storage().SavedQueryTable(self._database("saved_queries"))

    def _database(self, area: str, *, db_id: str | None = None,
                  busy_timeout_ms: int | None = None) -> Database:
        storage = _storage()
        if self.url is not None:
            where = self.describe()
        else:
            path = self.data_dir / SQLITE_FILES[area].format(db_id=db_id)
            where = f"file {path}"

        def prepare_area(connection: Any) -> None:
            storage.prepare(connection, storage.AREAS[area], where, db_id=db_id)

        if self.url is not None:
            return storage.PostgresDatabase(self.url, area, prepare_area)
        extra = {"busy_timeout_ms": busy_timeout_ms} if busy_timeout_ms else {}
        return storage.SqliteDatabase(path, area, prepare_area, **extra)


@functools.cache
def _storage() -> SimpleNamespace:
    """The storage classes (SQLAlchemy, ~0.4 s to import), loaded when a store is first used
    rather than when one is made: the MCP server makes one at start-up and must start fast
    (docs/architecture.md, "Imports")."""
    from nl2sql.store import answers, audit, conversations, database, saved_queries, schema, users

    return SimpleNamespace(
        AnswerStore=answers.AnswerStore, AuditLog=audit.AuditLog,
        APPEND_BUSY_TIMEOUT_MS=audit.APPEND_BUSY_TIMEOUT_MS, TurnStore=conversations.TurnStore,
        UserStore=users.UserStore, SavedQueryTable=saved_queries.SavedQueryTable,
        SqliteDatabase=database.SqliteDatabase,
        PostgresDatabase=database.PostgresDatabase, safe_url=database.safe_url,
        prepare=schema.prepare, AREAS=schema.AREAS)
