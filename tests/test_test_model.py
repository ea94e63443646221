"""pydantic-ai's ``test`` model (``TestModel``) is a developer tool: annotating with it never
changes what an MCP client, an agent or a later run is shown (its "a" placeholders stay in the
cache only), and ``nl2sql-ask --model test`` says what it is in one line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import nl2sql
from nl2sql.schema.cache import load_db_info
from nl2sql.cli.annotate import main as annotate
from nl2sql.operations import OpsContext, db_show_schema_op

PLACEHOLDER = re.compile(r"--\s+a$|'a'", re.MULTILINE)  # TestModel writes "a" everywhere


@pytest.fixture
def test_annotated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    assert annotate(["bookstore", "--model", "test", "--data-dir", "data"]) == 0
    info = load_db_info(tmp_path / "data", "bookstore")
    assert info.table("books").description == "a"  # the cache keeps what the test model wrote
    assert info.table("books").description_model == "test"
    return tmp_path / "data"


def test_clients_agents_and_later_runs_never_see_placeholders(
        test_annotated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ops = OpsContext.load(None, data_dir=test_annotated)
    schema = db_show_schema_op(ops, "bookstore").render()
    assert "CREATE TABLE books" in schema and not PLACEHOLDER.search(schema), schema[:2000]
    context = nl2sql.context("How many books per genre?", db_id="bookstore", config=ops)
    assert not PLACEHOLDER.search(context.schema_sql)
    ops.close()
    capsys.readouterr()
    assert annotate(["bookstore", "--output-schema", "--data-dir", str(test_annotated)]) == 0
    later = capsys.readouterr().out
    assert "CREATE TABLE books" in later and not PLACEHOLDER.search(later)


def test_nl2sql_ask_with_the_test_model_says_what_it_is(tmp_path: Path) -> None:
    done = subprocess.run([str(Path(sys.executable).parent / "nl2sql-ask"), "How many books?",
                           "--model", "test"], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "TestModel" in done.stderr
    assert "Unknown database" not in done.stderr
