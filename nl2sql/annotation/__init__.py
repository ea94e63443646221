"""LLM annotation of a cached schema: descriptions, enum classification, example queries.

Every step is a pydantic-ai ``Agent`` with a typed output and a prompt file in
``prompts/annotation/``; ``DbSchemaAnnotator`` runs them incrementally (only new or changed
tables reach the model) with bounded concurrency and per-step usage accounting.

Names are imported on first use, so ``nl2sql.annotation.options`` (read by the CLI) does not
pay for importing pydantic-ai.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "AnnotatorOptions": "options",
    "STEP_NAMES": "options",
    "DbSchemaAnnotator": "annotator",
    "LlmAnnotationSteps": "annotator",
    "SchemaDrift": "drift",
    "TableDrift": "drift",
    "check_drift": "drift",
    "compare_schemas": "drift",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from nl2sql.annotation.annotator import DbSchemaAnnotator
    from nl2sql.annotation.drift import SchemaDrift, TableDrift, check_drift, compare_schemas
    from nl2sql.annotation.options import STEP_NAMES, AnnotatorOptions
    from nl2sql.annotation.annotator import LlmAnnotationSteps


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'nl2sql.annotation' has no attribute {name!r}")
    return getattr(importlib.import_module(f"nl2sql.annotation.{module}"), name)
