"""Every console script in pyproject.toml answers --help with an Example: block."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
SCRIPTS = tomllib.loads(PYPROJECT.read_text())["project"]["scripts"]


def test_every_documented_command_is_registered() -> None:
    readme = (PYPROJECT.parent / "README.md").read_text()
    for name in SCRIPTS:
        assert f"`{name}" in readme, f"{name} is not documented in the README"


def _command(name: str) -> str:
    executable = Path(sys.executable).parent / name
    command = str(executable) if executable.exists() else shutil.which(name)
    assert command, f"{name} is not installed; run `pip install -e .`"
    return command


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_console_script_help_has_an_example(name: str) -> None:
    result = subprocess.run([_command(name), "--help"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Example:" in result.stdout
    assert result.stderr == ""


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_usage_error_is_one_line_pointing_to_help(name: str) -> None:
    result = subprocess.run([_command(name), "--no-such-option"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()  # not argparse's usage block
    assert line.startswith(f"{name}: error: ") and line.endswith(f"(see {name} --help)")


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_console_script_has_version(name: str) -> None:
    from nl2sql import __version__

    result = subprocess.run([_command(name), "--version"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{name} {__version__}"


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_help_states_the_data_dir_rule(name: str) -> None:
    """Where the cache goes without a dbs.yaml (the per-user dir), not only the variable."""
    text = " ".join(subprocess.run([_command(name), "--help"], capture_output=True, text=True,
                                   timeout=60).stdout.split())
    if "--data-dir" not in text:
        return  # nl2sql-secrets reads no cache
    assert "data/ beside" in text and "with no dbs.yaml" in text, text
    assert "~/.local/share/nl2sql" in text, text


def test_the_shared_options_are_the_ones_the_docs_say() -> None:
    """docs/python-and-cli.md lists the options every command shares and the exceptions
    (annotate-schema --workspace was documented and unknown)."""
    import importlib

    shared = {"--config", "--data-dir", "--workspace", "--verbose"}
    expected = {"annotate": shared - {"--workspace"}, "ask": shared, "eval": shared,
                "mcp": shared, "secrets": {"--config", "--verbose"}}
    for module, options in expected.items():
        parser = importlib.import_module(f"nl2sql.cli.{module}").build_parser()
        found = {s for action in parser._actions for s in action.option_strings}
        assert found & shared == options, module
    page = (Path(__file__).resolve().parent.parent / "docs" / "python-and-cli.md").read_text()
    assert "`nl2sql-secrets` takes `--config` and `--verbose` only" in page
    assert "`annotate-schema` all but `--workspace`" in page


def test_ask_commands_without_a_question_never_import_pydantic_ai(tmp_path: Path) -> None:
    """pydantic-ai (0.4-1 s to import) is for asking: ``nl2sql-ask --help`` and the verified
    answers' commands do without it (--help 0.54 -> 0.14 s, --list-verified 0.66 -> 0.27 s)."""
    script = ("import contextlib, sys\n"
              "from nl2sql.cli.ask import main\n"
              "with contextlib.redirect_stdout(sys.stderr), contextlib.suppress(SystemExit):\n"
              "    main(['--help'])\n"
              "with contextlib.redirect_stdout(sys.stderr):\n"
              "    codes = [main(['--list-verified']), main(['--list-proposed'])]\n"
              "print(codes, 'pydantic_ai' in sys.modules)")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0, 0] False", done.stderr


@pytest.mark.parametrize("module", ["eval", "mcp", "web"])
def test_help_and_usage_errors_import_no_server_or_scorer(module: str) -> None:
    """``--help`` and a mistyped option do not wait for what only a run needs: the MCP SDK,
    the web stack, the scorer's sqlglot, pydantic-ai (nl2sql-web --help 1.24 -> 0.19 s,
    nl2sql-mcp 0.68 -> 0.22 s, nl2sql-eval 0.80 -> 0.21 s); the run itself still imports them."""
    heavy = ("mcp", "starlette", "uvicorn", "sqlglot", "pydantic_ai")
    script = ("import contextlib, sys\n"
              f"from nl2sql.cli.{module} import main\n"
              "with contextlib.redirect_stdout(sys.stderr), contextlib.redirect_stderr(None):\n"
              "    codes = [main(['--help']), main(['--no-such-option'])]\n"
              f"print(codes, [m for m in {heavy!r} if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0, 2] []", done.stderr
