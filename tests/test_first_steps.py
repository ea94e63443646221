"""The README's first steps, as a newcomer runs them: ``make run`` (annotate the bundled sample
with no configuration), then the Claude Code command (``nl2sql-mcp`` started by a client, with
no environment, in another folder), then copying ``dbs.yaml.example`` and annotating. The
client here is the MCP SDK's stdio client: the same subprocess and protocol Claude Code uses."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _clean_env(tmp_path: Path) -> dict[str, str]:
    """What a client passes: no NL2SQL_* settings; HOME and XDG_DATA_HOME in tmp_path."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("NL2SQL_")}
    env.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "home" / ".local/share"))
    return env


def _make_run(folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """What ``make run`` runs (Makefile: ``annotate-schema bookstore --output-schema``)."""
    return subprocess.run([str(BIN / "annotate-schema"), "bookstore", "--output-schema"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120,
                          check=True)


async def _db_list_and_query(command: list[str], cwd: Path, env: dict[str, str],
                             errlog: Path) -> tuple[str, str, str]:
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                listing = await session.call_tool("db_list", {})
                query = await session.call_tool("db_execute_sql", {
                    "db_id": "bookstore", "query": "SELECT count(*) AS books FROM books"})
    assert not listing.is_error and not query.is_error, query.content[0].text
    return init.instructions or "", listing.content[0].text, query.content[0].text


def _makefile_run_command() -> str:
    lines = (REPO / "Makefile").read_text().splitlines()
    target = next(i for i, line in enumerate(lines) if line.startswith("run: "))
    return lines[target + 1].strip()


async def test_make_run_then_the_readme_claude_code_command(tmp_path: Path) -> None:
    assert _makefile_run_command() == "$(BIN)/annotate-schema bookstore --output-schema"
    readme = (REPO / "README.md").read_text()
    assert "claude mcp add nl2sql -- $PWD/.venv/bin/nl2sql-mcp" in readme
    env = _clean_env(tmp_path)
    clone, project = tmp_path / "nl2sql", tmp_path / "my-project"
    clone.mkdir(), project.mkdir()
    run = _make_run(clone, env)
    assert "CREATE TABLE books" in run.stdout and "per-user data dir" in run.stderr

    # Claude Code starts the command with no environment of ours, in the user's project folder.
    instructions, listing, query = await _db_list_and_query(
        [str(BIN / "nl2sql-mcp")], project, env, tmp_path / "server.stderr")
    assert ("- bookstore (sqlite) — Bundled sample: a small bookstore (authors, books, customers, "
            "orders).\n  6 tables, 1 view; structure only") in listing  # the cache make run built
    assert "db_search_schema" in instructions
    assert "1 row x 1 column saved to" in query and "| 200 |" in query
    # Nothing left in the user's folders: cache and results sit in the per-user data dir.
    assert list(project.iterdir()) == [] and sorted(p.name for p in clone.iterdir()) == []
    per_user = tmp_path / "home" / ".local/share" / "nl2sql"
    assert len(list((per_user / "workspace").glob("*.csv"))) == 1
    stderr = (tmp_path / "server.stderr").read_text()
    assert "no dbs.yaml in" in stderr and str(per_user / "workspace") in stderr


async def test_copying_dbs_yaml_example_then_annotate_all(tmp_path: Path) -> None:
    """The README's "point it at your own database": cp, annotate-schema --all, claude mcp add
    with NL2SQL_CONFIG; the bookstore is served with a cache again."""
    env = _clean_env(tmp_path)
    clone = tmp_path / "nl2sql"
    clone.mkdir()
    _make_run(clone, env)
    shutil.copyfile(REPO / "dbs.yaml.example", clone / "dbs.yaml")
    readme = (REPO / "README.md").read_text()
    assert "cp dbs.yaml.example dbs.yaml" in readme and "annotate-schema --all" in readme
    subprocess.run([str(BIN / "annotate-schema"), "--all"], cwd=clone, env=env,
                   capture_output=True, text=True, timeout=120, check=True)
    _, listing, _ = await _db_list_and_query(
        [str(BIN / "nl2sql-mcp")], tmp_path, {**env, "NL2SQL_CONFIG": str(clone / "dbs.yaml")},
        tmp_path / "server.stderr")
    assert "6 tables, 1 view; structure only" in listing
    assert (clone / "data" / "database" / "bookstore" / "bookstore.db_info.json").is_file()
