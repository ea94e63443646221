"""Annotate one database: extract, merge the previous cache, offline steps, LLM steps, save.

Re-runs are incremental: for every table whose structure (``TableInfo.fingerprint()``) did not
change, what a model or a person added before (descriptions, enum decisions) is carried over,
and the LLM steps get the previous cache to tell which tables still need work.

The LLM steps are one callable, ``LlmSteps`` (in ``nl2sql.annotation.context``):
``annotate_database(..., llm_steps=...)`` calls it with an ``AnnotationContext`` after the
offline steps, when a model is configured; without one given, ``default_llm_steps()``
(``DbSchemaAnnotator``) runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from nl2sql.schema.provenance import stamp, without_placeholders
from nl2sql.annotation.context import AnnotationContext, LlmSteps
from nl2sql.schema.cache import load_db_info, save_db_info
from nl2sql.config.registry import DbConnectionConfig
from nl2sql.db.base import DbConnection, create_connection, create_operations
from nl2sql.errors import SchemaCacheError, SchemaCacheMissingError
from nl2sql._call_stop import CallStop
from nl2sql._helpers import gc_paused
from nl2sql._worker import call_stoppably
from nl2sql.inspection.json_keys import read_json_keys
from nl2sql.inspection.enums import (ColumnStats, EnumScreeningSettings, screen_array_elements,
                                     screen_table, screen_tables)
from nl2sql.inspection.implied_keys import infer_foreign_keys
from nl2sql.inspection.samples import SampleSettings, collect_sample, collect_samples
from nl2sql.schema.models import AnnotationRun, DbInfo, TableInfo, utc_now
from nl2sql._helpers import NullProgress, ProgressReporter
from nl2sql.store.store import Store
from nl2sql.annotation.drift import compare_schemas
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.annotation.options import STEP_NAMES, AnnotatorOptions
from nl2sql.schema.secret_columns import mark_secret_columns
from nl2sql.context_engine.embeddings import Embedded
from nl2sql.context_engine.embeddings_ahead import EmbeddingsAhead
from nl2sql.context_engine.index import COLLECTED_VALUES_PER_COLUMN, build_index, embed_text
from nl2sql.inspection.base import create_inspector

if TYPE_CHECKING:
    from nl2sql.annotation.metrics_check import MetricsCheck

__all__ = ["AnnotateOptions", "AnnotationContext", "AnnotationResult", "LlmSteps",
           "annotate_database", "default_llm_steps", "merge_previous", "run_offline_steps",
           "run_offline_steps_many"]


log = logging.getLogger(__name__)

#: The LLM steps as people read them in the CLI summary.
LLM_STEP_NAMES = ("descriptions", "enum classification", "example queries")
MAX_RUNS_KEPT = 20  # run history in the cache: enough to see usage trends, bounded in size
_KEPT = ("llm", "user")  # origins of annotations worth keeping across runs


@dataclass(frozen=True)
class AnnotateOptions:
    enums: EnumScreeningSettings = field(default_factory=EnumScreeningSettings)
    samples: SampleSettings = field(default_factory=SampleSettings)
    model: str | None = None
    #: LLM steps whose earlier model output is redone (``--reannotate``; ``STEP_NAMES``).
    reannotate: frozenset[str] = frozenset()


def default_llm_steps(options: AnnotatorOptions | None = None) -> LlmSteps:
    """The LLM annotation steps the CLI runs: ``nl2sql.annotation.DbSchemaAnnotator`` with
    ``options`` (concurrency, example count, rewriting comment descriptions)."""
    from nl2sql.annotation.annotator import LlmAnnotationSteps  # pydantic-ai: with a model only

    return LlmAnnotationSteps(options or AnnotatorOptions())


def llm_steps_notice(model: str | None) -> str | None:
    """Why the LLM steps did not run (one sentence for the summary), or None when they ran."""
    if model:
        return None
    return (f"LLM steps skipped ({', '.join(LLM_STEP_NAMES)}): no model configured; pass "
            f"--model provider:model-name or set NL2SQL_MODEL (or 'model:' in dbs.yaml).")


@dataclass
class AnnotationResult:
    db_info: DbInfo
    path: Path
    seconds: float
    reused_tables: list[str]
    llm_notice: str | None
    run: AnnotationRun
    #: Verified answers that schema drift broke (one line each; see ``nl2sql.annotation.verified_drift``).
    stale_verified: list[str] = field(default_factory=list)
    #: The governed metrics compiled and run (None: no semantic model; ``metrics_check.py``).
    metrics: MetricsCheck | None = None

    @property
    def enum_candidates(self) -> int:
        """Columns that passed screening and still wait for a decision (by a model)."""
        return sum(1 for t in self.db_info.tables for c in t.columns
                   if c.enum_candidates is not None and c.enum_decision is None)


def annotate_database(config: DbConnectionConfig, data_dir: Path, *,
                      options: AnnotateOptions | None = None,
                      llm_steps: LlmSteps | None = None,
                      progress: ProgressReporter | None = None,
                      connection: DbConnection | None = None,
                      store: Store | None = None) -> AnnotationResult:
    """Annotate the database of ``config`` and write its cache under ``data_dir``; the
    verified answers that drift breaks are marked stale in ``store`` (default: the SQLite
    files in ``data_dir``)."""
    options = options or AnnotateOptions()
    progress = progress or NullProgress()
    started = time.perf_counter()
    own_connection = connection is None
    connection = connection or create_connection(config)
    # Without a model nothing changes a table's embedding text after extraction: a child
    # process embeds the tables while the sample rows are read (embeddings_ahead.py).
    ahead = None if options.model else EmbeddingsAhead()

    def read() -> tuple[DbInfo, DbInfo | None, set[str], dict[str, dict[str, list[str]]]]:
        """What the database says, read in a worker when called from the main thread
        (``call_stoppably``): Ctrl-C or SIGTERM stops every statement it runs on the database,
        on whichever thread, and none starts after (``DbConnection.stopped_by``)."""
        with connection.stopped_by(CallStop.current()):
            connection.check_login()  # require_read_only_login: refused before any reading
            login = connection.login_privileges()
            progress.start("reading the schema", 1)  # the bar is there from the first step
            db_info = DbSchemaExtractor(connection).extract(config.db_id)
            progress.advance(f"{len(db_info.tables)} tables")
            progress.finish()
            # For the summary and db_list; set even when None, so an earlier run's does not
            # stay.
            warning = login.warning(config.db_id) if login else None
            db_info.login_warning = warning  # type: ignore[attr-defined]  # an extra field
            previous = _load_previous(data_dir, config.db_id)
            reused = merge_previous(db_info, previous)
            mark_secret_columns(db_info, config.secret_columns)  # before any value is read
            if config.description:
                db_info.description, db_info.description_source = config.description, "user"
            if ahead is not None:
                ahead.send([embed_text(table) for table in db_info.tables])

            with gc_paused():  # many long-lived objects, few cycles: see nl2sql._helpers
                values = run_offline_steps_many(connection, db_info.tables, options, progress)
                infer_foreign_keys(connection, db_info, data_dir)
            return db_info, previous, reused, values

    try:
        db_info, previous, reused, values = call_stoppably(read, name="the annotation")

        run = AnnotationRun(model=options.model)
        notice = llm_steps_notice(options.model)
        if llm_steps is not None and notice:  # asked for, but no model: never skipped silently
            log.warning("%s: %s The model goes in options=AnnotateOptions(model=...).",
                        config.db_id, notice)
        written: Counter[str] = Counter()

        def checkpoint(info: DbInfo) -> None:
            written.update(stamp(info, run.model))  # which model wrote what is saved with it
            save_db_info(info, data_dir)

        try:
            if options.model:
                llm_steps = llm_steps or default_llm_steps()
                llm_steps(AnnotationContext(
                    db_info, connection, config, options.model, run, previous,
                    progress, checkpoint=checkpoint, reannotate=options.reannotate))
            else:
                run.skipped_steps = _machine_step_names()
        finally:
            # Saved even when a model step failed: the offline results and whatever the
            # model answered so far are worth keeping (the next run continues from them).
            written.update(stamp(db_info, run.model))
            if options.model:
                run.produced = dict(written)  # type: ignore[attr-defined]  # extra field
            run.finished_at = run.finished_at or utc_now()
            db_info.annotation_runs = [*db_info.annotation_runs, run][-MAX_RUNS_KEPT:]
            db_info.attach()
            path = save_db_info(db_info, data_dir)
            _build_context_index(db_info, data_dir, values,
                                 ahead.vectors() if ahead is not None else None)
        operations = create_operations(connection, db_info)
        stale: list[str] = []
        if previous is not None:  # a first annotation has no verified answer to recheck
            # Imported here: the verified answers' store tables (SQLAlchemy's PostgreSQL
            # dialect among them) cost a first annotation of a SQLite file ~40 ms of start-up.
            from nl2sql.annotation.verified_drift import recheck_verified
            stale = recheck_verified(operations, previous, db_info,
                                     (store or Store(data_dir)).answers(config.db_id))
        metrics = None
        if config.semantic_model is not None:
            # Imported here: the check's sqlglot and semantic compiler cost every
            # annotate-schema without a semantic model ~0.1 s of start-up (bench/README.md).
            from nl2sql.annotation.metrics_check import check_metrics
            metrics = check_metrics(config, operations, db_info, compare_schemas(
                db_info, previous) if previous is not None else None)
    finally:
        if ahead is not None:
            ahead.close()
        if own_connection:
            connection.dispose()
    return AnnotationResult(db_info, path, time.perf_counter() - started, sorted(reused),
                            notice, run, stale, metrics)


def _machine_step_names() -> list[str]:
    return list(STEP_NAMES)


def run_offline_steps(connection: DbConnection, table: TableInfo,
                      options: AnnotateOptions) -> dict[str, list[str]]:
    """Sample rows and enum screening for one table (row counts come from the extractor).

    Returns the most frequent values of its text-like columns, read by the same bounded
    screening statement (no full scan of a big table), for the context engine's value index.
    """
    table.sample_data_csv = collect_sample(connection, table, options.samples)
    values: dict[str, list[str]] = {}

    def keep(stats: dict[str, ColumnStats]) -> None:
        for name, column_stats in stats.items():
            found = [v.value for v in column_stats.values if v.value is not None]
            found = found[:COLLECTED_VALUES_PER_COLUMN]
            if found:
                values[name] = found

    screen_table(connection, table, options.enums, keep_values=COLLECTED_VALUES_PER_COLUMN,
                 on_stats=keep)
    screen_array_elements(connection, [table], options.enums,
                          keep_values=COLLECTED_VALUES_PER_COLUMN,
                          on_stats=lambda _table, stats: keep(stats))
    read_json_keys(connection, [table], options.enums)
    return values


def run_offline_steps_many(connection: DbConnection, tables: list[TableInfo],
                           options: AnnotateOptions,
                           progress: ProgressReporter | None = None,
                           ) -> dict[str, dict[str, list[str]]]:
    """``run_offline_steps`` of every table (same results), many tables per statement where
    the backend can (``collect_samples``, ``screen_tables``). Returns table -> values.
    Progress counts each table twice, sampled and screened, as each batch ends (the two may
    run at once, on two connections)."""
    progress = progress or NullProgress()
    progress.start("sample rows and enum screening", 2 * len(tables))
    lock = threading.Lock()

    def done(names: list[str]) -> None:
        with lock:  # screening may report from its own thread
            for name in names:
                progress.advance(name)
    values: dict[str, dict[str, list[str]]] = {t.name: {} for t in tables}

    def keep(table: TableInfo, stats: dict[str, ColumnStats]) -> None:
        kept = values[table.name]
        for name, column_stats in stats.items():
            found = [v.value for v in column_stats.values if v.value is not None]
            found = found[:COLLECTED_VALUES_PER_COLUMN]
            if found:
                kept[name] = found

    def screen() -> None:
        screen_tables(connection, tables, options.enums,
                      keep_values=COLLECTED_VALUES_PER_COLUMN, on_stats=keep, on_done=done)

    if create_inspector(connection).batch_size > 0:
        # Batched statements: screening (the longer one) on a second connection while the
        # samples are read; neither reads what the other writes (column statistics and
        # decisions vs. sample text).
        with ThreadPoolExecutor(max_workers=1) as pool:
            screening = pool.submit(screen)
            samples = collect_samples(connection, tables, options.samples, on_done=done)
            screening.result()
    else:
        samples = collect_samples(connection, tables, options.samples, on_done=done)
        screen()
    for table in tables:
        table.sample_data_csv = samples[table.name]
    # After both: a table either refused is known unreadable by now.
    screen_array_elements(connection, tables, options.enums,
                          keep_values=COLLECTED_VALUES_PER_COLUMN, on_stats=keep)
    read_json_keys(connection, tables, options.enums)
    progress.finish()
    return values


def _build_context_index(db_info: DbInfo, data_dir: Path,
                         values: dict[str, dict[str, list[str]]],
                         computed: Embedded | None = None) -> None:
    """The context engine's offline index (no model needed); a failure is logged, never fatal:
    the engine rebuilds a missing index on first use. ``computed``: embeddings by text."""
    try:
        build_index(without_placeholders(db_info), data_dir, collected=values,
                    computed=computed)
    except Exception as exc:  # noqa: BLE001
        log.warning("context index of %s not built: %s", db_info.db_id, exc)


def merge_previous(db_info: DbInfo, previous: DbInfo | None) -> set[str]:
    """Carry model- and person-made annotations of ``previous`` into the fresh ``db_info``.

    Tables with an unchanged fingerprint keep "llm" and "user" descriptions and enum
    decisions; a changed table keeps only what a person wrote, for columns that still exist.
    The database description, example queries and the run history are kept as well.
    Returns the names of the unchanged tables.
    """
    if previous is None:
        return set()
    if previous.description_source in _KEPT and db_info.description_source != "user":
        db_info.description = previous.description
        db_info.description_source = previous.description_source
        db_info.description_model = previous.description_model
    db_info.example_queries = list(previous.example_queries)
    db_info.annotation_runs = list(previous.annotation_runs)
    _keep_extra_fields(db_info, previous)
    unchanged: set[str] = set()
    for table in db_info.tables:
        old = previous.table(table.name)
        if old is None or old.name != table.name:
            continue
        same = old.fingerprint() == table.fingerprint()
        if same:
            unchanged.add(table.name)
            _keep_extra_fields(table, old)
        kept = _KEPT if same else ("user",)
        if old.description_source in kept:
            table.description, table.description_source = old.description, old.description_source
            table.description_model = old.description_model
        for column in table.columns:
            old_column = old.column(column.name)
            if old_column is None or old_column.name != column.name:
                continue
            if old_column.description_source in kept:
                column.description = old_column.description
                column.description_source = old_column.description_source
                column.description_model = old_column.description_model
            # The schema's own list (a native enum, a CHECK) beats a model's earlier reading
            # of the values it saw; a person's decision beats both.
            if old_column.enum_decision in kept and not (
                    column.enum_decision == "schema" and old_column.enum_decision == "llm"):
                column.is_enum = old_column.is_enum
                column.enum_values = list(old_column.enum_values)
                column.enum_decision = old_column.enum_decision
                column.enum_reasoning = old_column.enum_reasoning
                column.enum_model = old_column.enum_model
    return unchanged


def _keep_extra_fields(fresh: BaseModel, old: BaseModel) -> None:
    """Fields other code added to the cache (e.g. the LLM steps' bookkeeping) survive a run
    that does not compute them."""
    for key, value in (old.model_extra or {}).items():
        if key not in (fresh.model_extra or {}):
            setattr(fresh, key, value)


def _load_previous(data_dir: Path, db_id: str) -> DbInfo | None:
    try:
        return load_db_info(data_dir, db_id)
    except SchemaCacheMissingError:
        return None
    except SchemaCacheError as exc:
        log.warning("ignoring the previous cache: %s", exc)
        return None
