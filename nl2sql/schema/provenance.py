"""Which model wrote each annotation, and forgetting model output on purpose.

Every annotation a model writes records the model's label (``provider:name`` as given):
``description_model`` on the database, its tables and columns, ``enum_model`` on an LLM enum
decision, ``model`` on each example query. Two uses:

- Output of pydantic-ai's offline models (``test`` is ``TestModel``; ``FunctionModel``) is
  placeholder text. When a real model runs, the previous cache's test-model annotations are
  treated as missing, so the real model writes them (``forget``).
- ``annotate-schema --reannotate [STEPS]`` forgets the LLM annotations of the chosen steps on
  purpose (never descriptions from database comments or written by a person).

A cache written before models were recorded has "llm" annotations without a label: they are
attributed to the model of its annotation runs when those all used one model.

No pydantic-ai import: the pipeline and the CLI use this without loading it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from nl2sql.schema.models import DbInfo

#: ``--reannotate`` choices -> the annotation steps they redo (names of ``STEP_NAMES``).
REANNOTATE_CHOICES: dict[str, tuple[str, ...]] = {
    "descriptions": ("table_descriptions", "database_description"),
    "enums": ("enum_classification",),
    "examples": ("example_queries",),
}
REANNOTATE_CHOICES["all"] = tuple(step for steps in REANNOTATE_CHOICES.values() for step in steps)
#: Extra field the example step keeps on ``DbInfo`` (``nl2sql.annotation.examples.MARKER``).
_EXAMPLES_MARKER = "example_queries_schema"


def is_test_model(label: str | None) -> bool:
    """True for pydantic-ai's offline models: ``test`` (TestModel) and FunctionModel."""
    if not label:
        return False
    return label == "test" or label.split(":", 1)[0] in ("test", "function")


def reannotate_steps(choices: Iterable[str]) -> frozenset[str]:
    """The step names for ``--reannotate`` choices (``descriptions,enums`` or ``all``)."""
    steps: set[str] = set()
    for choice in choices:
        steps.update(REANNOTATE_CHOICES[choice])
    return frozenset(steps)


def _legacy_model(db_info: DbInfo) -> str | None:
    """The one model of the cache's annotation runs that made requests, if there is one."""
    models = {run.model for run in db_info.annotation_runs
              if run.model and any(usage.requests for usage in run.steps.values())}
    return models.pop() if len(models) == 1 else None


def _last_model(db_info: DbInfo, step: str) -> str | None:
    """The model of the latest annotation run that made requests for ``step``."""
    for run in reversed(db_info.annotation_runs):
        usage = run.steps.get(step)
        if usage is not None and usage.requests:
            return run.model
    return None


def is_placeholder_model(label: str | None) -> bool:
    """True for pydantic-ai's ``test`` model (``TestModel``), whose every answer is placeholder
    text ("a"). Scripted ``FunctionModel`` output is deliberate and is shown like a real one."""
    return bool(label) and str(label).split(":", 1)[0] == "test"


def without_placeholders(db_info: DbInfo) -> DbInfo:
    """``db_info`` as MCP clients, agents and the context engine are shown it: without what the
    ``test`` model wrote, so trying the commands with it never puts "-- a" comments in anyone's
    schema. The cache keeps them (a later ``test`` run reuses them; a real model redoes them)."""
    legacy = _legacy_model(db_info)
    labels = [db_info.description_model, *(q.model for q in db_info.example_queries)]
    for table in db_info.tables:
        labels.append(table.description_model)
        labels += [label for c in table.columns for label in (c.description_model, c.enum_model)]
    if not any(is_placeholder_model(label or legacy) for label in labels):
        return db_info
    shown = db_info.model_copy(deep=True)
    _forget(shown, frozenset(), is_placeholder_model)
    shown.attach()
    return shown


def forget(previous: DbInfo | None, *, model: str | None,
           steps: frozenset[str] = frozenset()) -> Counter[str]:
    """Remove from ``previous`` (in place) the LLM annotations the next run must redo: those
    of ``steps``, and every test-model annotation when ``model`` is a real model. Returns
    what was forgotten, by kind (for the summary)."""
    if previous is None:
        return Counter()
    drop_test = bool(model) and not is_test_model(model)
    return _forget(previous, steps, is_test_model if drop_test else lambda _label: False)


def _forget(previous: DbInfo, steps: frozenset[str],
            dropped_model: Callable[[str | None], bool]) -> Counter[str]:
    forgotten: Counter[str] = Counter()
    legacy = _legacy_model(previous)

    def drop(step: str, source: str | None, writer: str | None) -> bool:
        if source != "llm":
            return False
        return step in steps or dropped_model(writer or legacy)

    if drop("database_description", previous.description_source, previous.description_model):
        previous.description = previous.description_source = previous.description_model = None
        forgotten["database description"] += 1
    for table in previous.tables:
        if drop("table_descriptions", table.description_source, table.description_model):
            table.description = table.description_source = table.description_model = None
            forgotten["table descriptions"] += 1
        for column in table.columns:
            if drop("table_descriptions", column.description_source, column.description_model):
                column.description = column.description_source = None
                column.description_model = None
                forgotten["column descriptions"] += 1
            if drop("enum_classification", column.enum_decision, column.enum_model):
                column.is_enum, column.enum_values = False, []
                column.enum_decision = column.enum_reasoning = column.enum_model = None
                forgotten["enum decisions"] += 1
    kept = [q for q in previous.example_queries
            if not drop("example_queries", "llm", q.model)]
    if len(kept) != len(previous.example_queries):
        forgotten["example queries"] += len(previous.example_queries) - len(kept)
    previous.example_queries = kept
    # The "examples are done for this schema" marker goes too when a test model set it (it
    # may have kept none) or the step is redone.
    redo = "example_queries" in steps or dropped_model(_last_model(previous, "example_queries"))
    if (redo or forgotten["example queries"]) and previous.model_extra:
        previous.model_extra.pop(_EXAMPLES_MARKER, None)
    # What is kept from an older cache without labels keeps its (inferred) writer, so this
    # run's ``stamp`` labels only what this run writes.
    stamp(previous, legacy or "unknown")
    return forgotten


def stamp(db_info: DbInfo, label: str | None) -> Counter[str]:
    """Record ``label`` on every LLM annotation that has no model yet (what this run wrote);
    returns how many of each kind, for the summary."""
    written: Counter[str] = Counter()
    if not label:
        return written
    if db_info.description_source == "llm" and not db_info.description_model:
        db_info.description_model = label
        written["database description"] += 1
    for table in db_info.tables:
        if table.description_source == "llm" and not table.description_model:
            table.description_model = label
            written["table descriptions"] += 1
        for column in table.columns:
            if column.description_source == "llm" and not column.description_model:
                column.description_model = label
                written["column descriptions"] += 1
            if column.enum_decision == "llm" and not column.enum_model:
                column.enum_model = label
                written["enums" if column.is_enum else "not enums"] += 1
    for example in db_info.example_queries:
        if not example.model:
            example.model = label
            written["example queries"] += 1
    return written
