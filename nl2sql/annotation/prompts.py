"""Annotation prompts: markdown files in ``prompts/annotation/`` with ``{placeholders}``.

Filling is strict both ways: a placeholder without a value and a value without a placeholder are
errors, so a prompt and the code that fills it cannot drift apart silently. Literal braces in a
prompt are written doubled (``{{`` and ``}}``), as in ``str.format``.
"""

from __future__ import annotations

import string

from nl2sql.resources import read_prompt

PROMPT_FOLDER = "annotation"

#: Every annotation prompt file (without ``.md``) and the values the code fills into it.
PROMPT_FIELDS: dict[str, frozenset[str]] = {
    "database_description": frozenset({"db_id", "db_type", "table_count", "tables", "samples"}),
    "table_descriptions": frozenset({"db_id", "db_type", "table_name", "table_kind", "row_count",
                                     "columns", "foreign_keys", "samples", "other_tables",
                                     "task"}),
    "enum_classification": frozenset({"db_id", "db_type", "table_name", "row_count",
                                      "columns", "candidates"}),
    "example_queries": frozenset({"db_id", "db_type", "dialect", "count", "schema",
                                  "existing"}),
}


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
    """The raw text of ``prompts/annotation/<name>.md``."""
    return read_prompt(f"{PROMPT_FOLDER}/{name}.md")


def render_prompt(name: str, **values: object) -> str:
    """Load ``prompts/annotation/<name>.md`` and fill it strictly with ``values``."""
    return fill_prompt(load_prompt(name), values, name=f"{PROMPT_FOLDER}/{name}.md")
