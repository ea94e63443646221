"""Prompt files: every file is non-empty, its placeholders match exactly the values
the code fills in, and the strict filler refuses a missing or an unused value."""

from __future__ import annotations

import pytest

from nl2sql.llm.prompt_files import (PROMPT_FIELDS, VERBATIM_FOLDERS, PromptTemplateError, fill_prompt,
                            find_prompt, load_prompt, prompt_fields, render_prompt)
from nl2sql.config.bundled import prompt_path


def _on_disk() -> set[str]:
    root = prompt_path("x.md").parent
    return {path.relative_to(root).with_suffix("").as_posix() for path in root.rglob("*.md")}


def test_every_prompt_file_is_registered() -> None:
    filled = {name for name in _on_disk() if not name.startswith(VERBATIM_FOLDERS)}
    assert filled == set(PROMPT_FIELDS), "a prompt file without a test, or a test without a file"


def test_verbatim_prompts_have_no_placeholders_and_every_backend_has_one() -> None:
    verbatim = {name for name in _on_disk() if name.startswith(VERBATIM_FOLDERS)}
    assert {"nl2sql/db_type/sqlite", "nl2sql/db_type/postgres", "nl2sql/db_type/spark"} <= verbatim
    for name in verbatim:
        text = load_prompt(name)
        assert len(text.strip()) > 150 and prompt_fields(text) == set(), name


def test_a_users_prompt_is_found_before_the_shipped_one(tmp_path) -> None:  # noqa: ANN001
    assert find_prompt("nl2sql/db_specific/nope", tmp_path) is None
    assert "SQLite" in find_prompt("nl2sql/db_type/sqlite", tmp_path)
    (tmp_path / "nl2sql" / "db_type").mkdir(parents=True)
    (tmp_path / "nl2sql" / "db_type" / "sqlite.md").write_text("my own rules")
    assert find_prompt("nl2sql/db_type/sqlite", tmp_path) == "my own rules"


@pytest.mark.parametrize("name", sorted(PROMPT_FIELDS))
def test_prompt_placeholders_match_the_values_the_code_gives(name: str) -> None:
    text = load_prompt(name)
    assert len(text.strip()) > 150, f"{name}.md is empty or a stub"
    assert prompt_fields(text) == PROMPT_FIELDS[name]
    filled = render_prompt(name, **{field: f"<{field}>" for field in PROMPT_FIELDS[name]})
    for field in PROMPT_FIELDS[name]:
        assert f"<{field}>" in filled


@pytest.mark.parametrize("name", sorted(name for name, fields in PROMPT_FIELDS.items() if fields))
def test_render_refuses_a_missing_value(name: str) -> None:
    values = {field: "x" for field in PROMPT_FIELDS[name]}
    values.pop(sorted(values)[0])
    with pytest.raises(PromptTemplateError, match="placeholders without a value"):
        render_prompt(name, **values)


def test_fill_reports_both_directions_of_mismatch() -> None:
    with pytest.raises(PromptTemplateError) as info:
        fill_prompt("Hello {name}, table {table}", {"name": "a", "extra": "b"})
    assert "['table']" in str(info.value) and "['extra']" in str(info.value)


def test_doubled_braces_are_literal_and_values_are_not_reformatted() -> None:
    template = "JSON like {{\"a\": 1}} for {db_id}"
    assert prompt_fields(template) == {"db_id"}
    # A value containing braces (sample data, SQL) is inserted verbatim, not parsed again.
    assert fill_prompt(template, {"db_id": "{x}"}) == 'JSON like {"a": 1} for {x}'


@pytest.mark.parametrize("template", ["{a.b}", "{0}", "{a!r}", "{a:>10}", "{}"])
def test_only_plain_placeholder_names_are_allowed(template: str) -> None:
    with pytest.raises(PromptTemplateError):
        prompt_fields(template)
