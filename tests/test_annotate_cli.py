"""``annotate-schema`` end to end: the cache contract, summary, errors, --all, incremental
re-runs and the installed console script."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BACKENDS, SampleDb, sqlite_config, write_dbs_yaml

from nl2sql.schema.cache import cache_path, load_db_info, save_db_info
from nl2sql.cli.annotate import build_parser, main
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import ModelSetupError
from nl2sql.annotation.pipeline import AnnotateOptions, AnnotationContext, annotate_database

CONTRACT = {
    "db": {"db_id", "db_type", "description", "tables", "example_queries"},
    "table": {"name", "description", "columns", "foreign_keys", "indexes", "row_count",
              "sample_data_csv"},
    "column": {"name", "data_type", "nullable", "description", "is_primary_key", "is_unique",
               "is_enum", "enum_values"},
    "fk": {"name", "columns", "referenced_table", "referenced_columns", "on_delete",
           "on_update"},
    "index": {"name", "columns", "is_unique", "is_primary", "index_type"},
}


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("NL2SQL_DATA_DIR", str(folder))
    monkeypatch.chdir(tmp_path)  # no dbs.yaml here: only the bundled bookstore
    return folder


def test_bookstore_cache_and_schema(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bookstore", "--output-schema"]) == 0
    out, err = capsys.readouterr()
    path = data_dir / "database" / "bookstore" / "bookstore.db_info.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    assert CONTRACT["db"] <= set(document)
    assert document["db_id"] == "bookstore" and document["db_type"] == "sqlite"
    tables = {t["name"]: t for t in document["tables"]}
    assert len(tables) == 7
    for table in tables.values():
        assert CONTRACT["table"] <= set(table)
        for column in table["columns"]:
            assert CONTRACT["column"] <= set(column)
        for fk in table["foreign_keys"]:
            assert CONTRACT["fk"] <= set(fk)
        for index in table["indexes"]:
            assert CONTRACT["index"] <= set(index)
    returns_fk = tables["returns"]["foreign_keys"][0]
    assert returns_fk["columns"] == ["order_id", "line_no"]
    assert returns_fk["on_delete"] == "CASCADE" and returns_fk["on_update"] == "CASCADE"
    genre = next(c for c in tables["books"]["columns"] if c["name"] == "genre")
    assert genre["is_enum"] and len(genre["enum_values"]) == 7
    assert tables["books"]["row_count"] == 200
    assert tables["books"]["sample_data_csv"].startswith("book_id,isbn,title,")

    # stdout is only the schema SQL (redirectable); the summary went to stderr.
    assert out.startswith("-- Database: bookstore (sqlite)\n")
    assert "CREATE TABLE books (" in out and "bookstore: " not in out
    assert ("bookstore: 6 tables + 1 view, 38 columns, 5 foreign keys (+1 implied), 5 enum "
            "columns (+2 candidates left for the LLM)") in err
    assert f"cache: {path}" in err
    assert "LLM steps skipped" in err and "--model" in err and "NL2SQL_MODEL" in err


def test_summary_on_stdout_and_options(data_dir: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bookstore", "--enum-max-values", "5", "--sample-rows", "0"]) == 0
    out, _err = capsys.readouterr()
    assert out.startswith("bookstore: 6 tables + 1 view,")
    info = load_db_info(data_dir, "bookstore")
    # The CHECK constraints list the values of genre (7, over the limit of 5), format,
    # status, channel and reason, whatever the limit; screening finds city (13 values) and
    # country (20) over it: no candidate left for the LLM.
    assert {c.name for c in info.enum_columns} == {"genre", "format", "status", "channel",
                                                   "reason"}
    assert all(c.enum_decision == "schema" for c in info.enum_columns)
    assert not any(c.enum_candidates for t in info.tables for c in t.columns)
    assert "candidates left" not in out  # "(+2 candidates left for the LLM)" by default
    assert all(t.sample_data_csv is None for t in info.tables)


def test_unknown_db_id(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bookstre"]) == 2  # a usage error, as in every other command
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("error: Unknown database 'bookstre'. Did you mean 'bookstore'? "
                   "Known databases: bookstore.\n")
    assert not (data_dir / "database").exists()


def test_no_db_id_is_a_usage_error(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "name one or more db_ids, or pass --all" in capsys.readouterr().err


def test_help_has_example_and_every_flag_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "Example:\n  annotate-schema bookstore" in text
    for action in build_parser()._actions:
        assert action.help, action.dest
    for flag in ["--all", "--output-schema", "--config", "--data-dir", "--enum-max-values",
                 "--sample-rows", "--model", "--verbose"]:
        assert flag in text


@pytest.mark.parametrize("chinook", BACKENDS, indirect=True)
def test_all_databases(chinook: SampleDb, tmp_path: Path,
                       capsys: pytest.CaptureFixture[str]) -> None:
    config_file = write_dbs_yaml(tmp_path, [chinook.config])
    assert main(["--all", "--config", str(config_file)]) == 0
    out = capsys.readouterr().out
    assert "bookstore: 6 tables + 1 view" in out
    assert "chinook: 11 tables, 64 columns, 11 foreign keys, 0 enum columns" in out
    chinook_info = load_db_info(tmp_path / "data", "chinook")
    assert chinook_info.table(chinook.table("track")).row_count == 3503
    assert chinook_info.table(chinook.table("media_type")).column("Name" if chinook.naming ==
                                                                   "sqlite" else "name"
                                                                   ).is_enum is False
    assert load_db_info(tmp_path / "data", "bookstore").db_id == "bookstore"


def test_one_failing_database_does_not_stop_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    config_file = write_dbs_yaml(tmp_path, [sqlite_config("gone", tmp_path / "missing.db")])
    assert main(["--all", "--config", str(config_file)]) == 2  # a set-up error: fix them and run again
    out, err = capsys.readouterr()
    assert "bookstore: 6 tables" in out
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == [
        f"gone: SQLite file {tmp_path / 'missing.db'} for database 'gone' does not exist; fix "
        f"its 'path' in dbs.yaml."]
    assert err.rstrip().splitlines()[-1].startswith("error: Annotation failed for 'gone'")
    assert (tmp_path / "data" / "database" / "bookstore" / "bookstore.db_info.json").is_file()


def test_rerun_keeps_llm_annotations_of_unchanged_tables(
        data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bookstore"]) == 0
    info = load_db_info(data_dir, "bookstore")
    for name in ["books", "customers"]:
        table = info.table(name)
        table.description, table.description_source = f"{name} (model)", "llm"
        table.columns[1].description, table.columns[1].description_source = "col", "llm"
    status = info.table("orders").column("status")
    status.is_enum, status.enum_values, status.enum_decision = False, [], "user"
    info.example_queries = []
    save_db_info(info, data_dir)

    # Change the structure of one table.
    with sqlite3.connect(data_dir / "bookstore" / "bookstore.db") as conn:
        conn.execute("ALTER TABLE customers ADD COLUMN phone TEXT")
    conn.close()
    capsys.readouterr()
    assert main(["bookstore"]) == 0
    assert "6 tables unchanged since the last run" in capsys.readouterr().out
    again = load_db_info(data_dir, "bookstore")
    assert again.table("books").description == "books (model)"
    assert again.table("books").columns[1].description == "col"
    assert again.table("customers").description is None  # changed: the model describes again
    assert again.table("customers").columns[1].description is None
    status = again.table("orders").column("status")
    assert status.enum_decision == "user" and status.is_enum is False
    assert len(again.annotation_runs) == 2


def test_model_runs_llm_steps(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bookstore", "--model", "test"]) == 0
    out = capsys.readouterr().out
    assert "LLM steps skipped" not in out
    assert any(line.split()[:2] == ["table_descriptions", "7"] for line in out.splitlines())
    info = load_db_info(data_dir, "bookstore")
    assert info.annotation_runs[-1].model == "test"
    assert info.annotation_runs[-1].steps["table_descriptions"].requests == 7
    assert all(t.description_source == "llm" for t in info.tables)


def test_failing_llm_step_still_saves_offline_results(tmp_path: Path) -> None:
    configs = DbConnectionConfigs.load(None, data_dir=tmp_path / "data")

    def failing(context: AnnotationContext) -> None:
        context.db_info.description = "half done"
        raise ModelSetupError("The provider refused the credentials; set a valid key.")

    with pytest.raises(ModelSetupError):
        annotate_database(configs.get("bookstore"), configs.data_dir, llm_steps=failing,
                          options=AnnotateOptions(model="test"))
    info = load_db_info(configs.data_dir, "bookstore")
    assert info.description == "half done" and info.table("books").row_count == 200


def test_console_script_without_dbs_yaml(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("annotate-schema")
    command = str(script) if script.is_file() else shutil.which("annotate-schema")
    assert command, "the annotate-schema console script is not installed"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NL2SQL_")}
    result = subprocess.run([command, "bookstore"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    # No dbs.yaml: the per-user data dir ($XDG_DATA_HOME/nl2sql), nothing in the cwd.
    assert not (tmp_path / "data").exists()
    assert cache_path(Path(env["XDG_DATA_HOME"]) / "nl2sql", "bookstore").is_file()
    assert result.stdout.startswith("bookstore: 6 tables + 1 view, 38 columns")


def test_annotate_without_a_model_never_imports_pydantic_ai(tmp_path: Path) -> None:
    """pydantic-ai (about 1 s to import) is for the LLM steps: the command and its offline
    pipeline load it only when a model runs them."""
    script = ("import sys, nl2sql.cli.annotate, nl2sql.annotation.pipeline; "
              "print('pydantic_ai' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.strip() == "False", done.stdout


def test_annotate_without_a_semantic_model_never_imports_the_metrics_check(
        tmp_path: Path) -> None:
    """The metrics check (sqlglot, the semantic compiler: ~0.1 s of every run's start-up) is
    loaded only for a database with a ``semantic_model:`` (test_metrics_annotate.py runs it);
    a first annotation without a model leaves numpy to the child that embeds the tables
    (``embeddings_ahead.py``) and has no verified answers to recheck (the store's tables)."""
    database = tmp_path / "shop.db"
    with sqlite3.connect(database) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT)")
    (tmp_path / "dbs.yaml").write_text(f"databases:\n  shop: {{type: sqlite, path: {database}}}\n")
    script = ("import sys, io, contextlib, nl2sql.cli.annotate as cli\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    rc = cli.main(['shop'])\n"
              "print(rc, sorted(m for m in sys.modules if m in ('nl2sql.annotation.metrics_check',"
              " 'nl2sql.semantic.compiler', 'nl2sql.semantic.loading', 'numpy',"
              " 'nl2sql.store.answers')))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NL2SQL_")}
    env.update(NL2SQL_DATA_DIR=str(tmp_path / "data"), NL2SQL_CONFIG=str(tmp_path / "dbs.yaml"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0 []", done.stdout
