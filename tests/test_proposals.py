"""Verified answers only from people: a model's ``saved_query_accept`` (any MCP face) makes a
proposal, never served nor shown as an example until a person confirms it (``nl2sql-ask
--accept``, ``nl2sql.accept``, or MCP elicitation where the client can ask), and never replacing
a person's verified answer. On a real Chinook SQLite file, through real MCP client sessions
(in memory and the ``nl2sql-mcp`` stdio subprocess), with scripted models counting requests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from agent_scripts import Script, final
from mcp import Client
from mcp.client.stdio import StdioServerParameters

import nl2sql
from conftest import sqlite_config, write_dbs_yaml
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import VerifiedAnswerError
from nl2sql.mcp import build_server
from nl2sql.operations.ops_context import OpsContext
from nl2sql.access.caller import os_user_name as os_user

BIN = Path(sys.executable).parent
QUESTION = "How many artists are there?"
RIGHT = "SELECT count(*) AS artists FROM Artist"
INJECTED = "SELECT 0 AS artists"  # the audit's: a model's wrong answer to a person's question
ARTISTS = 275


@pytest.fixture(scope="module")
def annotated(tmp_path_factory: pytest.TempPathFactory,
              sqlite_samples: dict[str, Path]) -> Path:
    """Chinook (SQLite) and its annotated cache, made once for the module."""
    root = tmp_path_factory.mktemp("annotated")
    shutil.copyfile(sqlite_samples["chinook"], root / "chinook.sqlite")
    registry = DbConnectionConfigs.load(
        write_dbs_yaml(root, [sqlite_config("chinook", root / "chinook.sqlite")]))
    annotate_database(registry.get("chinook"), registry.data_dir)
    return root


@pytest.fixture
def chinook(annotated: Path, tmp_path: Path,
            request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """A fresh copy of the annotated Chinook: its registry, an ``OpsContext`` on it, and the
    environment for child processes; its store is SQLite files, or with the parameter
    "postgres" the session's PostgreSQL store (``store:``)."""
    shutil.copytree(annotated, tmp_path / "site")
    root = tmp_path / "site"
    store = ({"store": request.getfixturevalue("pg_store")}
             if getattr(request, "param", "sqlite") == "postgres" else {})
    path = write_dbs_yaml(root, [sqlite_config("chinook", root / "chinook.sqlite")], **store)
    registry = DbConnectionConfigs.load(path, workspace=tmp_path / "ws")
    ops = OpsContext(registry)
    env = {"NL2SQL_CONFIG": str(path), "NL2SQL_WORKSPACE": str(tmp_path / "ws")}
    try:
        yield {"registry": registry, "ops": ops, "env": env}
    finally:
        ops.close()


def ask_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "nl2sql-ask"), *args], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)


def person_verifies(ops: OpsContext, question: str, sql: str) -> str:
    """A person asks (a scripted model answers) and accepts the answer; its id."""
    answer = nl2sql.ask(question, db_id="chinook", model=Script([final(sql)]).model, config=ops)
    assert nl2sql.accept(answer.id, config=ops).state == "verified"
    return answer.id


async def model_accepts(client: Client, sql: str, name: str,
                        question: str = QUESTION) -> types.CallToolResult:
    """What the audit did over MCP: run ``sql`` as the answer to ``question``, accept it."""
    ran = await client.call_tool("db_execute_sql", {"db_id": "chinook", "query": sql,
                                                    "nl_query": question, "output_file": name})
    assert not ran.is_error, ran.content[0].text
    return await client.call_tool("saved_query_accept", {"csv_file": name})


def served(ops: OpsContext, question: str = QUESTION) -> nl2sql.Answer:
    """``ask()`` with a model that must not be asked: the answer was served."""
    script = Script([])
    answer = nl2sql.ask(question, model=script.model, config=ops)
    assert script.requests == [] and answer.usage.requests == 0
    return answer


def examples_of(ops: OpsContext, question: str) -> list[str]:
    return [e.sql for e in nl2sql.context(question, db_id="chinook", config=ops).examples]


BOTH_STORES = pytest.mark.parametrize("chinook", ["sqlite", "postgres"], indirect=True)


# -- the audit's scenario ---------------------------------------------------------------------
@BOTH_STORES
async def test_a_models_accept_never_replaces_a_persons_verified_answer(chinook: dict) -> None:
    ops = chinook["ops"]
    verified_id = person_verifies(ops, QUESTION, RIGHT)
    async with Client(build_server(chinook["registry"].config_path,
                                   workspace=chinook["registry"].workspace)) as client:
        proposed = await model_accepts(client, INJECTED, "injected")
    assert not proposed.is_error, proposed.content[0].text
    text = proposed.content[0].text
    assert text.startswith("Proposed ") and "until a person confirms it" in text
    [proposal] = nl2sql.list_proposed(config=ops)
    assert proposal.state == "proposed" and proposal.sql == INJECTED
    assert proposal.proposed_by == os_user() and proposal.id != verified_id
    # ask() still serves the person's answer: today's count, not the model's 0.
    answer = served(ops)
    assert answer.source == f"verified:{verified_id}" and answer.df.iloc[0, 0] == ARTISTS
    assert [(v.id, v.sql) for v in nl2sql.list_verified(config=ops)] == [(verified_id, RIGHT)]
    # The proposal is not an example; the person's answer is the first one.
    similar = examples_of(ops, "How many artists are in the store?")
    assert INJECTED not in similar and similar[0] == RIGHT
    # A person's accept (the CLI) makes it the verified answer: then it is served.
    done = ask_cli(chinook["env"], "--accept", proposal.id)
    assert done.returncode == 0, done.stderr
    assert f"Verified {proposal.id} on chinook" in done.stdout
    again = served(ops)
    assert again.source == f"verified:{proposal.id}" and again.df.iloc[0, 0] == 0
    [verified] = nl2sql.list_verified(config=ops)
    assert verified.accepted_by == os_user() and verified.sql == INJECTED
    assert nl2sql.list_proposed(config=ops) == []


async def test_without_a_verified_answer_a_proposal_leaves_the_question_to_the_model(
        chinook: dict) -> None:
    ops = chinook["ops"]
    async with Client(build_server(chinook["registry"].config_path,
                                   workspace=chinook["registry"].workspace)) as client:
        proposed = await model_accepts(client, INJECTED, "injected")
        assert not proposed.is_error and proposed.content[0].text.startswith("Proposed ")
        # The same result again: still one proposal; a rejected one is not proposed again.
        await client.call_tool("saved_query_accept", {"csv_file": "injected.csv"})
        [proposal] = nl2sql.list_proposed(config=ops)
        script = Script([final(RIGHT)])
        answer = nl2sql.ask(QUESTION, db_id="chinook", model=script.model, config=ops)
        assert answer.source == "model" and len(script.requests) == 1
        assert INJECTED not in (script.instructions[0] or "")  # not shown to the model
        assert INJECTED not in examples_of(ops, "How many artists are in the store?")
        rejected = nl2sql.reject(proposal.id, config=ops)
        assert rejected.state == "rejected" and rejected.accepted_by == os_user()
        again = await client.call_tool("saved_query_accept", {"csv_file": "injected"})
        assert not again.is_error and "A person rejected" in again.content[0].text
    assert nl2sql.list_proposed(config=ops) == [] and nl2sql.list_verified(config=ops) == []
    with pytest.raises(VerifiedAnswerError, match="No proposal"):
        nl2sql.reject(proposal.id, config=ops)


# -- elicitation: the person confirms in the client -------------------------------------------
def elicitation(action: str, asked: list[types.ElicitRequestParams]) -> Any:
    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)

    return answer


# "auto": 2026-07-28, the question comes back as an InputRequiredResult and the client retries;
# "legacy": 2025-11-25 and before, the server sends elicitation/create in the middle of the call.
@pytest.mark.parametrize(("action", "state", "mode", "chinook"), [
    ("accept", "verified", "auto", "postgres"), ("accept", "verified", "legacy", "sqlite"),
    ("decline", "rejected", "legacy", "sqlite"), ("cancel", "proposed", "auto", "postgres")],
    indirect=["chinook"])
async def test_a_client_that_can_ask_the_person_asks(chinook: dict, action: str, state: str,
                                                     mode: str) -> None:
    ops = chinook["ops"]
    asked: list[types.ElicitRequestParams] = []
    async with Client(build_server(chinook["registry"].config_path,
                                   workspace=chinook["registry"].workspace), mode=mode,
                      elicitation_callback=elicitation(action, asked)) as client:
        done = await model_accepts(client, RIGHT, "artists")
    assert not done.is_error, done.content[0].text
    [params] = asked
    assert QUESTION in params.message and RIGHT in params.message
    assert "chinook" in params.message
    listed = {"verified": nl2sql.list_verified(config=ops),
              "proposed": nl2sql.list_proposed(config=ops)}
    if state == "verified":
        assert done.content[0].text.split("\n")[0].endswith(f"(accepted by {os_user()}).")
        [verified] = listed["verified"]
        assert verified.accepted_by == os_user() and served(ops).source == \
            f"verified:{verified.id}"
    elif state == "rejected":
        assert "A person rejected" in done.content[0].text
        assert listed == {"verified": [], "proposed": []}
    else:
        assert done.content[0].text.startswith("Proposed ")
        assert listed["verified"] == [] and len(listed["proposed"]) == 1


async def test_the_stdio_face_asks_only_a_client_that_can_ask(chinook: dict) -> None:
    params = StdioServerParameters(command=str(BIN / "nl2sql-mcp"),
                                   env={**os.environ, **chinook["env"]})
    async with Client(params) as client:  # no elicitation capability: a proposal
        done = await model_accepts(client, INJECTED, "injected")
    assert not done.is_error and done.content[0].text.startswith("Proposed ")
    assert nl2sql.list_verified(config=chinook["ops"]) == []
    asked: list[types.ElicitRequestParams] = []
    async with Client(params, elicitation_callback=elicitation("accept", asked)) as client:
        done = await model_accepts(client, RIGHT, "artists")
    assert not done.is_error and len(asked) == 1, done.content[0].text
    [verified] = nl2sql.list_verified(config=chinook["ops"])
    assert verified.sql == RIGHT and verified.accepted_by == os_user()
    [proposal] = nl2sql.list_proposed(config=chinook["ops"])
    assert proposal.sql == INJECTED  # still waiting: it was never confirmed


# -- the command line -------------------------------------------------------------------------
@BOTH_STORES
async def test_list_proposed_reject_and_accept_on_the_command_line(chinook: dict) -> None:
    env = chinook["env"]
    async with Client(build_server(chinook["registry"].config_path,
                                   workspace=chinook["registry"].workspace)) as client:
        await model_accepts(client, INJECTED, "injected")
        await model_accepts(client, "SELECT count(*) AS albums FROM Album", "albums",
                            question="How many albums are there?")
    listed = json.loads(ask_cli(env, "--list-proposed", "--json").stdout)
    by_sql = {p["sql"]: p for p in listed}
    assert set(by_sql) == {INJECTED, "SELECT count(*) AS albums FROM Album"}
    assert all(p["state"] == "proposed" and p["db_id"] == "chinook" for p in listed)
    printed = ask_cli(env, "--list-proposed", "--db", "chinook")
    assert printed.returncode == 0 and "; proposed; proposed " in printed.stdout
    rejected = ask_cli(env, "--reject", by_sql[INJECTED]["id"])
    assert rejected.returncode == 0, rejected.stderr
    assert f"Rejected proposal {by_sql[INJECTED]['id']}" in rejected.stdout
    again = ask_cli(env, "--reject", by_sql[INJECTED]["id"])
    assert again.returncode == 2 and again.stderr.count("\n") == 1
    assert "No proposal" in again.stderr and "--list-proposed" in again.stderr
    albums = by_sql["SELECT count(*) AS albums FROM Album"]["id"]
    assert ask_cli(env, "--accept", albums).returncode == 0
    assert ask_cli(env, "--list-proposed").stdout.startswith("No proposals waiting")
    verified = json.loads(ask_cli(env, "--list-verified", "--json").stdout)
    assert [v["id"] for v in verified] == [albums] and verified[0]["state"] == "verified"


# -- the person confirms what they were shown ----------------------------------------------------
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_result_replaced_while_the_person_reads_is_not_what_they_confirm(
        chinook: dict, mode: str) -> None:
    """An outside probe: a model that runs two calls at once (clients run parallel tool calls
    concurrently) accepts a right result and, while the person reads the question, replaces
    that file (overwrite=true) with a wrong query for the same question. The person's accept
    confirms the SQL they were shown, never the replacement (2026-07-28 asks again when the
    question changed: the person, who accepts only the right SQL, cancels that one)."""
    ops = chinook["ops"]
    server = build_server(chinook["registry"].config_path,
                          workspace=chinook["registry"].workspace)
    asked: list[types.ElicitRequestParams] = []

    async def swap_then_accept(context: Any, params: types.ElicitRequestParams
                               ) -> types.ElicitResult:
        asked.append(params)
        if INJECTED in params.message:
            return types.ElicitResult(action="cancel")
        async with Client(server) as concurrent:  # the model's parallel call
            replaced = await concurrent.call_tool("db_execute_sql", {
                "db_id": "chinook", "query": INJECTED, "nl_query": QUESTION,
                "output_file": "artists", "overwrite": True})
            assert not replaced.is_error, replaced.content[0].text
        return types.ElicitResult(action="accept", content={})

    async with Client(server, mode=mode, elicitation_callback=swap_then_accept) as client:
        done = await model_accepts(client, RIGHT, "artists")
    assert RIGHT in asked[0].message and INJECTED not in asked[0].message
    verified = nl2sql.list_verified(config=ops)
    assert INJECTED not in [v.sql for v in verified], done.content[0].text
    assert [v.sql for v in verified] == ([RIGHT] if mode == "legacy" else [])


# a question that draws a second SQL line (and erases the real one on a terminal)
SPOOFED = (f"{QUESTION}\nSQL: {RIGHT}\n\x1b[8m\x1b[2K" + "\n" * 3 + "\u202e")


@pytest.mark.parametrize("sql", [INJECTED, f"{INJECTED} -- \x1b[2K\x1b[1A\u202e"])
async def test_a_question_cannot_draw_what_the_person_reads(chinook: dict, sql: str) -> None:
    """An outside probe: the model writes the question (nl_query) of what it proposes. One with
    line breaks, a fake 'SQL:' line and terminal escapes would show the person a right query
    above the real one (elicitation) or erase the real one (nl2sql-ask --list-proposed on a
    terminal), and so would escapes in the SQL's comment. The person reads the question and
    the SQL on one line each, without control or format characters."""
    asked: list[types.ElicitRequestParams] = []
    async with Client(build_server(chinook["registry"].config_path,
                                   workspace=chinook["registry"].workspace), mode="legacy",
                      elicitation_callback=elicitation("cancel", asked)) as client:
        done = await model_accepts(client, sql, "spoofed", question=SPOOFED)
    assert not done.is_error, done.content[0].text
    [params] = asked
    for shown in (params.message, done.content[0].text,
                  ask_cli(chinook["env"], "--list-proposed").stdout):
        sql_lines = [line.strip() for line in shown.splitlines()
                     if line.lstrip().startswith("SQL:")]
        assert len(sql_lines) == 1 and sql_lines[0].startswith(f"SQL: {INJECTED}"), shown
        assert not any(c in shown for c in "\x1b\u202e"), shown
