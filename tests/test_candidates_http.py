"""SQL candidates end to end over HTTP: ``nl2sql-ask --candidates N`` in a child process with
``OPENAI_BASE_URL`` pointed at the local OpenAI-compatible stub (tests/stub_openai.py), which
answers each candidate's conversation from its own script. The majority wins with its share as
the confidence, a tie is settled by the selection step (its reason in ``--json``), failed
candidates count as failed, all failing exits 1 with the last errors, and ``--candidates 1``
sends exactly the requests of a plain run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_scripts import SELECTION_MARK, group_showing
from stub_openai import Reply, StubOpenAI, tool_call

from conftest import build_cache, sqlite_config, write_dbs_yaml
from nl2sql.config.registry import DbConnectionConfigs

NL2SQL_ASK = Path(sys.executable).parent / "nl2sql-ask"
QUESTION = "How many tracks are in the Rock genre?"
ROCK = ("SELECT count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId "
        "WHERE g.Name = 'Rock'")
ROCK_SUBQUERY = ("SELECT COUNT(t.TrackId) AS n FROM Track t WHERE t.GenreId = "
                 "(SELECT GenreId FROM Genre WHERE Name = 'Rock')")
ROCK_CTE = ("WITH rock AS (SELECT GenreId FROM Genre WHERE Name = 'Rock') "
            "SELECT count(*) FROM Track t JOIN rock r ON r.GenreId = t.GenreId")
METAL = ROCK.replace("'Rock'", "'Metal'")
METAL_2 = ROCK_SUBQUERY.replace("'Rock'", "'Metal'")
ALL_TRACKS = "SELECT count(*) AS tracks FROM Track"
BAD = "SELECT count(*) FROM Track WHERE nope = 1"


def answer(sql: str) -> Reply:
    return tool_call("final_result", sql=sql, explanation="Counts the tracks asked for.")


class Conversations:
    """A stub responder: each new conversation (no assistant message yet) takes the next
    script; later requests are answered from the script of the conversation their first tool
    call id belongs to. The selection step's request is answered from ``selection``."""

    def __init__(self, scripts: list[list[Reply]],
                 selection: list[Reply | Callable[[str], Reply]] = ()) -> None:
        self.scripts, self.selection = scripts, list(selection)
        self.started = 0
        self.owners: list[int | None] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        prompt = next((str(m.get("content")) for m in messages if m["role"] == "user"), "")
        if SELECTION_MARK in prompt:
            self.owners.append(None)
            reply = self.selection.pop(0)
            return reply(prompt) if callable(reply) else reply
        calls = [c["id"] for m in messages if m["role"] == "assistant"
                 for c in m.get("tool_calls") or []]
        if calls:
            owner, step = int(calls[0].split("_")[1]), sum(
                1 for m in messages if m["role"] == "assistant")
        else:
            owner, step, self.started = self.started, 0, self.started + 1
        self.owners.append(owner)
        reply = self.scripts[owner][step]
        for call in reply.tool_calls:
            call["id"] = f"c_{owner}_{step}"
        return reply


@pytest.fixture
def env(tmp_path: Path, sqlite_samples: dict[str, Path], stub_openai: StubOpenAI,
        ) -> dict[str, str]:
    shutil.copyfile(sqlite_samples["chinook"], tmp_path / "chinook.sqlite")
    path = write_dbs_yaml(tmp_path, [sqlite_config("chinook", tmp_path / "chinook.sqlite")],
                          agent={"retries": 1})
    registry = DbConnectionConfigs.load(path, workspace=tmp_path / "ws")
    for config in registry:
        build_cache(config, registry.data_dir)
    return {**os.environ, "NL2SQL_CONFIG": str(path), "NL2SQL_WORKSPACE": str(tmp_path / "ws")}


def ask(env: dict[str, str], stub: StubOpenAI, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(NL2SQL_ASK), QUESTION, "--db", "chinook", "--model",
                           stub.MODEL_STRING, *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_majority_wins_with_its_share_as_confidence(env: dict[str, str],
                                                        stub_openai: StubOpenAI) -> None:
    stub_openai.responder = Conversations([[answer(ROCK)], [answer(METAL)],
                                           [answer(ROCK_SUBQUERY)], [answer(ALL_TRACKS)],
                                           [answer(ROCK_CTE)]])
    done = ask(env, stub_openai, "--candidates", "5", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["sql"] in {ROCK, ROCK_SUBQUERY, ROCK_CTE} and result["confidence"] == 0.6
    assert result["df"] == [{"tracks": 1297}] or list(result["df"][0].values()) == [1297]
    assert sorted(c["group"] for c in result["candidates"]) == [1, 1, 1, 2, 3]
    assert sum(c["chosen"] for c in result["candidates"]) == 1
    assert result["cost_usd"] is None and result["latency_ms"] > 0  # the stub model: unpriced
    assert len(stub_openai.requests) == 5
    temperatures = sorted(r.get("temperature", -1) for r in stub_openai.requests)
    assert temperatures[0] == -1 and temperatures[1:] == [0.8] * 4  # sent over the wire


def test_the_text_output_says_how_many_agree_and_what_it_cost(env: dict[str, str],
                                                              stub_openai: StubOpenAI) -> None:
    stub_openai.responder = Conversations([[answer(ROCK)], [answer(BAD), answer(BAD)],
                                           [answer(ROCK_CTE)], [answer(METAL)],
                                           [answer(ROCK_SUBQUERY)]])
    done = ask(env, stub_openai, "--candidates", "5")
    assert done.returncode == 0, done.stderr
    assert "3 of 5 candidates agree (60%), 1 other result(s), 1 failed" in done.stdout
    assert "cost unknown (no price for this model)" in done.stdout
    assert "1297" in done.stdout


def test_a_tie_is_settled_by_the_selection_step(env: dict[str, str],
                                                stub_openai: StubOpenAI) -> None:
    reason = "This group filters on the genre the question names."
    stub_openai.responder = Conversations(
        [[answer(METAL)], [answer(ROCK)], [answer(METAL_2)], [answer(ROCK_SUBQUERY)],
         [answer(ALL_TRACKS)]],
        selection=[lambda prompt: tool_call("final_result", reason=reason,
                                            group=group_showing(prompt, "'Rock'"))])
    done = ask(env, stub_openai, "--candidates", "5", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["sql"] in {ROCK, ROCK_SUBQUERY} and result["confidence"] == 0.4
    assert result["selection_reason"] == reason
    selection = next(r for r in stub_openai.requests
                     if SELECTION_MARK in json.dumps(r["messages"]))
    shown = json.dumps(selection["messages"])
    assert "374" in shown and "1297" in shown and "3503" not in shown
    assert len(stub_openai.requests) == 6


def test_all_candidates_failing_exits_1_with_the_last_errors(env: dict[str, str],
                                                             stub_openai: StubOpenAI) -> None:
    stub_openai.responder = Conversations([[answer(BAD), answer(BAD)] for _ in range(3)])
    done = ask(env, stub_openai, "--candidates", "3")
    assert done.returncode == 1 and done.stdout == ""
    error = done.stderr.splitlines()[-1]  # after the context index's log lines
    assert error.startswith("error: No answer for chinook: all 3 candidates failed")
    assert error.count("no such column: nope") == 3 and "Traceback" not in done.stderr


def test_one_candidate_sends_exactly_the_plain_runs_requests(
        env: dict[str, str], stub_openai: StubOpenAI, tmp_path: Path) -> None:
    bodies = {}
    for name, extra in (("plain", ()), ("one", ("--candidates", "1"))):
        stub_openai.requests.clear()
        stub_openai.responder = Conversations(
            [[tool_call("db_execute_sql", db_id="chinook", query=BAD), answer(ROCK)]])
        # a fresh workspace each time: saved results become examples for later questions
        done = ask({**env, "NL2SQL_WORKSPACE": str(tmp_path / name)}, stub_openai, *extra)
        assert done.returncode == 0, done.stderr
        bodies[name] = [json.dumps(body, sort_keys=True) for body in stub_openai.requests]
    assert len(bodies["plain"]) == len(bodies["one"]) == 2
    assert bodies["plain"] == bodies["one"]
    assert "temperature" not in bodies["one"][0] and "How to write this query" not in \
        bodies["one"][0]
