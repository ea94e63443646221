"""The console scripts end their process without the interpreter's teardown
(``nl2sql.cli.errors.exit_process``): what a command prints and records is all there when it
exits, its exit code is its own, and a reader that goes away early is no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from stub_openai import MODEL_STRING, StubOpenAI, tool_call

from nl2sql.cli.start import COMMANDS
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.schema.cache import load_db_info
from nl2sql.store.store import Store

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent


def _env(tmp_path: Path) -> dict[str, str]:
    """A command's environment with its own data dir; stdout block-buffered to a pipe, as
    Python has it unless PYTHONUNBUFFERED is set."""
    env = {**os.environ, "NL2SQL_DATA_DIR": str(tmp_path / "data"),
           "NL2SQL_WORKSPACE": str(tmp_path / "ws"), "NL2SQL_CONFIG": ""}
    env.pop("PYTHONUNBUFFERED", None)
    return env


def test_what_a_command_prints_to_a_pipe_is_all_there(tmp_path: Path) -> None:
    """The summary is printed to a pipe (block-buffered, not flushed by the command): the exit
    writes it out."""
    done = subprocess.run([str(BIN / "annotate-schema"), "bookstore"], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("bookstore: ") and done.stdout.endswith(" compile and run\n"), \
        done.stdout
    assert load_db_info(tmp_path / "data", "bookstore").tables


def test_an_error_keeps_its_exit_code_and_line(tmp_path: Path) -> None:
    done = subprocess.run([str(BIN / "annotate-schema"), "no_such_db"], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr


def test_a_reader_that_goes_away_is_no_traceback(tmp_path: Path) -> None:
    done = subprocess.run(f"'{BIN / 'annotate-schema'}' bookstore --output-schema | head -c 10",
                          shell=True, env=_env(tmp_path), capture_output=True, text=True,
                          timeout=120)
    assert len(done.stdout) == 10
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_the_audit_record_of_an_ask_is_written_before_the_process_ends(
        tmp_path: Path, stub_openai: StubOpenAI) -> None:
    """Records wait a little before they are written (``LINGER_SECONDS``); the exit's flush
    writes them at once, so the command's own record is in the log when it has exited."""
    stub_openai.add(tool_call("final_result", sql="SELECT count(*) AS books FROM books",
                              explanation="Counts the books."))
    env = _env(tmp_path)
    subprocess.run([str(BIN / "annotate-schema"), "bookstore"], env=env, check=True,
                   capture_output=True, timeout=120)
    done = subprocess.run([str(BIN / "nl2sql-ask"), "How many books are there?", "--db",
                           "bookstore", "--model", MODEL_STRING, "--no-reuse"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    registry = DbConnectionConfigs.load(None, data_dir=tmp_path / "data")
    records = Store(registry.data_dir).audit.read()
    assert [r.tool for r in records if r.tool == "ask"] == ["ask"], records
    # and nl2sql-audit prints them (print() to a pipe: written out by the exit)
    listed = subprocess.run([str(BIN / "nl2sql-audit"), "--json"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert [json.loads(line)["tool"] for line in listed.stdout.splitlines()].count("ask") == 1


@pytest.mark.parametrize("script", sorted(COMMANDS))
def test_each_console_script_imports_its_command_with_the_collector_paused_then_frozen(
        script: str) -> None:
    """Every console script of pyproject.toml is ``nl2sql.cli.start``'s: its command's imports
    run without automatic collections, what they made is frozen out of later ones, and the
    collector is back on when the command runs."""
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts[script] == f"nl2sql.cli.start:{script.replace('-', '_')}"
    assert set(scripts) == set(COMMANDS)
    probe = f"""
import gc
from nl2sql.cli import start
module = {COMMANDS[script]!r}
importing, during_import = [True], []  # the collections while the command is imported
gc.callbacks.append(lambda phase, info: during_import.append(phase) if importing else None)
imported = start.imported({script!r})
importing.clear()
print(imported.__name__ == module, gc.isenabled(), gc.get_freeze_count() > 10_000,
      len(during_import))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split("\n")[-2] == "True True True 0", done.stdout
