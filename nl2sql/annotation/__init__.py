"""LLM annotation of a cached schema: descriptions, enum classification, example queries.

Every step is a pydantic-ai ``Agent`` with a typed output and a prompt file in
``prompts/annotation/``; ``DbSchemaAnnotator`` runs them incrementally (only new or changed
tables reach the model) with bounded concurrency and per-step usage accounting.
"""

from __future__ import annotations

from nl2sql.annotation.annotator import AnnotatorOptions, DbSchemaAnnotator
from nl2sql.annotation.drift import SchemaDrift, TableDrift, compare_schemas
from nl2sql.annotation.model_selection import build_model, model_label, model_setup_error
from nl2sql.annotation.prompts import fill_prompt, prompt_fields, render_prompt
from nl2sql.annotation.usage import STEP_NAMES, UsageTracker, summary_lines

__all__ = [
    "STEP_NAMES",
    "AnnotatorOptions",
    "DbSchemaAnnotator",
    "SchemaDrift",
    "TableDrift",
    "UsageTracker",
    "build_model",
    "compare_schemas",
    "fill_prompt",
    "model_label",
    "model_setup_error",
    "prompt_fields",
    "render_prompt",
    "summary_lines",
]
