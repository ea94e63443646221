"""What every ``*_op`` needs: the registry, the data dir, the workspace, and per-database
connections, cached schemas and operations, created lazily and reused across calls.

One ``OpsContext`` lives for the life of a process face (an MCP server's lifespan, a CLI call, an
agent's deps); it holds no per-request state, so it is safe to share between concurrent calls.
``for_caller`` gives the view one caller works through (``nl2sql.access``): the same caches,
the registry they see (their databases, their results folder), the face they came through, and
operations that tell the database who is asking (PostgreSQL ``application_name``, ``db_role``).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from nl2sql.access.audit import store_trail
from nl2sql.access.caller import Caller, os_caller
from nl2sql.access.users import local_caller
from nl2sql.access.permissions import db_role, scope
from nl2sql.schema.provenance import without_placeholders
from nl2sql.schema.cache import cache_path, load_db_info
from nl2sql.config.registry import DbConnectionConfig, DbConnectionConfigs
from nl2sql.errors import SchemaCacheMissingError
from nl2sql.schema.models import DbInfo
from nl2sql.store.store import Store

if TYPE_CHECKING:  # keeps SQLAlchemy out of MCP start-up
    from nl2sql.db.base import DbConnection, DbOperations
    from nl2sql.db.logins import LoginPrivileges

#: The faces a call comes through (the audit's ``face``).
FACES = ("python", "cli", "mcp-stdio", "mcp-http", "web")


@dataclass
class OpsContext:
    configs: DbConnectionConfigs  # what this context's caller sees (``scope``)
    #: Who the calls are made for, and through which face.
    caller: Caller = field(default_factory=os_caller)
    face: str = "python"
    #: The whole registry, shared by every caller's view (``configs`` when None).
    registry: DbConnectionConfigs | None = field(default=None, repr=False)
    _connections: dict[str, DbConnection] = field(default_factory=dict, repr=False)
    _db_infos: dict[str, tuple[float, DbInfo]] = field(default_factory=dict, repr=False)
    # db_id -> operations built on the current connection and DbInfo (stateless: shared).
    _operations: dict[str, DbOperations] = field(default_factory=dict, repr=False)
    # db_id -> a DbInfo with no tables: query_operations on a database without a cache.
    _empty_infos: dict[str, DbInfo] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: workspace -> its real path, shared by every view (``for_caller``): a view per request
    #: need not create and resolve its workspace again (one entry per workspace: per user).
    _workspace_roots: dict[Path, Path] = field(default_factory=dict, repr=False)
    _store: Store | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.registry is None:
            self.registry = self.configs

    @classmethod
    def load(cls, config_path: str | Path | None = None, **overrides: object) -> OpsContext:
        return cls(DbConnectionConfigs.load(config_path, **overrides))  # type: ignore[arg-type]

    @classmethod
    def load_local(cls, config_path: str | Path | None, face: str,
                   **overrides: object) -> OpsContext:
        """``load``, as the OS account running a local face (``local_caller``)."""
        ops = cls.load(config_path, **overrides)
        return ops.for_caller(local_caller(ops.configs, ops.store), face)

    def for_caller(self, caller: Caller, face: str) -> OpsContext:
        """The view ``caller`` works through, coming through ``face``: the same connections and
        caches, the registry they see. Closing a view closes the shared connections."""
        assert self.registry is not None
        return replace(self, configs=scope(self.registry, caller), caller=caller, face=face,
                       _store=self.store)

    def audit(self, **fields: object) -> None:
        """One audit record of a call (``nl2sql.access.audit``): queued and written in the
        background, so it never blocks nor fails the call."""
        store_trail(self.store).record(**fields)

    def known_login(self, db_id: str) -> LoginPrivileges | None:
        """The login check already made for ``db_id`` (at server start, or by a call), without
        connecting: None when none was made."""
        connection = self._connections.get(db_id)
        return connection.known_login_privileges() if connection is not None else None

    @property
    def data_dir(self) -> Path:
        return self.configs.data_dir

    @property
    def workspace(self) -> Path:
        return self.configs.workspace

    @property
    def workspace_root(self) -> Path:
        """The workspace's real path, created and resolved once for the context and all its
        views (not per call or per request).
        Safe to keep: names inside it are still resolved on every call, so a workspace later
        replaced by a symlink elsewhere makes every name resolve outside it (refused), never
        lets one out."""
        workspace = self.workspace
        root = self._workspace_roots.get(workspace)
        if root is None:
            workspace.mkdir(parents=True, exist_ok=True)
            root = self._workspace_roots[workspace] = workspace.resolve()
        return root

    @property
    def store(self) -> Store:
        """Where verified answers, proposals, conversations, users and the audit log are kept
        (dbs.yaml's ``store:``), made on first use."""
        store = self._store
        if store is None:
            with self._lock:
                store = self._store = self._store or Store.of(self.configs)
        return store

    def config(self, db_id: str) -> DbConnectionConfig:
        return self.configs.get(db_id)

    def connection(self, db_id: str) -> DbConnection:
        config = self.configs.get(db_id)
        with self._lock:
            if db_id not in self._connections:
                from nl2sql.db.base import create_connection

                self._connections[db_id] = create_connection(config)
            return self._connections[db_id]

    def db_info(self, db_id: str) -> DbInfo:
        """The cached schema, re-read when ``annotate-schema`` has rewritten the file."""
        self.configs.get(db_id)  # unknown db_id -> UnknownDatabaseError first
        return self._db_info_at(db_id, self._cache_mtime(db_id))

    def _cache_mtime(self, db_id: str) -> float | None:
        """The schema cache file's mtime (one ``stat``), or None when there is no such file."""
        try:
            status = os.stat(cache_path(self.data_dir, db_id))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return status.st_mtime if stat.S_ISREG(status.st_mode) else None

    def _db_info_at(self, db_id: str, mtime: float | None) -> DbInfo:
        key = -1.0 if mtime is None else mtime
        with self._lock:
            cached = self._db_infos.get(db_id)
            if cached and cached[0] == key:
                return cached[1]
        info = without_placeholders(load_db_info(self.data_dir, db_id,
                                                 self.configs.get(db_id).secret_columns))
        with self._lock:
            self._db_infos[db_id] = (key, info)
        return info

    def schema_fingerprint(self, db_id: str) -> str | None:
        """The fingerprint of ``db_id``'s schema cache (None without one): what an answer
        records as the schema it was made with."""
        try:
            return self.db_info(db_id).fingerprint()
        except SchemaCacheMissingError:
            return None

    def operations(self, db_id: str) -> DbOperations:
        return self._operations_for(db_id, self.db_info(db_id))

    def query_operations(self, db_id: str) -> DbOperations:
        """Operations for running SQL, which needs no schema cache: without one, identifier
        lookups are simply empty. One ``stat`` of the cache file per call (``annotate-schema``
        may write it while the server runs), and the operations object is reused."""
        self.configs.get(db_id)  # unknown db_id -> UnknownDatabaseError first
        mtime = self._cache_mtime(db_id)
        if mtime is not None:
            try:
                return self._operations_for(db_id, self._db_info_at(db_id, mtime))
            except SchemaCacheMissingError:  # removed since the stat
                pass
        with self._lock:
            info = self._empty_infos.get(db_id)
        if info is None:
            info = DbInfo(db_id=db_id, db_type=self.config(db_id).type.value)
            with self._lock:
                info = self._empty_infos.setdefault(db_id, info)
        return self._operations_for(db_id, info)

    def _operations_for(self, db_id: str, info: DbInfo) -> DbOperations:
        """The operations on ``db_id``'s connection and ``info``, built once and reused while
        both stay the same (``DbOperations`` holds nothing else, so calls can share one)."""
        connection = self.connection(db_id)
        with self._lock:
            cached = self._operations.get(db_id)
        if cached is not None and cached.db_info is info and cached.connection is connection:
            return self._as_caller(cached)
        from nl2sql.db.base import create_operations

        operations = create_operations(connection, info)
        with self._lock:
            self._operations[db_id] = operations
        return self._as_caller(operations)

    def _as_caller(self, operations: DbOperations) -> DbOperations:
        """``operations`` telling the database who is asking (PostgreSQL: application_name
        ``nl2sql/<user>``, and the caller's ``db_role``)."""
        return operations.for_session(f"nl2sql/{self.caller.name}",
                                      db_role(self.caller, operations.db_id))

    def close(self) -> None:
        with self._lock:
            for connection in self._connections.values():
                connection.dispose()
            self._connections.clear()
            self._operations.clear()


@contextmanager
def ops_context_for(config: DbConnectionConfigs | OpsContext | str | Path | None
                    ) -> Iterator[OpsContext]:
    """The ``OpsContext`` for a Python API call's ``config`` (a registry, a context, a dbs.yaml
    path or None), closed at the end of the block when the call made it (a context given in
    ``config`` stays open: it is the caller's, and so is its caller). A context made here acts
    as the OS account (``local_caller``)."""
    if isinstance(config, OpsContext):
        yield config
        return
    ops = OpsContext(config) if isinstance(config, DbConnectionConfigs) \
        else OpsContext.load(config)
    try:
        yield ops.for_caller(local_caller(ops.configs, ops.store), "python")
    finally:
        ops.close()
