"""What the LLM annotation steps are given (``AnnotationContext``) and what they are
(``LlmSteps``), apart from the steps themselves (``nl2sql.annotation.annotator``): the offline
pipeline names them without importing pydantic-ai, which ``annotate-schema`` without a model
never needs (about 1 s of its start)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nl2sql._helpers import ProgressReporter
    from nl2sql.config.registry import DbConnectionConfig
    from nl2sql.db.base import DbConnection
    from nl2sql.schema.models import AnnotationRun, DbInfo


@dataclass
class AnnotationContext:
    """What the LLM steps get. They update ``db_info`` in place (descriptions with source
    "llm", enum decisions with ``enum_decision="llm"``, ``example_queries``) and record usage
    in ``run.steps[name]`` (or the step name in ``run.skipped_steps``)."""

    db_info: DbInfo
    connection: DbConnection
    config: DbConnectionConfig
    model: str
    run: AnnotationRun
    #: The cache before this run: the steps compare fingerprints with it to send only new or
    #: changed tables to the model (unchanged ones kept their earlier annotations).
    previous: DbInfo | None
    progress: ProgressReporter
    #: Saves ``db_info`` to the cache as it is now: call it after each model request, so an
    #: interrupted run keeps what it paid for.
    checkpoint: Callable[[DbInfo], object]
    #: Steps whose earlier model output is redone (``--reannotate``).
    reannotate: frozenset[str] = frozenset()


LlmSteps = Callable[[AnnotationContext], None]
