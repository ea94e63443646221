"""``DbSchemaAnnotator``: the LLM annotation steps over one ``DbInfo``, incremental and bounded,
and what the annotation pipeline hands them (``AnnotationContext``, ``LlmSteps``,
``LlmAnnotationSteps``): the pipeline imports this module, never the other way round.

Steps, in order: table and column descriptions (one request per table), enum classification
(one request per table with undecided candidates), the database description (one request),
example queries (one request plus feedback retries). Each step sends only the work that is
missing or whose table changed since ``previous``; an unchanged re-run sends nothing. Results
are written into ``db_info`` and ``checkpoint(db_info)`` is called after every request, so an
interrupted run resumes from the cache.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.models import Model

from nl2sql.annotation import descriptions, enums, examples
from nl2sql.annotation.context import AnnotationContext, LlmSteps  # noqa: F401 (re-export)
from nl2sql.annotation.options import STEP_NAMES, STEP_TITLES, AnnotatorOptions
from nl2sql.schema.provenance import forget
from nl2sql.annotation.runner import StepRunner
from nl2sql.llm.providers import build_model, model_label
from nl2sql.llm.usage import UsageTracker
from nl2sql.db.base import DbConnection
from nl2sql.schema.models import AnnotationRun, DbInfo, utc_now
from nl2sql._helpers import NullProgress, ProgressReporter

log = logging.getLogger(__name__)
T = TypeVar("T")


class DbSchemaAnnotator:
    """Runs the LLM annotation steps for one database with one model."""

    def __init__(self, model: Model | str, connection: DbConnection, *,
                 options: AnnotatorOptions | None = None,
                 checkpoint: Callable[[DbInfo], object] | None = None,
                 progress: ProgressReporter | None = None) -> None:
        self.model = build_model(model)  # setup problems (package, key) fail before any work
        self.label = model if isinstance(model, str) else model_label(model)
        self.connection = connection
        self.options = options or AnnotatorOptions()
        self.checkpoint = checkpoint or (lambda _db_info: None)
        self.progress: ProgressReporter = progress or NullProgress()

    def annotate(self, db_info: DbInfo, previous: DbInfo | None = None,
                 run: AnnotationRun | None = None) -> AnnotationRun:
        """Synchronous wrapper of ``annotate_async``."""
        return asyncio.run(self.annotate_async(db_info, previous, run))

    async def annotate_async(self, db_info: DbInfo, previous: DbInfo | None = None,
                             run: AnnotationRun | None = None) -> AnnotationRun:
        """Annotate ``db_info`` in place; returns ``run`` with usage per step filled in.

        ``previous`` is the cache before this run (to tell changed tables); the caller appends
        ``run`` to ``db_info.annotation_runs``. A ``ModelSetupError`` leaves every result
        obtained so far in ``db_info`` (and checkpointed) and the usage so far in ``run``.
        """
        run = run or AnnotationRun(model=self.label)
        run.model = self.label
        self.example_rejections: Counter[str] = Counter()
        tracker = UsageTracker()
        runner = StepRunner(self.model, tracker, self.options.concurrency)
        try:
            for step in STEP_NAMES:
                if step not in self.options.steps or (
                        step == examples.STEP and self.options.example_count == 0):
                    run.skipped_steps.append(step)
                    continue
                tracker.start(step)
                await self._run_step(step, runner, db_info, previous)
        finally:
            run.steps.update(tracker.steps)
            if self.example_rejections:
                run.examples_rejected = dict(self.example_rejections)  # type: ignore[attr-defined]
            run.finished_at = utc_now()
            db_info.attach()
        return run

    async def _run_step(self, step: str, runner: StepRunner, db_info: DbInfo,
                        previous: DbInfo | None) -> None:
        opts = self.options
        if step == descriptions.TABLE_STEP:
            agent = descriptions.table_description_agent()
            requests = descriptions.plan_table_requests(
                db_info, previous, rewrite=opts.rewrite_descriptions,
                max_columns=opts.max_columns_per_request)
            await self._each(step, requests, lambda r: r.table.name, db_info, lambda r:
                             descriptions.describe_table(runner, agent, db_info, r))
        elif step == enums.STEP:
            agent = enums.enum_agent()
            requests = enums.plan_enum_requests(db_info, max_columns=opts.max_columns_per_request)
            await self._each(step, requests, lambda r: r.table.name, db_info, lambda r:
                             enums.classify_enums(runner, agent, db_info, r))
        elif step == descriptions.DATABASE_STEP:
            needed = descriptions.needs_database_description(
                db_info, previous, rewrite=opts.rewrite_descriptions)
            agent = descriptions.database_description_agent()
            await self._each(step, [db_info.db_id] if needed else [], str, db_info,
                             lambda _: descriptions.describe_database(runner, agent, db_info))
        elif step == examples.STEP:
            if examples.examples_up_to_date(db_info, previous):
                setattr(db_info, examples.MARKER, db_info.fingerprint())
                return
            agent = examples.example_agent(opts.example_retries)
            await self._each(step, [db_info.db_id], str, db_info, lambda _: examples.generate_examples(
                runner, agent, db_info, self.connection, wanted=opts.example_count,
                rejected=self.example_rejections))

    async def _each(self, step: str, items: Sequence[T], name: Callable[[T], str],
                    db_info: DbInfo, work: Callable[[T], Awaitable[Any]]) -> None:
        """Run ``work`` for every item, at most ``concurrency`` at once, checkpointing after
        each; the first ``ModelSetupError`` cancels the rest and is raised."""
        if not items:
            return
        self.progress.start(STEP_TITLES[step], len(items))

        async def one(item: T) -> None:
            try:
                await work(item)
            except UnexpectedModelBehavior as exc:
                # The model kept answering outside the output schema: leave this item undone
                # (the next run retries it) rather than failing the whole database.
                log.warning("%s: %s for %s skipped: %s", db_info.db_id, STEP_TITLES[step],
                            name(item), exc)
                return
            self.checkpoint(db_info)
            self.progress.advance(name(item))

        try:
            async with asyncio.TaskGroup() as group:
                for item in items:
                    group.create_task(one(item))
        except BaseExceptionGroup as group_error:
            raise group_error.exceptions[0] from None
        finally:
            self.progress.finish()




@dataclass
class LlmAnnotationSteps:
    """Run the LLM steps for one pipeline run.

    ``model`` overrides the context's model string (tests pass a ``FunctionModel``).
    Results are saved through ``context.checkpoint`` after every request, so an interrupted or
    failed run keeps what it paid for.
    """

    options: AnnotatorOptions = field(default_factory=AnnotatorOptions)
    model: Model | None = None

    def __call__(self, context: AnnotationContext) -> None:
        annotator = DbSchemaAnnotator(self.model or context.model, context.connection,
                                      options=self.options, checkpoint=context.checkpoint,
                                      progress=context.progress)
        # Earlier output of a test model (when this one is real) and of the steps to redo
        # counts as missing: forgotten in the fresh cache and in the previous one it is
        # compared with (which also makes the steps' "already done" markers due again).
        forgotten = forget(context.db_info, model=annotator.label, steps=context.reannotate)
        forget(context.previous, model=annotator.label, steps=context.reannotate)
        context.run.forgotten = dict(forgotten)  # type: ignore[attr-defined]  # extra field
        annotator.annotate(context.db_info, context.previous, run=context.run)
