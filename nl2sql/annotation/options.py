"""Annotation settings and step names (no pydantic-ai import: the CLI starts fast)."""

from __future__ import annotations

from dataclasses import dataclass

#: Annotation steps in the order they run. The names key ``AnnotationRun.steps``.
STEP_NAMES: tuple[str, ...] = ("table_descriptions", "enum_classification",
                               "database_description", "example_queries")
STEP_TITLES = {"table_descriptions": "table and column descriptions",
               "enum_classification": "enum classification",
               "database_description": "database description",
               "example_queries": "example queries"}


@dataclass(frozen=True)
class AnnotatorOptions:
    #: Re-describe tables and columns whose description came from a database comment.
    rewrite_descriptions: bool = False
    #: Requests in flight at once (table steps).
    concurrency: int = 4
    #: Example queries to keep; 0 skips the step.
    example_count: int = 5
    #: Feedback rounds for failed example queries.
    example_retries: int = 3
    #: Columns per description/enum request; wider tables are split.
    max_columns_per_request: int = 60
    #: Which steps may run (names from ``STEP_NAMES``).
    steps: tuple[str, ...] = STEP_NAMES
