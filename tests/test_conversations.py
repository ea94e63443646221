"""Conversations keep what was said and done, never the context: a three-turn conversation on
the annotated Chinook sample (the full-size context of default settings) sends its earlier turns
as history, whatever the context weighs, and turns stored with their context still load."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import event
from agent_scripts import Script, final, tool, tool_pairs_complete
from pydantic_ai.messages import (ModelMessage, ModelMessagesTypeAdapter, ModelRequest,
                                  ModelResponse, ToolReturnPart, UserPromptPart)

import nl2sql
from conftest import SAMPLE_DATA, SampleDb, build_cache, sqlite_config
from nl2sql.access.caller import Caller
from nl2sql.agents.conversations import PAGE_TURNS, ConversationStore
from nl2sql.agents.history import CONTEXT_OMITTED
from nl2sql.config.agent_settings import AgentSettings
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import StoreError
from nl2sql.operations.ops_context import OpsContext

ROCK = "SELECT count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId " \
       "WHERE g.Name = 'Rock'"
JAZZ = ROCK.replace("'Rock'", "'Jazz'")
BOTH = ("SELECT g.Name, count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId "
        "WHERE g.Name IN ('Rock', 'Jazz') GROUP BY g.Name")


@pytest.fixture
def annotated_chinook(make_registry: Callable[..., DbConnectionConfigs],
                      tmp_path: Path) -> Iterator[OpsContext]:
    """A copy of the real Chinook SQLite file, annotated by the pipeline (samples, enums, the
    value index), with default settings (no ``agent:`` block)."""
    path = Path(shutil.copy(SAMPLE_DATA / "chinook" / "chinook.sqlite", tmp_path))
    registry = make_registry(sqlite_config("chinook", path))
    annotate_database(registry.get("chinook"), registry.data_dir)
    ops = OpsContext(registry)
    yield ops
    ops.close()


def _said(messages: list[ModelMessage]) -> str:
    """Everything the messages say: prompts, tool arguments and results, retries."""
    return " ".join(json.dumps(getattr(p, "args", None)) + str(getattr(p, "content", ""))
                    for m in messages for p in m.parts)


def test_a_third_turn_sees_the_first_two_with_a_full_size_context(
        annotated_chinook: OpsContext) -> None:
    ops = annotated_chinook
    typo = ROCK.replace("g.Name", "g.GenreName")
    first = Script([final(typo), final(ROCK, "Counts the Rock tracks.")])  # one retry
    rock = nl2sql.ask("How many Rock tracks are there?", db_id="chinook", model=first.model,
                      config=ops, conversation_id="c")
    assert rock.df.iloc[0]["tracks"] == 1297 and len(rock.attempts) == 2
    context = first.instructions[0] or ""
    # Full size: the whole annotated schema, with two requests of this turn holding it.
    assert all(f"CREATE TABLE {table}" in context
               for table in ("Album", "Artist", "InvoiceLine", "PlaylistTrack", "Employee"))
    budget = AgentSettings().history_tokens
    assert len(first.instructions) == 2 and 2 * len(context) // 4 > budget // 2

    second = Script([tool("db_search_schema", question="jazz tracks"),
                     final(JAZZ, "Counts the Jazz tracks.")])
    jazz = nl2sql.ask("And how many in Jazz?", model=second.model, config=ops,
                      conversation_id="c")
    assert jazz.db_id == "chinook" and jazz.df.iloc[0]["tracks"] == 130
    assert "How many Rock tracks are there?" in _said(second.requests[0])

    third = Script([final(BOTH, "Both genres side by side.")])
    nl2sql.ask("Show both side by side", model=third.model, config=ops, conversation_id="c")
    sent = third.requests[0]
    said = _said(sent)
    for earlier in ("How many Rock tracks are there?", typo, "GenreName", ROCK,
                    "And how many in Jazz?", JAZZ, "1297"):
        assert earlier in said, earlier
    assert said.count("Show both side by side") == 1 and tool_pairs_complete(sent)
    assert all(isinstance(m, ModelRequest | ModelResponse) for m in sent)
    assert all(m.instructions is None for m in sent[:-1] if isinstance(m, ModelRequest))
    assert "CREATE TABLE Track" in (third.instructions[0] or "")  # rebuilt for this turn

    store = ConversationStore(ops.store, ops.caller.name)
    turns = store.turns("c")
    assert len(turns) == 3 and sum(t.tokens for t in turns) < budget // 4
    for turn in turns:
        stored = turn.messages_json.decode()
        assert "CREATE TABLE" not in stored and context[:200] not in stored
        assert '"instructions":null' in stored.replace(" ", "")
    assert CONTEXT_OMITTED in turns[1].messages_json.decode()  # db_search_schema's text


def test_a_turn_stored_with_its_context_loads_without_it(tmp_path: Path) -> None:
    store = ConversationStore.in_data_dir(tmp_path)
    context = "CREATE TABLE t (a INT);\n" * 5000  # ~30,000 tokens, far past the budget
    old = [ModelRequest(parts=[UserPromptPart("How many rows in t?")], instructions=context),
           ModelResponse(parts=[final("SELECT count(*) FROM t")]),
           ModelRequest(parts=[], instructions=context)]
    # The old writer: the run's messages as they were, instructions and all.
    store.append("old", request_id="r1", question="How many rows in t?", db_id="x",
                 answer=None, messages=old)
    assert len(store.turns("old")[0].messages_json) > 100_000
    history = store.history("old", AgentSettings().history_tokens)
    assert "How many rows in t?" in _said(history) and "CREATE TABLE" not in _said(history)
    assert all(m.instructions is None for m in history if isinstance(m, ModelRequest))
    assert len(history) == 2  # a request left with no parts is dropped
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history))


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)  # history is backend-neutral
def test_a_follow_up_to_a_verified_answer_sees_its_question_and_sql(
        chinook_ops: OpsContext, chinook: SampleDb) -> None:
    first = Script([final(ROCK, "Counts the Rock tracks.")])
    nl2sql.ask("How many Rock tracks are there?", db_id="chinook", model=first.model,
               config=chinook_ops).accept()
    served = nl2sql.ask("How many Rock tracks are there?", model=Script([]).model,
                        config=chinook_ops, conversation_id="v")
    assert served.source.startswith("verified:")
    follow = Script([final(JAZZ)])
    nl2sql.ask("And in Jazz?", model=follow.model, config=chinook_ops, conversation_id="v")
    said = _said(follow.requests[0])
    assert "How many Rock tracks are there?" in said and ROCK in said


def test_a_follow_up_on_another_database_is_told_where_the_earlier_sql_ran(
        make_registry: Callable[..., DbConnectionConfigs], tmp_path: Path) -> None:
    """Turn 1 on chinook, turn 2 on a second database ("And in the copy?"): turn 1 reaches turn
    2's model condensed, saying it ran on chinook (its tool calls, whose SQL names chinook's
    tables, are not replayed as if made here); turn 3, back on the copy, gets turn 2 whole."""
    paths = [Path(shutil.copy(SAMPLE_DATA / "chinook" / "chinook.sqlite", tmp_path / name))
             for name in ("a.sqlite", "b.sqlite")]
    registry = make_registry(sqlite_config("chinook", paths[0]), sqlite_config("copy", paths[1]))
    for config in registry:
        build_cache(config, registry.data_dir)
    ops = OpsContext(registry)
    try:
        first = Script([tool("db_execute_sql", query=ROCK), final(ROCK, "Counts Rock.")])
        nl2sql.ask("How many Rock tracks?", db_id="chinook", model=first.model, config=ops,
                   conversation_id="x")
        second = Script([final(JAZZ, "Counts Jazz.")])
        nl2sql.ask("And Jazz in the copy?", db_id="copy", model=second.model, config=ops,
                   conversation_id="x")
        sent = second.requests[0]
        said = _said(sent)
        assert "(On database 'chinook', not 'copy'" in said and ROCK in said
        assert "How many Rock tracks?" in said and "Counts Rock." in said
        assert [type(m) for m in sent] == [ModelRequest, ModelResponse, ModelRequest]
        third = Script([final(BOTH, "Both.")])
        nl2sql.ask("Both, still in the copy", model=third.model, config=ops,
                   conversation_id="x")
        said = _said(third.requests[0])
        assert said.count("(On database 'chinook', not 'copy'") == 1 and JAZZ in said
        assert tool_pairs_complete(third.requests[0])
    finally:
        ops.close()


def test_another_users_conversation_is_refused_before_the_model_is_asked(
        annotated_chinook: OpsContext) -> None:
    """Continuing a conversation someone else started is refused at once: no model request is
    spent on a turn that could not be stored."""
    ops = annotated_chinook
    nl2sql.ask("How many Rock tracks are there?", db_id="chinook",
               model=Script([final(ROCK)]).model, config=ops, conversation_id="theirs")
    other = ops.for_caller(Caller("bo"), "python")
    script = Script([final(JAZZ)])
    with pytest.raises(StoreError, match="Conversation 'theirs' is another user's"):
        nl2sql.ask("And how many in Jazz?", model=script.model, config=other,
                   conversation_id="theirs")
    assert script.requests == []
    assert ConversationStore(ops.store, "bo").turns("theirs") == []


def test_a_long_conversation_reads_only_the_turns_its_history_can_hold(tmp_path: Path) -> None:
    """The 600th turn costs what the 6th did: the history is read back from the newest turn a
    page at a time, and reading stops at the first turn the budget cannot hold."""
    store = ConversationStore.in_data_dir(tmp_path)
    for i in range(600):
        question = f"Question {i}: how many rows in t{i}? " + "padding " * 40
        store.append("long", request_id=f"r{i}", question=question, db_id="x", answer=None,
                     messages=[ModelRequest(parts=[UserPromptPart(question)]),
                               ModelResponse(parts=[final(f"SELECT count(*) FROM t{i}")])])
    statements: list[str] = []
    engine = store.turn_store.database.engine
    listen = lambda *args: statements.append(args[2])  # noqa: E731  (conn, cursor, statement)
    event.listen(engine, "before_cursor_execute", listen)
    try:
        budget = AgentSettings().history_tokens
        recent = store.recent_turns("long", budget)
        history = store.history("long", budget)
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    assert [t.seq for t in recent] == list(range(600 - len(recent) + 1, 601))
    oldest = recent[0].seq
    assert 20 <= len(recent) <= 100 and sum(t.tokens for t in recent) <= budget
    before = store.turns("long")[oldest - 2]  # seq oldest - 1: the next one back did not fit
    assert sum(t.tokens for t in recent) + before.tokens > budget
    said = _said(history)
    assert f"Question {oldest - 1}:" in said and f"Question {oldest - 2}:" not in said
    reads = [s for s in statements if "FROM turns" in s]  # pages of PAGE_TURNS, twice
    assert len(reads) == 2 * (len(recent) // PAGE_TURNS + 1) and all("LIMIT" in s for s in reads)
    # At least the two newest turns, whatever their size (the database and the retrieval).
    assert [t.seq for t in store.recent_turns("long", 0)] == [599, 600]
    assert store.history("long", 0) == [] and store.recent_turns("none", budget) == []


def test_a_turn_too_long_for_the_history_is_sent_condensed_not_dropped(tmp_path: Path) -> None:
    """A turn whose result previews alone pass the budget (a wide table's rows) still tells the
    follow-up its question, explanation and SQL; older turns go on as far as the budget reaches."""
    store = ConversationStore.in_data_dir(tmp_path)
    budget = AgentSettings().history_tokens
    # A preview of 10 rows of an 80-column table: ~7,000 tokens.
    wide = "\n".join("| " + " | ".join(f"row {r} value of column {c:02d} ..." for c in range(80))
                     + " |" for r in range(10))
    turns = [("How many rows in t?", "SELECT count(*) FROM t", "Counts t.", "1 row"),
             ("List every column of t", "SELECT * FROM t", "All of t.", wide)]
    for i, (question, sql, explanation, preview) in enumerate(turns):
        store.append("wide", request_id=f"r{i}", question=question, db_id="x",
                     answer={"sql": sql, "explanation": explanation},
                     messages=[ModelRequest(parts=[UserPromptPart(question)]),
                               ModelResponse(parts=[final(sql, explanation)]),
                               ModelRequest(parts=[ToolReturnPart("final_result", preview)])])
    whole = store.turns("wide")[1]
    assert whole.tokens > budget
    history = store.history("wide", budget)
    said = _said(history)
    assert "List every column of t" in said and "SELECT * FROM t" in said and "All of t." in said
    assert "row 9 value of column 79" not in said  # the preview that did not fit
    assert "How many rows in t?" in said and "1 row" in said  # the older turn, whole
    assert [type(m) for m in history] == [ModelRequest, ModelResponse, ModelRequest,
                                          ModelRequest, ModelResponse]
    # A turn stored without its answer cannot be condensed: the history stops there.
    store.append("bare", request_id="b", question="List every column of t", db_id="x",
                 answer=None, messages=[ModelRequest(parts=[UserPromptPart(wide)])])
    assert store.history("bare", budget) == []
