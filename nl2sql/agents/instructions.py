"""The text the agents' models are given, from the prompt files and one ``PromptContext``.

The NL2SQL agent never assembles schema text itself: ``nl2sql.context()`` decides which tables,
values and examples the model sees (``PromptContext``), and this module only fills the prompt
files with it. Backend guidance is ``prompts/nl2sql/db_type/<type>.md``; a database's own notes
are ``nl2sql/db_specific/<db_id>.md``, looked up first in ``{data_dir}/prompts/`` so users add
theirs without touching the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nl2sql.context_engine.prompt_context import ambiguous
from nl2sql.llm.prompt_files import find_prompt, render_prompt
from nl2sql.schema.words import terms
from nl2sql.semantic.names import METRIC_TIME

if TYPE_CHECKING:
    from nl2sql.context_engine import Candidate, PromptContext


def user_prompt_dir(data_dir: Path) -> Path:
    return data_dir / "prompts"


def nl2sql_instructions(context: PromptContext, *, db_type: str, dialect: str,
                        data_dir: Path, metrics_tool: str = "query_metrics") -> str:
    """System prompt and schema instructions for one question on ``context.db_id``; with
    governed metrics, a section saying to answer with ``metrics_tool`` when one fits."""
    user_dir = user_prompt_dir(data_dir)
    notes = find_prompt(f"nl2sql/db_specific/{context.db_id}", user_dir)
    system = render_prompt(
        "nl2sql/nl2sql_system_prompt", db_id=context.db_id, db_type=db_type,
        dialect_guidance=(find_prompt(f"nl2sql/db_type/{db_type}", user_dir) or "").strip(),
        database_notes=f"## Notes on {context.db_id}\n\n{notes.strip()}" if notes else "")
    hints = "\n".join(f"- {hint.render()}" for hint in context.value_hints) or "(none found)"
    examples = "\n\n".join(f"Question: {example.question}\n```sql\n{example.sql.strip()}\n```"
                           for example in context.examples) or "(none)"
    glossary = "\n".join(f"- {entry.render()}" for entry in context.glossary) or "(none)"
    metrics = render_prompt("nl2sql/metrics", tool=metrics_tool,
                            metrics=metrics_lines(context)).strip() + "\n\n" \
        if context.metrics else ""
    schema = render_prompt("nl2sql/nl2sql_instructions", schema=context.schema_sql.strip(),
                           value_hints=hints, glossary=glossary, example_queries_md=examples,
                           dialect=dialect, metrics_section=metrics)
    return f"{system.strip()}\n\n{schema.strip()}\n"


#: Group-by names shown per matched metric (those naming the question's words first).
MAX_GROUP_BYS = 40


def metrics_lines(context: PromptContext) -> str:
    """The metrics for the prompt: those the question seems to ask for with the group-bys they
    take (at most ``MAX_GROUP_BYS``: ``metric_time``, then those sharing a word with the
    question, then the rest), then the names of the others; then the saved metric queries the
    question seems to ask for, as ready arguments."""
    words = set(terms(context.question))
    lines = []
    for metric in context.metrics:
        lines.append(f"- {metric.render()}")
        if not metric.matched:
            continue
        names = sorted(metric.dimensions, key=lambda name: (name != METRIC_TIME,
                                                            not words & set(terms(name))))
        more = len(names) - MAX_GROUP_BYS
        shown = ", ".join(names[:MAX_GROUP_BYS]) or "(nothing)"
        lines.append(f"  group by: {shown}" + (f" (+{more} more: metrics_list shows them)"
                                               if more > 0 else ""))
    if context.saved_metric_queries:
        lines += ["", "Saved queries the team defined that the question seems to ask for "
                      "(use their arguments, changing only what the question asks):"]
        lines += [f"- {query.render()}" for query in context.saved_metric_queries]
    return "\n".join(lines)


def catalog_instructions(candidates: list[Candidate], descriptions: dict[str, str]) -> str:
    lines = []
    for candidate in candidates:
        about = descriptions.get(candidate.db_id)
        lines.append(f"- {candidate.db_id} (score {candidate.score:.2f}): {candidate.reason}"
                     + (f"\n  holds: {about}" if about else ""))
    close = ambiguous(candidates)
    if close:
        lines.append(f"\n{' and '.join(close)} scored about the same: look at what each holds "
                     f"(db_show_schema) before you choose.")
    return render_prompt("catalog/catalog_system_prompt", candidates="\n".join(lines))
