"""End to end over the real provider path: ``nl2sql-ask`` and ``nl2sql.ask()`` in child
processes with ``--model openai-chat:stub-model`` and ``OPENAI_BASE_URL`` pointed at a local
OpenAI-compatible server (tests/stub_openai.py) that replays chat-completions answers, so the
real ``openai`` client, pydantic-ai's chat model, the agents and the tools all run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from stub_openai import MODEL_STRING, StubOpenAI, http_error, messages_text, text, tool_call

from conftest import build_cache, sqlite_config, write_dbs_yaml
from nl2sql.config.registry import DbConnectionConfigs

NL2SQL_ASK = Path(sys.executable).parent / "nl2sql-ask"
QUESTION = "How many tracks are in the Rock genre?"
ROCK = ("SELECT count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId "
        "WHERE g.Name = 'Rock'")
TYPO = ROCK.replace("g.Name", "g.GenreName")


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory, sqlite_samples: dict[str, Path]) -> Path:
    """bookstore + Chinook + Northwind (SQLite) in a dbs.yaml with their caches, built once."""
    folder = tmp_path_factory.mktemp("three_dbs")
    shutil.copyfile(sqlite_samples["chinook"], folder / "chinook.sqlite")
    shutil.copyfile(sqlite_samples["northwind"], folder / "northwind.sqlite")
    path = write_dbs_yaml(folder, [sqlite_config("chinook", folder / "chinook.sqlite"),
                                   sqlite_config("northwind", folder / "northwind.sqlite")])
    registry = DbConnectionConfigs.load(path, workspace=folder / "ws")
    for config in registry:
        build_cache(config, registry.data_dir)
    return folder


@pytest.fixture
def setup(tmp_path: Path, _template: Path, stub_openai: StubOpenAI) -> dict[str, str]:
    """A private copy of the three databases' config and data dir (conversations, indexes);
    the environment for a child process."""
    folder = tmp_path / "setup"
    shutil.copytree(_template, folder)
    config = folder / "dbs.yaml"
    config.write_text(config.read_text().replace(str(_template), str(folder)))
    return {**os.environ, "NL2SQL_CONFIG": str(config), "NL2SQL_WORKSPACE": str(tmp_path / "ws")}


def ask_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(NL2SQL_ASK), *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_cli_answers_with_sql_that_ran_after_a_retry(setup: dict[str, str],
                                                     stub_openai: StubOpenAI) -> None:
    stub_openai.add(tool_call("db_execute_sql", query=TYPO),
                    tool_call("final_result", sql=ROCK, explanation="Counts the Rock tracks."))
    done = ask_cli(setup, QUESTION, "--db", "chinook", "--model", MODEL_STRING)
    assert done.returncode == 0, done.stderr
    assert ROCK in done.stdout and "| 1297 |" in done.stdout and "Traceback" not in done.stderr
    assert "attempts: 2 (1 failed)" in done.stdout and "usage: 2 request(s)" in done.stdout
    csv_path = Path(setup["NL2SQL_WORKSPACE"]) / "how_many_tracks_are_in_the_rock_genre_"
    [csv_file] = csv_path.parent.glob(csv_path.name + "*.csv")
    assert csv_file.read_text() == "tracks\n1297\n" and str(csv_file) in done.stdout
    metadata = json.loads(csv_file.with_name(csv_file.stem + ".metadata.json").read_text())
    assert metadata["natural_language_query"] == QUESTION and metadata["sql_query"] == ROCK
    first, second = stub_openai.requests
    assert {t["function"]["name"] for t in first["tools"]} >= {"db_execute_sql", "final_result"}
    assert first["model"] == "stub-model" and "CREATE TABLE" in messages_text(first)
    assert "no such column: g.GenreName" in messages_text(second)  # the retry went back


def test_cli_picks_the_database_without_db(setup: dict[str, str],
                                           stub_openai: StubOpenAI) -> None:
    stub_openai.add(tool_call("final_result", db_id="chinook", reasoning="Tracks and genres."),
                    tool_call("final_result", sql=ROCK, explanation="Counts the Rock tracks."))
    done = ask_cli(setup, QUESTION, "--model", MODEL_STRING, "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["db_id"] == "chinook" and answer["sql"] == ROCK and answer["row_count"] == 1
    assert answer["df"] == [{"tracks": 1297}] and answer["usage"]["requests"] == 2
    assert set(answer) >= {"question", "explanation", "csv_path", "truncated", "attempts",
                           "conversation_id"}
    catalog = messages_text(stub_openai.requests[0])
    assert all(db in catalog for db in ("chinook", "northwind", "bookstore"))


def test_cli_follow_up_in_a_conversation_after_a_restart(setup: dict[str, str],
                                                         stub_openai: StubOpenAI) -> None:
    stub_openai.add(tool_call("final_result", sql="SELECT count(*) AS invoices FROM Invoice",
                              explanation="Counts invoices."))
    first = ask_cli(setup, "How many invoices are there?", "--db", "chinook", "--model",
                    MODEL_STRING, "--conversation", "sales")
    assert first.returncode == 0, first.stderr
    follow_sql = ("SELECT count(*) AS invoices FROM Invoice "
                  "WHERE InvoiceDate >= '2024-01-01' AND InvoiceDate < '2025-01-01'")
    stub_openai.add(tool_call("final_result", sql=follow_sql, explanation="2024 only."))
    second = ask_cli(setup, "and only for 2024?", "--model", MODEL_STRING,
                     "--conversation", "sales")  # a new process; no --db: the conversation's
    assert second.returncode == 0, second.stderr
    assert "conversation: sales" in second.stdout and follow_sql in second.stdout
    assert "How many invoices are there?" in messages_text(stub_openai.requests[1])
    listed = ask_cli(setup, "--list-conversations")
    assert listed.returncode == 0 and "sales  2 turn(s), chinook" in listed.stdout
    deleted = ask_cli(setup, "--delete-conversation", "sales")
    assert deleted.returncode == 0 and "2 turn(s)" in deleted.stdout


def test_cli_exit_codes_and_messages(setup: dict[str, str], stub_openai: StubOpenAI) -> None:
    no_model = ask_cli(setup, QUESTION, "--db", "chinook")
    assert no_model.returncode == 2 and no_model.stdout == ""
    assert all(s in no_model.stderr for s in ("--model", "NL2SQL_MODEL", "model:"))
    assert no_model.stderr.startswith("error: ") and no_model.stderr.count("\n") == 1

    stub_openai.add(*[tool_call("final_result", sql=TYPO, explanation="x")] * 10)
    no_answer = ask_cli(setup, QUESTION, "--db", "chinook", "--model", MODEL_STRING)
    assert no_answer.returncode == 1, no_answer.stderr
    last_line = no_answer.stderr.splitlines()[-1]  # logs may come before it, never a traceback
    assert last_line.startswith("error: No answer for chinook") and "Traceback" not in \
        no_answer.stderr
    assert f"`{TYPO}`" in last_line and "no such column: g.GenreName" in last_line

    unknown = ask_cli(setup, QUESTION, "--db", "chinok", "--model", MODEL_STRING)
    assert unknown.returncode == 2 and "Did you mean 'chinook'?" in unknown.stderr

    requests = len(stub_openai.requests)
    for rows in ("-5", "0", "many"):  # refused before any model request
        refused = ask_cli(setup, QUESTION, "--db", "chinook", "--model", MODEL_STRING,
                          "--max-rows", rows)
        assert refused.returncode == 2 and "--max-rows" in refused.stderr, refused.stderr
    assert len(stub_openai.requests) == requests


SCRIPT = """
import json, nl2sql
answer = nl2sql.ask({question!r}, db_id="chinook", model={model!r})
print(json.dumps({{"sql": answer.sql, "rows": answer.df.to_dict("records"),
                   "attempts": [a.model_dump() for a in answer.attempts],
                   "csv": answer.csv_path, "usage": answer.usage.model_dump()}}))
"""


def test_python_ask_with_json_text_answers_and_a_rate_limit(setup: dict[str, str],
                                                            stub_openai: StubOpenAI) -> None:
    """The model answers in JSON text (no output tool); a 429 with Retry-After waits first."""
    stub_openai.add(http_error(429, "slow down", retry_after=0.2),
                    http_error(429, "slow down", retry_after=0.2),
                    http_error(429, "slow down", retry_after=0.2),
                    text("I think the answer needs a join."),
                    text(json.dumps({"sql": ROCK, "explanation": "Counts the Rock tracks."})))
    script = SCRIPT.format(question=QUESTION, model=MODEL_STRING)
    done = subprocess.run([sys.executable, "-c", script], env=setup, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["sql"] == ROCK and result["rows"] == [{"tracks": 1297}]
    assert result["attempts"] == [{"sql": ROCK, "error": None}]
    assert Path(result["csv"]).read_text() == "tracks\n1297\n"
    assert stub_openai.remaining == 0 and len(stub_openai.requests) == 5
    assert "JSON object" in messages_text(stub_openai.requests[-1])  # the text retry


def test_openai_against_a_compatible_server_says_to_use_openai_chat(
        setup: dict[str, str], stub_openai: StubOpenAI) -> None:
    """'openai:' is the Responses API; a server that speaks only chat completions (the stub, as
    Ollama or vLLM may) answers it 404: never taken for an unknown model, and never sent to the
    chat endpoint behind the user's back."""
    done = ask_cli(setup, QUESTION, "--db", "chinook", "--model", "openai:stub-model")
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"error: The server at {stub_openai.base_url} (OPENAI_BASE_URL) does not answer "
        f"'openai:stub-model' on the Responses API that 'openai:' uses; for an "
        f"OpenAI-compatible server use chat completions: --model openai-chat:stub-model.")
    assert stub_openai.paths and all(p.endswith("/responses") for p in stub_openai.paths)
    assert stub_openai.requests == []


def test_one_name_for_the_model_in_the_answer_candidates_and_receipt(
        setup: dict[str, str], stub_openai: StubOpenAI) -> None:
    stub_openai.add(*[tool_call("final_result", sql=ROCK, explanation="Rock tracks.")] * 3)
    done = ask_cli(setup, QUESTION, "--db", "chinook", "--model", MODEL_STRING,
                   "--candidates", "2", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["models"] == [MODEL_STRING]
    assert {c["model"] for c in answer["candidates"]} == {MODEL_STRING}
    printed = ask_cli(setup, QUESTION, "--db", "chinook", "--model", MODEL_STRING,
                      "--no-reuse")
    assert f"source: model {MODEL_STRING} (model)" in printed.stdout, printed.stderr


def test_cli_prints_no_terminal_escape_from_the_model_or_the_data(
        setup: dict[str, str], stub_openai: StubOpenAI) -> None:
    """An outside probe: a value the query returns (stored data is untrusted) and the model's
    SQL and explanation reached the terminal as written: an OSC 52 escape set the clipboard
    (a command the person would paste), others cleared the screen or reversed text. Printed
    with each control or format character replaced."""
    escape = "char(27) || ']52;c;cm0gLXJmIH4=' || char(7) || char(27) || '[2J'"
    sql = f"SELECT 'a' || {escape} || '\u202eb' AS v -- \x1b[1A"
    stub_openai.add(tool_call("final_result", sql=sql, explanation="Shows \x1b[2Kit\u200b."))
    done = ask_cli(setup, "Show the value", "--db", "chinook", "--model", MODEL_STRING)
    assert done.returncode == 0, done.stderr
    assert not any(c in done.stdout for c in "\x1b\x07\u202e\u200b"), repr(done.stdout)
    assert "| a\ufffd]52;c;cm0gLXJmIH4=\ufffd\ufffd[2J\ufffdb |" in done.stdout, done.stdout
