"""Docs move with code: every console script, command-line option, MCP tool, dbs.yaml key and
``NL2SQL_`` environment variable is documented in docs/ (in the style of sqlite-utils'
test_docs.py). Each list is read from the code itself, so a new option fails here until it is
written down; the failure says what to document and on which page."""

from __future__ import annotations

import argparse
import importlib
import re
import tomllib
from pathlib import Path

import pytest

from nl2sql.cli.start import COMMANDS
from nl2sql.config.agent_settings import AgentSettings
from nl2sql.config.dbs_yaml import DbsDocument
from nl2sql.config.registry import DbConnectionConfig
from nl2sql.operations.registry import OPERATIONS

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
SCRIPTS: dict[str, str] = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
#: The page that documents each command (its options may also sit on a feature page).
COMMAND_PAGE = {"annotate-schema": "annotation.md", "nl2sql-mcp": "mcp.md",
                "nl2sql-ask": "python-and-cli.md", "nl2sql-eval": "evaluation.md",
                "nl2sql-secrets": "configuration.md", "nl2sql-audit": "team.md",
                "nl2sql-web": "web.md"}
#: dbs.yaml fields of a database that are not keys a user writes.
NOT_DBS_YAML_KEYS = {"db_id", "is_bundled_sample", "ssl_options"}  # ssl_options: the ssl_* keys


def _docs_text() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in sorted(DOCS.glob("*.md")))


def _mentions(text: str, word: str) -> bool:
    """``word`` appears as a whole token (``--max-rows`` is not ``--max-rows-x``)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _parser(script: str) -> argparse.ArgumentParser:
    module = importlib.import_module(COMMANDS[script])
    assert hasattr(module, "build_parser"), (
        f"{module.__name__} has no build_parser(); give it one returning the command's "
        f"ArgumentParser so tests/test_docs.py can check its options are documented.")
    return module.build_parser()


def _options(parser: argparse.ArgumentParser, prefix: str) -> list[tuple[str, str]]:
    """(where, option) for every long option of the parser and its subcommands."""
    found: list[tuple[str, str]] = []
    for action in parser._actions:  # argparse keeps no public list of a parser's options
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((prefix, name))
                found.extend(_options(sub, f"{prefix} {name}"))
            continue
        found.extend((prefix, option) for option in action.option_strings
                     if option.startswith("--") and option not in {"--help", "--version"})
    return found


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_console_script_is_documented(script: str) -> None:
    page = COMMAND_PAGE.get(script, "python-and-cli.md")
    assert _mentions(_docs_text(), script), (
        f"The command `{script}` (pyproject.toml [project.scripts]) is not documented in docs/: "
        f"describe it in docs/{page} and list it in the commands table of "
        f"docs/python-and-cli.md.")


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_every_cli_option_is_documented(script: str) -> None:
    docs = _docs_text()
    page = COMMAND_PAGE.get(script, "python-and-cli.md")
    missing = [f"{where} {option}" for where, option in _options(_parser(script), script)
               if not _mentions(docs, option)]
    assert not missing, (
        f"Undocumented command-line options: {', '.join(missing)}. Document each in "
        f"docs/{page} (or on the feature page that describes it), written as `{missing[0].split()[-1]}`.")


def test_the_pages_manual_names_its_options_and_environment() -> None:
    """docs/web.md is nl2sql-web's whole manual: each of its options and each environment
    variable the command and its common options read (their ``ENV_`` names) are on that page."""
    modules = [importlib.import_module(name) for name in
               ("nl2sql.cli.web", "nl2sql.cli.options", "nl2sql.config.memory_cap")]
    variables = {value for module in modules for name, value in vars(module).items()
                 if name.startswith("ENV_")}
    page = _page("web.md")
    missing = [option for _, option in _options(_parser("nl2sql-web"), "nl2sql-web")
               if not _mentions(page, option)]
    missing += sorted(name for name in variables | {"XDG_DATA_HOME"} if f"`{name}`" not in page)
    assert variables and not missing, f"docs/web.md does not name: {', '.join(missing)}"


def test_every_mcp_tool_is_in_the_tools_table() -> None:
    """Each tool has a row ``| `name` | `param`, `optional?` | ... |`` in docs/mcp.md."""
    rows = {match.group(1): line for line in _page("mcp.md").splitlines()
            if (match := re.match(r"\|\s*`(\w+)`\s*\|", line))}
    problems = []
    for operation in OPERATIONS:
        row = rows.get(operation.name)
        if row is None:
            problems.append(f"add a row for the tool `{operation.name}` to the tools table of "
                            f"docs/mcp.md (\"Tools, resources and the prompt\")")
            continue
        for parameter in operation.parameters():
            optional = parameter.default is not parameter.empty
            spelled = f"`{parameter.name}{'?' if optional else ''}`"
            if spelled not in row:
                problems.append(f"write {spelled} in the parameters of `{operation.name}`'s row "
                                f"in the tools table of docs/mcp.md")
    assert not problems, "; ".join(problems)


def _dbs_yaml_keys() -> dict[str, list[str]]:
    database = []
    for name, field in DbConnectionConfig.model_fields.items():
        if name not in NOT_DBS_YAML_KEYS:
            database.append(field.alias or name)
    return {"a database's keys": [*database, "url", "ssl_*"],
            "top-level keys": sorted(DbsDocument.model_fields),
            "the agent: block": list(AgentSettings.model_fields)}


def test_every_dbs_yaml_key_is_documented() -> None:
    page = _page("configuration.md")
    missing = [f"{key} ({where})" for where, keys in _dbs_yaml_keys().items() for key in keys
               if f"`{key}`" not in page and f"`{key}:" not in page and f" {key}:" not in page]
    assert not missing, (
        f"dbs.yaml keys missing from docs/configuration.md: {', '.join(missing)}. Add each to "
        f"its table there (\"Keys of one database\", \"Top-level keys\" or the `agent:` block), "
        f"written as `key`.")


def _environment_variables() -> set[str]:
    names: set[str] = set()
    for path in (REPO / "nl2sql").rglob("*.py"):
        names.update(re.findall(r"\bNL2SQL_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8")))
    return names


def test_every_environment_variable_is_documented() -> None:
    table = _page("configuration.md").split("## Environment variables", 1)[-1]
    missing = sorted(name for name in _environment_variables() if f"`{name}`" not in table)
    assert not missing, (
        f"Environment variables read in nl2sql/ but not in the table of docs/configuration.md, "
        f"\"Environment variables\": {', '.join(missing)}. Add a row `| `NAME` | meaning | "
        f"default |` for each.")


def test_no_documented_environment_variable_is_stale() -> None:
    section = _page("configuration.md").split("## Environment variables", 1)[-1].split("\n## ")[0]
    rows = "\n".join(line for line in section.splitlines() if line.startswith("|"))
    documented = set(re.findall(r"`(NL2SQL_[A-Z0-9_]+)`", rows))
    stale = sorted(documented - _environment_variables())
    assert not stale, (f"docs/configuration.md documents {', '.join(stale)}, which nothing in "
                       f"nl2sql/ reads: remove the row or restore the variable.")


def test_user_docs_name_no_issue_numbers() -> None:
    for page in [REPO / "README.md", *sorted(DOCS.glob("*.md"))]:
        hits = re.findall(r"\bissues? \d+\b", page.read_text(encoding="utf-8"), re.IGNORECASE)
        assert not hits, f"{page.relative_to(REPO)} mentions {hits[0]!r}: say what changed instead."


def test_readme_stays_a_front_door() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 300, f"README.md has {lines} lines; move detail to a page in docs/ (<= 300)."


def _code_block(page: str, heading: str) -> str:
    section = _page(page).split(f"## {heading}\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_annotating_from_python_example_runs_its_model(tmp_path: Path, monkeypatch,  # noqa: ANN001
                                                       capsys, caplog) -> None:
    """docs/annotation.md's example, with pydantic-ai's offline model for the real one: the
    LLM steps run (they were skipped silently when the model went to the registry only)."""
    monkeypatch.chdir(tmp_path)
    code = _code_block("annotation.md", "Annotating from Python")
    assert '"openai:gpt-4o-mini"' in code
    scope: dict[str, object] = {}
    exec(code.replace('"openai:gpt-4o-mini"', '"test"'), scope)  # noqa: S102 - our own docs
    result = scope["result"]
    assert result.llm_notice is None and result.run.model == "test"  # type: ignore[attr-defined]
    assert result.run.steps["table_descriptions"].requests == 7  # type: ignore[attr-defined]
    assert capsys.readouterr().out == "annotated by test\n"

    from nl2sql.annotation.pipeline import annotate_database, default_llm_steps
    configs = scope["configs"]
    annotate_database(configs.get("bookstore"), configs.data_dir,  # type: ignore[attr-defined]
                      llm_steps=default_llm_steps())
    assert "LLM steps skipped" in caplog.text and "AnnotateOptions(model=...)" in caplog.text


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as -."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_links_between_pages_resolve() -> None:
    """Every relative link of the README and docs/ names a file that exists, and a heading of
    it when it has an anchor."""
    broken = []
    for page in [REPO / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path) if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "Broken links: " + "; ".join(broken)
