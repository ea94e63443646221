"""What an answer cost and how long it took: ``Answer.cost_usd`` priced by genai-prices for the
model that answered (over HTTP, through the local OpenAI-compatible stub, in a child process)
and None for a model the catalogue has no price for; ``Answer.latency_ms``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from agent_scripts import Script, final
from genai_prices import Usage, calc_price
from stub_openai import StubOpenAI, tool_call

import nl2sql
from conftest import build_cache, sqlite_config, write_dbs_yaml
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.operations.ops_context import OpsContext

NL2SQL_ASK = Path(sys.executable).parent / "nl2sql-ask"
QUESTION = "How many tracks are in the Rock genre?"
ROCK = ("SELECT count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId "
        "WHERE g.Name = 'Rock'")


@pytest.fixture
def chinook_env(tmp_path: Path, sqlite_samples: dict[str, Path],
                stub_openai: StubOpenAI) -> dict[str, str]:
    shutil.copyfile(sqlite_samples["chinook"], tmp_path / "chinook.sqlite")
    path = write_dbs_yaml(tmp_path, [sqlite_config("chinook", tmp_path / "chinook.sqlite")])
    registry = DbConnectionConfigs.load(path, workspace=tmp_path / "ws")
    for config in registry:
        build_cache(config, registry.data_dir)
    return {**os.environ, "NL2SQL_CONFIG": str(path), "NL2SQL_WORKSPACE": str(tmp_path / "ws")}


def _ask_json(env: dict[str, str], model: str) -> dict:
    done = subprocess.run([str(NL2SQL_ASK), QUESTION, "--db", "chinook", "--model", model,
                           "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_priced_model_has_its_cost(chinook_env: dict[str, str],
                                     stub_openai: StubOpenAI) -> None:
    """The stub answers as gpt-4o-mini (a name genai-prices knows): 2 requests of 50 input and
    10 output tokens each cost what the catalogue says 100 + 20 tokens cost."""
    stub_openai.add(tool_call("db_execute_sql", db_id="chinook", query=ROCK),
                    tool_call("final_result", sql=ROCK, explanation="Counts the Rock tracks."))
    answer = _ask_json(chinook_env, "openai-chat:gpt-4o-mini")
    expected = calc_price(Usage(input_tokens=100, output_tokens=20), model_ref="gpt-4o-mini",
                          provider_id="openai").total_price
    assert expected > 0
    assert answer["cost_usd"] == pytest.approx(float(expected))
    assert answer["usage"]["requests"] == 2 and answer["latency_ms"] >= 0
    assert answer["confidence"] is None
    assert [(c["sql"], c["chosen"], c["group"]) for c in answer["candidates"]] == \
        [(ROCK, True, 1)]


def test_an_unpriced_model_has_no_cost(chinook_env: dict[str, str],
                                       stub_openai: StubOpenAI) -> None:
    stub_openai.add(tool_call("final_result", sql=ROCK, explanation="Counts the Rock tracks."))
    answer = _ask_json(chinook_env, stub_openai.MODEL_STRING)  # openai-chat:stub-model
    assert answer["cost_usd"] is None and answer["usage"]["requests"] == 1


def test_latency_is_the_wall_time_of_the_answer(bookstore_ops: OpsContext) -> None:
    import time

    ops = bookstore_ops

    def slow(messages, info):  # noqa: ANN001, ANN202
        time.sleep(0.2)
        return script.respond(messages, info)

    from pydantic_ai.models.function import FunctionModel

    script = Script([final("SELECT count(*) AS books FROM books")])
    started = time.monotonic()
    answer = nl2sql.ask("How many books?", db_id="bookstore",
                        model=FunctionModel(slow, model_name="scripted"), config=ops)
    elapsed_ms = (time.monotonic() - started) * 1000
    assert 200 <= answer.latency_ms <= elapsed_ms + 1
    assert answer.cost_usd is None  # a scripted model has no price
