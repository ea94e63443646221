"""The first use of a database's code path in a process, one thread at a time.

Python's imports are not safe for two threads that import modules of one import cycle at the
same moment (SQLAlchemy's dialect packages, pandas under duckdb-engine): the import system's
deadlock detection hands one of them a partially initialised module, that import fails
(``KeyError: 'sqlalchemy'``), and the failure leaves ``sys.modules`` without a parent package
whose children stay, so every later call in that process fails too (``module 'sqlalchemy' has
no attribute 'dialects'``). A server meets this at start: the warm-up thread imports the query
modules while the client's first calls (several at once from an agent) import them too.

So the modules a call loads lazily are loaded by ``prepare`` under one lock: once for what
every call needs, and once per backend type for its classes, its SQLAlchemy and sqlglot
dialects and, for a file backend, a first connection (DuckDB's driver imports pandas and
pyarrow when it connects). Every face runs an operation through ``call_prepared``, and the
warm-up prepares through the same function, so a call that arrives while the warm-up imports
waits for it instead of importing alongside it. After that a call pays one set lookup.
A failure (a driver that is not installed, a file that is missing) is left to the call to
report; the next call tries again.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from nl2sql.operations.ops_context import OpsContext

logger = logging.getLogger(__name__)

T = TypeVar("T")

_lock = threading.Lock()
#: What is prepared in this process: "" for the common modules, else backend type names.
_prepared: set[str] = set()


def call_prepared(function: Callable[..., T], ctx: OpsContext, **arguments: Any) -> T:
    """``function(ctx, **arguments)`` once its database's code path is loaded."""
    prepare(ctx, arguments.get("db_id"))
    return function(ctx, **arguments)


def prepare(ctx: OpsContext, db_id: str | None = None) -> None:
    """Load what a call needs (and, with ``db_id``, what its backend needs), once per process."""
    key = _backend_of(ctx, db_id)
    if "" in _prepared and key in _prepared:
        return
    with _lock:
        for step in ("", key):
            if step in _prepared:
                continue
            try:
                _prepare_backend(ctx, db_id) if step else _import_common(ctx)
            except Exception as exc:  # noqa: BLE001 (the call reports it in one sentence)
                logger.debug("preparing %s failed: %s", step or "the query modules", exc)
                return
            _prepared.add(step)


def prepare_context_engine() -> None:
    """Load the context engine (search indexes, the word-embedding model), once per process:
    for ``db_search_schema`` and the ``ask_database`` prompt, which call it first."""
    if "context" in _prepared:
        return
    with _lock:
        if "context" in _prepared:
            return
        try:
            _import_context_engine()
        except Exception as exc:  # noqa: BLE001 (the call reports it in one sentence)
            logger.debug("preparing the context engine failed: %s", exc)
            return
        _prepared.add("context")


def _backend_of(ctx: OpsContext, db_id: str | None) -> str:
    if not db_id:
        return ""
    try:
        return str(ctx.config(db_id).type.value)
    except Exception:  # noqa: BLE001 (an unknown db_id: the operation says so)
        return ""


def _import_common(ctx: OpsContext) -> None:
    # The modules of the tools' calls (each also pulls SQLAlchemy, sqlglot and pydantic).
    import nl2sql.db.base  # noqa: F401
    import encodings.utf_8_sig  # noqa: F401 (CSV files are read with a BOM check)

    import nl2sql.db.lookup  # noqa: F401
    import nl2sql.schema.formatting  # noqa: F401
    import nl2sql.operations.csv_files  # noqa: F401
    import nl2sql.operations.saved_queries  # noqa: F401
    import nl2sql.semantic.api  # noqa: F401 (the metric operations: compiling,
    import nl2sql.semantic.listing  # noqa: F401 (and listing a model's metrics)
    # by name: the search operation calls prepare_context_engine of this module (no cycle)
    importlib.import_module("nl2sql.operations.search")
    from nl2sql.schema.models import DbInfo
    from nl2sql.operations.queries import QueryResult
    from nl2sql.workspace.results import ResultMetadata
    from nl2sql.store.records import AuditRecord

    # Every call ends with an audit record, written by another thread: the store's modules and
    # its engine's dialect (SQLite or PostgreSQL, whatever the database's backend) now.
    ctx.store.audit  # noqa: B018

    # The result models are built on first use (pydantic defer_build, kept out of the
    # start-up): build the query path's now (~10 ms).
    for model in (ResultMetadata, QueryResult, DbInfo, AuditRecord):
        model.model_rebuild()


def _import_context_engine() -> None:
    import multiprocessing.synchronize  # noqa: F401 (tqdm's lock, under bm25s)

    import numpy.ma  # noqa: F401 (imported by a numpy function the first ranking calls)

    import nl2sql.context_engine.catalog  # noqa: F401
    import nl2sql.context_engine.engine  # noqa: F401
    import nl2sql.context_engine.retrieval  # noqa: F401
    from nl2sql.context_engine.embeddings import model
    from nl2sql._helpers import quiet_imports

    with quiet_imports("bm25s"):
        import bm25s  # noqa: F401
    model()


def _prepare_backend(ctx: OpsContext, db_id: str | None) -> None:
    from nl2sql.sql_guard import validate_read_only

    assert db_id is not None
    backend = ctx.config(db_id).backend
    connection = ctx.query_operations(db_id).connection  # the backend's module and driver
    backend.sqlalchemy()  # the SQLAlchemy dialect (quoting in the annotated schema)
    validate_read_only("SELECT 1", connection.sqlglot_dialect)  # sqlglot's dialect modules
    connection.load_driver()
    for module in connection.first_use_imports:
        importlib.import_module(module)
    if backend.file_based:  # local, fast: connect now (the driver's own lazy imports)
        with connection.connect():  # the pool keeps it for the first call
            pass
