"""What ``nl2sql.context()`` returns: the contract ``PromptContext`` (ARCHITECTURE.md, "Python
API"). Field names are relied on by the agents, the MCP tool ``db_search_schema`` and outside
checks: keep them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

if TYPE_CHECKING:
    from nl2sql.semantic.model import DbtSavedQuery

#: The reason of a table kept only because the whole schema fits the budget.
WHOLE_SCHEMA_FITS = "whole schema fits the budget"
#: Databases scoring within this share of the best are named as ambiguous for the question.
AMBIGUOUS_MARGIN = 0.08


class Candidate(BaseModel):
    """One configured database scored for the question (best first in ``candidates``)."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    db_id: str
    score: float
    reason: str


class KeptTable(BaseModel):
    """A table shown to the model, with why it was kept."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    name: str
    reason: str


class ValueHint(BaseModel):
    """A stored value the question names: ``table.column = 'value'`` and the words that matched."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    table: str
    column: str
    value: str
    matched: str
    #: ``value`` as a string literal of the database's SQL dialect (Spark SQL escapes a quote
    #: with a backslash); empty: the standard ``'...'`` with a quote doubled. Not a field: the
    #: contract's hint is ``{table, column, value, matched}``.
    _literal: str = PrivateAttr(default="")
    #: The condition that finds it when it is an element of an array column (``'x' =
    #: ANY(t.tags)``), in the database's dialect; empty: ``table.column = literal``.
    _condition: str = PrivateAttr(default="")

    def written(self, literal: str, condition: str = "") -> ValueHint:
        """This hint, its value written as ``literal`` in the database's dialect, found by
        ``condition`` when it is an array's element."""
        self._literal, self._condition = literal, condition
        return self

    @property
    def literal(self) -> str:
        return self._literal or "'" + self.value.replace("'", "''") + "'"

    def render(self) -> str:
        condition = self._condition or f"{self.table}.{self.column} = {self.literal}"
        return f"{condition}  -- matches '{self.matched}'"


class ContextExample(BaseModel):
    """A few-shot example: a question and SQL that answered it."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    question: str
    sql: str


class GlossaryEntry(BaseModel):
    """A business term the question uses, what it means, and why it was picked."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    term: str
    definition: str
    sql: str | None = None
    matched: str

    def render(self) -> str:
        sql = f" SQL: {self.sql.strip()}" if self.sql else ""
        return f"{self.term}: {self.definition.strip()}{sql}  -- {self.matched}"


class MetricHint(BaseModel):
    """A governed metric of the database (``nl2sql.semantic``), and why the question seems to
    ask for it (``matched`` None: listed, not matched)."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    name: str
    description: str = ""
    matched: str | None = None
    label: str = ""
    dimensions: list[str] = Field(default_factory=list)  # the group-by names it takes

    def render(self) -> str:
        label = f" ({self.label})" if self.label and self.label != self.name else ""
        about = f": {self.description.strip()}" if self.description.strip() else ""
        why = f"  -- {self.matched}" if self.matched else ""
        return f"{self.name}{label}{about}{why}"


class SavedMetricQuery(BaseModel):
    """A saved metric query (dbt's ``saved_queries:``): ``metrics_query``'s arguments by name,
    and why the question seems to ask for it (``matched``; None in ``metrics_list``)."""

    model_config = ConfigDict(defer_build=True)

    name: str
    label: str = ""
    description: str = ""
    metrics: list[str]
    dimensions: list[str] = Field(default_factory=list)
    where: list[str] = Field(default_factory=list)
    order_by: list[str] = Field(default_factory=list)
    limit: int | None = None
    matched: str | None = None

    @classmethod
    def of(cls, query: DbtSavedQuery, matched: str | None = None) -> SavedMetricQuery:
        return cls(name=query.name, label=query.label, description=query.description,
                   metrics=list(query.metrics), dimensions=list(query.group_by),
                   where=list(query.where), order_by=list(query.order_by), limit=query.limit,
                   matched=matched)

    def call(self) -> str:
        """The ``metrics_query`` arguments it stands for."""
        parts = [f"metrics={json.dumps(self.metrics)}"]
        parts += [f"{name}={json.dumps(value)}" for name, value in (
            ("dimensions", self.dimensions), ("where", self.where),
            ("order_by", self.order_by), ("limit", self.limit)) if value]
        return ", ".join(parts)

    def render(self) -> str:
        label = f" ({self.label})" if self.label and self.label != self.name else ""
        about = f": {self.description}" if self.description else ""
        why = f"  -- {self.matched}" if self.matched else ""
        return f"{self.name}{label}{about}{why}\n  metrics_query({self.call()})"


class UsedContext(BaseModel):
    """What a model was shown for an answer (its receipt): tables with reasons, value hints,
    examples, glossary entries and governed metrics."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    tables: list[KeptTable] = Field(default_factory=list)
    value_hints: list[ValueHint] = Field(default_factory=list)
    examples: list[ContextExample] = Field(default_factory=list)
    glossary: list[GlossaryEntry] = Field(default_factory=list)
    metrics: list[MetricHint] = Field(default_factory=list)
    saved_metric_queries: list[SavedMetricQuery] = Field(default_factory=list)


class PromptContext(BaseModel):
    """Everything the model is shown for one question, and why."""

    model_config = ConfigDict(defer_build=True)  # built on first use: not at start-up

    question: str
    db_id: str | None
    candidates: list[Candidate] = Field(default_factory=list)
    tables: list[KeptTable] = Field(default_factory=list)
    value_hints: list[ValueHint] = Field(default_factory=list)
    examples: list[ContextExample] = Field(default_factory=list)
    glossary: list[GlossaryEntry] = Field(default_factory=list)
    #: The database's governed metrics, those the question asks for first (``matched``).
    metrics: list[MetricHint] = Field(default_factory=list)
    #: The saved metric queries the question seems to ask for (``matched``), best first.
    saved_metric_queries: list[SavedMetricQuery] = Field(default_factory=list)
    schema_sql: str = ""
    schema_tokens: int = 0
    full_schema_tokens: int = 0
    #: The token budget the schema was chosen for (``schema_tokens`` of it are used).
    budget_tokens: int = 0
    #: Databases that fit the question about as well as the best (the best first); empty when
    #: one stands out. Shown to the catalog agent's model so it chooses with both in view.
    ambiguous_between: list[str] = Field(default_factory=list)

    def used(self) -> UsedContext:
        """The parts an answer's receipt keeps (not the schema text)."""
        return UsedContext(tables=self.tables, value_hints=self.value_hints,
                           examples=self.examples, glossary=self.glossary, metrics=self.metrics,
                           saved_metric_queries=self.saved_metric_queries)

    def glossary_lines(self) -> list[str]:
        """The glossary entries as a section (after a blank line); none without entries."""
        if not self.glossary:
            return []
        return ["", "Business terms the question uses:",
                *(f"- {entry.render()}" for entry in self.glossary)]

    @property
    def pruned(self) -> bool:
        return self.schema_tokens < self.full_schema_tokens

    def render(self) -> str:
        """The context as text for people and for MCP clients."""
        lines: list[str] = []
        if self.candidates and len(self.candidates) > 1:
            lines.append("Databases for this question (best first):")
            lines += [f"- {c.db_id} ({c.score:.2f}): {c.reason}" for c in self.candidates[:5]]
            if self.ambiguous_between:
                lines.append(f"The question fits {' and '.join(self.ambiguous_between)} about "
                             f"equally well: check which one holds what it asks about.")
            lines.append("")
        if self.db_id is None:
            return "\n".join(lines).rstrip() or "No database is configured."
        size = (f"pruned to {self.schema_tokens:,} of {self.full_schema_tokens:,} tokens, "
                f"{self.schema_tokens / max(self.budget_tokens, 1):.0%} of the "
                f"{self.budget_tokens:,}-token budget"
                if self.pruned else f"whole schema, {self.schema_tokens:,} tokens")
        if self.metrics:
            lines.append(f"Governed metrics of {self.db_id} (answer with metrics_query when "
                         f"one fits):")
            lines += [f"- {metric.render()}" for metric in self.metrics]
            lines.append("")
        if self.saved_metric_queries:
            lines.append("Saved metric queries the question seems to ask for (run one with "
                         "metrics_query and these arguments):")
            lines += [f"- {query.render()}" for query in self.saved_metric_queries]
            lines.append("")
        lines.append(f"Database {self.db_id}: {len(self.tables)} tables ({size})")
        lines += [f"- {t.name}: {t.reason}" for t in self.tables if t.reason != WHOLE_SCHEMA_FITS]
        rest = [t.name for t in self.tables if t.reason == WHOLE_SCHEMA_FITS]
        if rest:  # said once, not once per table
            lines.append(f"- {', '.join(rest)}: {WHOLE_SCHEMA_FITS}")
        if self.value_hints:
            lines += ["", "Values the question names:"]
            lines += [f"- {h.render()}" for h in self.value_hints]
        lines += self.glossary_lines()
        if self.examples:
            lines += ["", "Similar example queries:"]
            for example in self.examples:
                lines.append(f"- Q: {' '.join(example.question.split())}")
                lines += [f"  {line}" for line in example.sql.strip().splitlines()]
        lines += ["", self.schema_sql.rstrip()]
        return "\n".join(lines)


def ambiguous(candidates: list[Candidate]) -> list[str]:
    """The databases scoring within ``AMBIGUOUS_MARGIN`` of the best, when there are two or
    more of them (else none: one database stands out)."""
    if len(candidates) < 2 or candidates[0].score <= 0:
        return []
    close = [c.db_id for c in candidates
             if c.score >= candidates[0].score * (1 - AMBIGUOUS_MARGIN)]
    return close if len(close) > 1 else []
