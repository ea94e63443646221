"""Verified answers on a real Chinook SQLite file: the receipt of an answer (``--json``), accept
in one process and reuse in another (0 model requests, today's rows, the receipt names the
verified answer), the verified SQL as the first example of a similar question, saved queries
that merely ran no longer offered as examples, and a verified answer gone stale after a column it
reads is dropped and the schema re-annotated. Models: the local OpenAI-compatible stub in child
processes, scripted ``FunctionModel``s in this one."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from agent_scripts import Script, final
from stub_openai import StubOpenAI, tool_call

import nl2sql
from conftest import sqlite_config, write_dbs_yaml
from nl2sql.schema.cache import load_db_info
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import Nl2SqlError, VerifiedAnswerError
from nl2sql.operations.ops_context import OpsContext
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.verified.questions import question_key, tables_read

NL2SQL_ASK = Path(sys.executable).parent / "nl2sql-ask"
PRICED = "openai-chat:gpt-4o-mini"  # the stub answers; genai-prices knows the name
QUESTION = "How many tracks are in the Rock genre?"
ROCK = ("SELECT count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId "
        "WHERE g.Name = 'Rock'")
EMPLOYEES = "SELECT count(*) AS employees FROM Employee"


@pytest.fixture
def chinook(tmp_path: Path, sqlite_samples: dict[str, Path]) -> dict[str, object]:
    db = tmp_path / "chinook.sqlite"
    shutil.copyfile(sqlite_samples["chinook"], db)
    path = write_dbs_yaml(tmp_path, [sqlite_config("chinook", db)])
    registry = DbConnectionConfigs.load(path, workspace=tmp_path / "ws")
    annotate_database(registry.get("chinook"), registry.data_dir)  # offline: values too
    env = {"NL2SQL_CONFIG": str(path), "NL2SQL_WORKSPACE": str(tmp_path / "ws")}
    return {"db": db, "registry": registry, "env": env}


def ask_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``nl2sql-ask`` in a child process (the environment now, e.g. the stub's, plus ``env``)."""
    return subprocess.run([str(NL2SQL_ASK), *args], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)


def ask_json(env: dict[str, str], *args: str) -> dict:
    done = ask_cli(env, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def rock_tracks(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return connection.execute(ROCK).fetchone()[0]


# -- normalising questions and reading tables -----------------------------------------------
@pytest.mark.parametrize("other", ["how many tracks are in the rock genre",
                                   "  How MANY tracks are in the 'Rock' genre ?? ",
                                   "How many tracks are in the \"Rock\" genre."])
def test_the_same_question_in_other_case_spacing_and_quotes(other: str) -> None:
    assert question_key(other) == question_key(QUESTION)


@pytest.mark.parametrize(("one", "two"), [("Invoices over 1,000", "invoices over 1000.00"),
                                          ("Sales on 2024-01-05", "sales on 2024-1-5")])
def test_number_literals_are_written_one_way(one: str, two: str) -> None:
    assert question_key(one) == question_key(two)


@pytest.mark.parametrize("other", ["How many tracks are in the Jazz genre?",
                                   "How many tracks are in the Rock genre in 2024?",
                                   "Invoices over 1001"])
def test_another_value_is_another_question(other: str) -> None:
    assert question_key(other) not in {question_key(QUESTION), question_key("Invoices over 1000")}


def test_tables_read_leaves_out_ctes_and_uses_the_cache_names(chinook: dict) -> None:
    info = load_db_info(chinook["registry"].data_dir, "chinook")
    sql = ("WITH rock AS (SELECT * FROM track WHERE GenreId = 1) "
           "SELECT a.Title FROM rock JOIN album a USING (AlbumId)")
    assert tables_read(sql, "sqlite", info) == ["Album", "Track"]
    assert tables_read(ROCK, "sqlite", info) == ["Genre", "Track"]
    assert tables_read("SELEC nonsense (", "sqlite", info) == []


# -- the receipt ------------------------------------------------------------------------------
def test_json_has_the_receipt_and_the_metadata_the_id(chinook: dict,
                                                      stub_openai: StubOpenAI) -> None:
    stub_openai.add(tool_call("db_execute_sql", db_id="chinook", query=ROCK),
                    tool_call("final_result", sql=ROCK, explanation="Counts the Rock tracks."))
    answer = ask_json(chinook["env"], QUESTION, "--db", "chinook", "--model", PRICED)
    assert answer["source"] == "model"
    assert answer["models"] == [PRICED]  # as the user named it, as candidates[].model
    assert answer["cost_usd"] > 0 and answer["latency_ms"] >= 0
    assert answer["usage"]["requests"] == 2
    info = load_db_info(chinook["registry"].data_dir, "chinook")
    assert answer["schema_fingerprint"] == info.fingerprint()
    context = answer["context"]
    assert set(context) == {"tables", "value_hints", "examples", "glossary", "metrics",
                            "saved_metric_queries"}
    kept = {t["name"]: t["reason"] for t in context["tables"]}
    assert {"Track", "Genre"} <= set(kept) and all(kept.values())
    assert any(h["value"] == "Rock" for h in context["value_hints"])
    metadata = json.loads(Path(answer["csv_path"]).with_suffix("").with_suffix(
        ".metadata.json").read_text())
    assert metadata["id"] == answer["id"] and len(answer["id"]) == 12
    # People see it too.
    stub_openai.add(tool_call("final_result", sql=ROCK, explanation="Counts the Rock tracks."))
    printed = ask_cli(chinook["env"], QUESTION, "--db", "chinook", "--model", PRICED)
    assert printed.returncode == 0, printed.stderr
    assert "receipt: id " in printed.stdout and f"source: model {PRICED}" \
        in printed.stdout


# -- accept, then reuse in another process ----------------------------------------------------
def test_accepted_answer_is_served_again_in_another_process(chinook: dict,
                                                            stub_openai: StubOpenAI) -> None:
    env, db = chinook["env"], chinook["db"]
    stub_openai.add(tool_call("final_result", sql=ROCK, explanation="Counts the Rock tracks."))
    first = ask_json(env, QUESTION, "--db", "chinook", "--model", PRICED)
    before = rock_tracks(db)
    assert first["df"] == [{"tracks": before}]
    accepted = ask_cli(env, "--accept", first["id"])
    assert accepted.returncode == 0, accepted.stderr
    assert f"Verified {first['id']} on chinook" in accepted.stdout
    with sqlite3.connect(db) as connection:  # today's data differs: one more Rock track
        connection.execute("UPDATE Track SET GenreId = 1 WHERE TrackId = "
                           "(SELECT min(TrackId) FROM Track WHERE GenreId <> 1)")
    requests = len(stub_openai.requests)
    again = ask_json(env, "  how MANY tracks are in the   rock genre ", "--model", PRICED)
    assert len(stub_openai.requests) == requests  # no model request at all
    assert again["usage"]["requests"] == 0 and again["cost_usd"] == 0
    assert again["source"] == f"verified:{first['id']}" and again["sql"] == ROCK
    assert again["df"] == [{"tracks": before + 1}]  # run again: today's rows
    assert again["id"] != first["id"] and again["db_id"] == "chinook"
    listed = ask_cli(env, "--list-verified", "--db", "chinook")
    assert first["id"] in listed.stdout and QUESTION in listed.stdout
    assert "reads: Genre, Track" in listed.stdout
    # --no-reuse asks the model anyway.
    stub_openai.add(tool_call("final_result", sql=ROCK, explanation="Counts the Rock tracks."))
    fresh = ask_json(env, QUESTION, "--no-reuse", "--model", PRICED, "--db", "chinook")
    assert fresh["source"] == "model" and fresh["usage"]["requests"] == 1
    removed = ask_cli(env, "--unverify", first["id"])
    assert removed.returncode == 0 and first["id"] in removed.stdout
    assert ask_json(env, "--list-verified") == []
    gone = ask_cli(env, "--unverify", first["id"])
    assert gone.returncode == 2 and gone.stderr.count("\n") == 1
    assert "No verified answer" in gone.stderr


@pytest.mark.parametrize("answer_id", ["0123456789ab", ""])
def test_accept_unknown_id_is_one_line(chinook: dict, answer_id: str) -> None:
    """An empty id too (a shell variable that was not set): not taken for a missing question."""
    done = ask_cli(chinook["env"], "--accept", answer_id)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"No answer with id '{answer_id}'" in done.stderr



def test_an_id_that_is_not_a_string_is_one_sentence(tmp_path: Path) -> None:
    for call, name in ((nl2sql.accept, "answer_id"), (nl2sql.unverify, "verified_id"),
                       (nl2sql.reject, "proposal_id")):
        with pytest.raises(Nl2SqlError, match=f"^{name} must be a string \\(got int\\)\\.$"):
            call(5, config=tmp_path / "dbs.yaml")  # refused before dbs.yaml is read


# -- examples ---------------------------------------------------------------------------------
def test_verified_sql_is_the_first_example_and_merely_run_queries_are_not(
        chinook: dict) -> None:
    registry = chinook["registry"]
    ops = OpsContext(registry)
    try:
        script = Script([final(ROCK)])
        answer = nl2sql.ask(QUESTION, db_id="chinook", model=script.model, config=ops)
        similar = "How many tracks are in the Jazz genre?"
        before = nl2sql.context(similar, db_id="chinook", config=registry)
        assert ROCK not in [e.sql for e in before.examples]  # it only ran: not an example
        verified = answer.accept()  # the registry ask() used
        assert verified.id == answer.id and verified.tables == ["Genre", "Track"]
        assert verified.schema_fingerprint == ops.db_info("chinook").fingerprint()
        assert verified.accepted_by
        after = nl2sql.context(similar, db_id="chinook", config=registry)
        assert after.examples[0].sql == ROCK and after.examples[0].question == QUESTION
        # ... and the model is shown it first.
        jazz = Script([final(ROCK.replace("Rock", "Jazz"))])
        nl2sql.ask(similar, db_id="chinook", model=jazz.model, config=ops)
        examples = (jazz.instructions[0] or "").split("## Example questions")[1]
        assert examples.split("Question: ")[1].startswith(f"{QUESTION}\n```sql\n{ROCK}")
        unrelated = nl2sql.context("Which employees report to whom?", db_id="chinook",
                                   config=registry)
        assert ROCK not in [e.sql for e in unrelated.examples]
        assert [v.id for v in nl2sql.list_verified("chinook", config=ops)] == [answer.id]
    finally:
        ops.close()


def test_a_question_without_a_verified_answer_asks_the_model(chinook: dict) -> None:
    ops = OpsContext(chinook["registry"])
    try:
        script = Script([final(EMPLOYEES)])
        answer = nl2sql.ask("How many employees are there?", db_id="chinook",
                            model=script.model, config=ops)
        assert answer.source == "model" and len(script.requests) == 1
        assert answer.schema_fingerprint == ops.db_info("chinook").fingerprint()
    finally:
        ops.close()


def test_sql_that_no_longer_runs_is_not_accepted(chinook: dict) -> None:
    ops = OpsContext(chinook["registry"])
    try:
        script = Script([final(EMPLOYEES)])
        answer = nl2sql.ask("How many employees are there?", db_id="chinook",
                            model=script.model, config=ops)
        with sqlite3.connect(chinook["db"]) as connection:
            connection.execute("ALTER TABLE Employee RENAME TO Staff")
        with pytest.raises(VerifiedAnswerError, match="no longer runs on chinook"):
            nl2sql.accept(answer.id, config=ops)
        assert nl2sql.list_verified(config=ops) == []
    finally:
        ops.close()


# -- drift --------------------------------------------------------------------------------------
def test_dropping_a_column_the_sql_reads_makes_it_stale(chinook: dict) -> None:
    registry, db = chinook["registry"], chinook["db"]
    ops = OpsContext(registry)
    try:
        rock = nl2sql.ask(QUESTION, db_id="chinook", model=Script([final(ROCK)]).model,
                          config=ops)
        staff = nl2sql.ask("How many employees are there?", db_id="chinook",
                           model=Script([final(EMPLOYEES)]).model, config=ops)
        nl2sql.accept(rock.id, config=ops)
        nl2sql.accept(staff.id, config=ops)
        with sqlite3.connect(db) as connection:
            connection.execute("ALTER TABLE Genre DROP COLUMN Name")
        annotate = subprocess.run([str(NL2SQL_ASK.parent / "annotate-schema"), "chinook"],
                                  env={**os.environ, **chinook["env"]}, capture_output=True,
                                  text=True, timeout=300)
        assert annotate.returncode == 0, annotate.stderr
        stale_lines = [line for line in annotate.stdout.splitlines() if "is stale" in line]
        assert len(stale_lines) == 1 and f"verified answer {rock.id} ({QUESTION}) is stale: " \
            "schema drift: Genre changed (column Name removed)" in stale_lines[0]
        listed = {v.id: v for v in nl2sql.list_verified("chinook", config=ops)}
        assert listed[rock.id].stale and "Genre" in listed[rock.id].stale_reason
        assert "column Name removed" in listed[rock.id].stale_reason
        assert not listed[staff.id].stale  # reads no table that changed
        # Not served: the model is asked; not shown as an example either.
        script = Script([final(EMPLOYEES)])
        answer = nl2sql.ask(QUESTION, db_id="chinook", model=script.model, config=ops)
        assert answer.source == "model" and len(script.requests) == 1
        assert ROCK not in (script.instructions[0] or "")
        served = nl2sql.ask("how many employees are there", db_id="chinook",
                            model=Script([]).model, config=ops)
        assert served.source == f"verified:{staff.id}"
    finally:
        ops.close()
    done = ask_cli(chinook["env"], "--list-verified")
    assert "STALE: schema drift: Genre changed (column Name removed); the SQL fails: " \
        in done.stdout


# -- through MCP ------------------------------------------------------------------------------
async def test_mcp_saved_query_accept_confirmed_by_a_person_then_the_agents_use_it(chinook: dict) -> None:
    from mcp import Client

    from nl2sql.agents.ask import ask_async
    from nl2sql.mcp import build_server

    registry = chinook["registry"]
    server = build_server(registry.config_path, workspace=registry.workspace)
    async with Client(server) as client:
        ran = await client.call_tool("db_execute_sql", {
            "db_id": "chinook", "query": ROCK, "nl_query": QUESTION, "output_file": "rock"})
        assert not ran.is_error, ran.content[0].text
        no_question = await client.call_tool("db_execute_sql", {
            "db_id": "chinook", "query": EMPLOYEES, "output_file": "staff"})
        assert not no_question.is_error
        accepted = await client.call_tool("saved_query_accept", {"csv_file": "rock.csv"})
        assert not accepted.is_error, accepted.content[0].text
        text = accepted.content[0].text
        assert text.startswith("Proposed ") and "until a person confirms it" in text
        assert QUESTION in text and "reads: Genre, Track" in text
        refused = await client.call_tool("saved_query_accept", {"csv_file": "staff"})
        assert refused.is_error and "no question" in refused.content[0].text
        outside = await client.call_tool("saved_query_accept", {"csv_file": "../dbs.yaml"})
        assert outside.is_error
        tools = (await client.list_tools()).tools
        accept_tool = next(t for t in tools if t.name == "saved_query_accept")
        assert len(accept_tool.description) < 250 and accept_tool.annotations.read_only_hint \
            is False
    ops = OpsContext(registry)
    try:
        # A person confirms the model's proposal ...
        [proposal] = nl2sql.list_proposed(config=ops)
        assert nl2sql.accept(proposal.id, config=ops).state == "verified"
        # ... then the same question is served from the verified answer, no model request.
        served = await ask_async("how many tracks are in the rock genre", model=Script([]).model,
                                 config=ops)
        assert served.source.startswith("verified:") and served.usage.requests == 0
        assert served.row_count == 1 and served.df.iloc[0, 0] == rock_tracks(chinook["db"])
        rendered = served._repr_markdown_()  # the notebook rendering ends with the receipt
        assert f"id {served.id}; source: a verified answer, run again on today's data" \
            in rendered and f"({served.source}); 0 request(s)" in rendered
        # A similar question: the verified SQL is the model's first example.
        jazz = Script([final(ROCK.replace("Rock", "Jazz"))])
        answer = await ask_async("How many tracks are in the Jazz genre?", db_id="chinook",
                                 model=jazz.model, config=ops)
        assert answer.context.examples[0].sql == ROCK
        assert "source: model function:scripted (model); 1 request(s)" in answer._repr_markdown_()
        examples = (jazz.instructions[0] or "").split("## Example questions")[1]
        assert examples.split("Question: ")[1].startswith(f"{QUESTION}\n```sql\n{ROCK}")
    finally:
        ops.close()
