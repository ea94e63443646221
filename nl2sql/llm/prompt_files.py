"""Prompts: markdown files under ``prompts/`` with ``{placeholders}``, filled strictly.

One mechanism for every feature (annotation, agents, evaluation). A prompt is named by its path
under ``prompts/`` without ``.md`` (``"annotation/table_descriptions"``, ``"nl2sql/
nl2sql_instructions"``). Filling is strict both ways: a placeholder without a value and a value
without a placeholder are errors, so a prompt and the code that fills it cannot drift apart
silently. Literal braces in a prompt are written doubled (``{{`` and ``}}``), as in
``str.format``.

Users add or override prompts without touching the package: ``find_prompt(name, user_dir)``
looks in ``user_dir`` (``{data_dir}/prompts``) first, e.g. ``nl2sql/db_specific/<db_id>.md``.
"""

from __future__ import annotations

import string
from pathlib import Path

from nl2sql.config.bundled import prompt_path, read_prompt

#: Every prompt file shipped with nl2sql (without ``.md``) and the values the code fills in.
PROMPT_FIELDS: dict[str, frozenset[str]] = {
    "annotation/database_description": frozenset(
        {"db_id", "db_type", "table_count", "tables", "samples"}),
    "annotation/table_descriptions": frozenset(
        {"db_id", "db_type", "table_name", "table_kind", "row_count", "columns", "foreign_keys",
         "samples", "other_tables", "task"}),
    "annotation/enum_classification": frozenset(
        {"db_id", "db_type", "table_name", "row_count", "columns", "candidates"}),
    "annotation/example_queries": frozenset(
        {"db_id", "db_type", "dialect", "count", "schema", "existing"}),
    "nl2sql/nl2sql_system_prompt": frozenset(
        {"db_id", "db_type", "dialect_guidance", "database_notes"}),
    "nl2sql/nl2sql_instructions": frozenset(
        {"metrics_section", "schema", "example_queries_md", "value_hints", "glossary",
         "dialect"}),
    "nl2sql/metrics": frozenset({"tool", "metrics"}),
    "nl2sql/selection_prompt": frozenset({"db_id", "question", "groups"}),
    "nl2sql/candidates_by_hand": frozenset({"db_id"}),
    "catalog/catalog_system_prompt": frozenset({"candidates"}),
}

#: Folders of prompts that are inserted as they are (no placeholders): one file per backend
#: type (``db_type/<type>.md``) and per database (``db_specific/<db_id>.md``, usually the
#: user's own under ``{data_dir}/prompts/``), and the SQL candidates' generator styles
#: (``generators/<style>.md``).
VERBATIM_FOLDERS = ("nl2sql/db_type", "nl2sql/db_specific", "nl2sql/generators")


class PromptTemplateError(ValueError):
    """A prompt's placeholders and the values given to fill it do not match (a developer bug)."""


def prompt_fields(template: str) -> set[str]:
    """The placeholder names in ``template`` (doubled braces are literal text, not fields)."""
    fields: set[str] = set()
    for _literal, field, spec, conversion in string.Formatter().parse(template):
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            raise PromptTemplateError(f"placeholder {{{field}}} must be a plain name; write "
                                      f"literal braces as {{{{ and }}}}")
        fields.add(field)
    return fields


def fill_prompt(template: str, values: dict[str, object], *, name: str = "prompt") -> str:
    """Fill every placeholder of ``template``; raise when a placeholder or a value is left over."""
    fields = prompt_fields(template)
    missing = sorted(fields - values.keys())
    unused = sorted(values.keys() - fields)
    if missing or unused:
        raise PromptTemplateError(
            f"{name}: placeholders without a value: {missing or 'none'}; values without a "
            f"placeholder: {unused or 'none'}")
    return template.format(**{key: str(value) for key, value in values.items()})


def load_prompt(name: str) -> str:
    """The raw text of the shipped ``prompts/<name>.md``."""
    return read_prompt(f"{name}.md")


def render_prompt(name: str, **values: object) -> str:
    """Load the shipped ``prompts/<name>.md`` and fill it strictly with ``values``."""
    return fill_prompt(load_prompt(name), values, name=f"{name}.md")


def find_prompt(name: str, user_dir: Path | None = None) -> str | None:
    """The text of ``<name>.md`` from ``user_dir`` when it is there, else the shipped one, or
    None when neither exists (optional prompts such as a database-specific note)."""
    for path in ([user_dir / f"{name}.md"] if user_dir else []) + [prompt_path(f"{name}.md")]:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    return None
