"""The LLM steps as the pipeline's seam (``nl2sql.annotation.seam.LlmSteps``): a callable that
gets the pipeline's ``AnnotationContext`` and runs ``DbSchemaAnnotator`` on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nl2sql.annotation.options import AnnotatorOptions

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from nl2sql.annotation.seam import AnnotationContext


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
        # Imported here: pydantic-ai is loaded only when a model is actually used.
        from nl2sql.annotation.annotator import DbSchemaAnnotator

        from nl2sql.annotation.provenance import forget

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
