"""``annotate-schema`` with the LLM steps: NL2SQL_MODEL=test on Chinook (SQLite, Postgres),
the usage summary, 0 requests on a re-run, --check drift exit codes, the LLM flags and
provider setup errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SampleDb, add_column, pg_execute, write_dbs_yaml
from packages import hide_package
from nl2sql.schema.cache import load_db_info
from nl2sql.cli.annotate import main


@pytest.fixture
def config_file(chinook: SampleDb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_dbs_yaml(tmp_path, [chinook.config])


def _usage(out: str) -> dict[str, list[int]]:
    """step -> [requests, input tokens, output tokens] from the summary table."""
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[1].isdigit():
            rows[parts[0]] = [int(p) for p in parts[1:]]
    return rows



def test_test_model_end_to_end_rerun_and_check(chinook: SampleDb, config_file: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NL2SQL_MODEL", "test")
    assert main(["chinook"]) == 0
    out = capsys.readouterr().out
    usage = _usage(out)
    assert "LLM usage (model test):" in out
    assert usage["table_descriptions"][0] == 11 and usage["database_description"][0] == 1
    assert usage["enum_classification"][0] >= 1 and usage["example_queries"][0] >= 1
    assert usage["total"][0] == sum(row[0] for step, row in usage.items() if step != "total")
    data_dir = config_file.parent / "data"
    info = load_db_info(data_dir, "chinook")
    assert all(t.description and all(c.description for c in t.columns) for t in info.tables)
    assert [c for t in info.tables for c in t.columns if c.enum_decision == "llm"]
    assert info.annotation_runs[-1].steps["table_descriptions"].requests == 11

    assert main(["chinook"]) == 0
    assert _usage(capsys.readouterr().out)["total"] == [0, 0, 0]

    assert main(["chinook", "--check"]) == 0
    assert "no drift" in capsys.readouterr().out
    add_column(chinook, chinook.table("album"), "label")
    assert main(["chinook", "--check"]) == 1
    out = capsys.readouterr().out
    assert f"~ table {chinook.table('album')}" in out and "+ column label" in out
    assert load_db_info(data_dir, "chinook").table(chinook.table("album")).column("label") is None

    assert main(["chinook"]) == 0
    usage = _usage(capsys.readouterr().out)
    assert usage["table_descriptions"][0] == 1 and usage["database_description"][0] == 0
    # TestModel's examples never pass, so a changed schema asks for them again (1 + 3 retries).
    assert usage["example_queries"][0] == 4 and usage["total"][0] == 5


def test_without_model_llm_steps_are_skipped_with_a_hint(config_file: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chinook"]) == 0
    out = capsys.readouterr().out
    assert "LLM steps skipped" in out and "--model" in out and "NL2SQL_MODEL" in out
    run = load_db_info(config_file.parent / "data", "chinook").annotation_runs[-1]
    assert run.steps == {} and "table_descriptions" in run.skipped_steps


def test_examples_zero_skips_the_step(config_file: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chinook", "--model", "test", "--examples", "0", "--concurrency", "2"]) == 0
    assert "example_queries" not in _usage(capsys.readouterr().out)
    run = load_db_info(config_file.parent / "data", "chinook").annotation_runs[-1]
    assert run.skipped_steps == ["example_queries"]


def test_check_without_cache_is_an_error(config_file: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chinook", "--check"]) == 2  # not 1: that is "drift found"
    assert "no schema cache yet" in capsys.readouterr().err


def test_missing_provider_package_is_one_line_and_offline_cache_is_kept(
        config_file: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    hide_package(monkeypatch, "openai")
    assert main(["chinook", "--model", "openai:gpt-4o-mini"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("error: Model 'openai:gpt-4o-mini' needs its provider package: run "
                       "`pip install -e '.[openai]'` in the nl2sql clone, or choose another "
                       "model with --model / NL2SQL_MODEL.")
    info = load_db_info(config_file.parent / "data", "chinook")
    assert len(info.tables) == 11 and info.tables[0].sample_data_csv


@pytest.mark.parametrize("chinook", ["postgres"], indirect=True)  # SQLite has no comments
def test_rewrite_descriptions_replaces_database_comments(
        chinook: SampleDb, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pg_execute(chinook.pg_dbname, "COMMENT ON COLUMN album.title IS 'Album title from DBA.'")
    data_dir = config_file.parent / "data"
    assert main(["chinook", "--model", "test", "--examples", "0"]) == 0
    title = load_db_info(data_dir, "chinook").table("album").column("title")  # type: ignore[union-attr]
    assert (title.description, title.description_source) == ("Album title from DBA.", "comment")
    assert main(["chinook", "--model", "test", "--examples", "0",
                 "--rewrite-descriptions"]) == 0
    title = load_db_info(data_dir, "chinook").table("album").column("title")  # type: ignore[union-attr]
    assert title.description_source == "llm" and title.description != "Album title from DBA."
    capsys.readouterr()
