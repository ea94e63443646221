"""The NL2SQL and catalog agents with scripted models (no model requests): fixing SQL after
``ModelRetry``, guard refusals, retries running out, the catalog choosing among databases, and
conversations that survive a restart."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agent_scripts import Script, choose, final, text, tool, tool_pairs_complete

import nl2sql
from conftest import SampleDb, build_cache, write_dbs_yaml
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import ModelSetupError, NoAnswerError
from nl2sql.config.agent_settings import AgentSettings
from nl2sql.operations.ops_context import OpsContext

ROCK = {"sqlite": "SELECT count(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId "
                  "WHERE g.Name = 'Rock'",
        "postgres": "SELECT count(*) AS tracks FROM track t JOIN genre g ON g.genre_id = "
                    "t.genre_id WHERE g.name = 'Rock'"}
ROCK_TYPO = {"sqlite": ROCK["sqlite"].replace("g.Name", "g.GenreName"),
             "postgres": ROCK["postgres"].replace("g.name", "g.genre_name")}


# -- the NL2SQL agent -------------------------------------------------------------------------

def test_a_wrong_column_is_fixed_after_the_databases_message(chinook_ops: OpsContext,
                                                             chinook: SampleDb) -> None:
    backend = chinook.backend
    script = Script([tool("db_execute_sql", query=ROCK_TYPO[backend]),
                     final(ROCK[backend], "Counts the Rock tracks.")])
    answer = nl2sql.ask("How many tracks are in the Rock genre?", db_id="chinook",
                        model=script.model, config=chinook_ops)
    assert "genrename" in script.feedback(1).lower().replace("_", "")  # the database's message
    assert answer.sql == ROCK[backend] and answer.db_id == "chinook"
    assert answer.row_count == 1 and answer.df.iloc[0]["tracks"] == 1297
    assert [a.error is None for a in answer.attempts] == [False, True]
    assert answer.attempts[-1].sql == answer.sql and answer.usage.requests == 2
    metadata = json.loads(Path(answer.csv_path).with_name(
        Path(answer.csv_path).name.replace(".csv", ".metadata.json")).read_text())
    assert metadata["natural_language_query"] == "How many tracks are in the Rock genre?"
    assert metadata["sql_query"] == ROCK[backend]
    assert "Rock" in script.instructions[0] and "dialect" in script.instructions[0].lower()


def test_a_guard_refusal_then_a_select(bookstore_ops: OpsContext) -> None:
    script = Script([final("UPDATE books SET price = 0"),
                     final("SELECT count(*) AS books FROM books", "Counts the books.")])
    answer = nl2sql.ask("How many books?", model=script.model, config=bookstore_ops)
    refusal = script.feedback(1)
    assert "read-only" in refusal.lower() or "not allowed" in refusal.lower(), refusal
    assert answer.attempts[0].error and answer.attempts[-1].error is None
    assert answer.db_id == "bookstore" and int(answer.df.iloc[0, 0]) > 0


def test_chinook_guard_refusal_then_select_and_retries_running_out(
        chinook_ops: OpsContext, chinook: SampleDb) -> None:
    track = "Track" if chinook.backend == "sqlite" else "track"
    script = Script([tool("db_execute_sql", query=f"DELETE FROM {track}"),
                     final(f"SELECT count(*) AS tracks FROM {track}")])
    answer = nl2sql.ask("How many tracks?", db_id="chinook", model=script.model,
                        config=chinook_ops)
    assert "read-only" in script.feedback(1).lower() and answer.df.iloc[0, 0] == 3503
    assert answer.attempts[0].error and answer.attempts[-1].error is None

    bad = f"SELECT titel FROM {track}"
    with pytest.raises(NoAnswerError) as raised:
        nl2sql.ask("List the titles", db_id="chinook", model=Script([final(bad)] * 10).model,
                   config=chinook_ops)
    assert f"`{bad}`" in str(raised.value) and "titel" in str(raised.value).split("failed:")[1]


def test_retries_running_out_name_the_last_sql_and_error(bookstore_ops: OpsContext) -> None:
    bad = "SELECT titel FROM books"
    script = Script([final(bad)] * 10)
    with pytest.raises(NoAnswerError) as raised:
        nl2sql.ask("List the titles", model=script.model, config=bookstore_ops)
    message = str(raised.value)
    assert "`SELECT titel FROM books`" in message and "no such column: titel" in message
    assert "\n" not in message and len(raised.value.attempts) >= 2


def test_the_request_budget_is_bounded(bookstore_ops: OpsContext, tmp_path: Path) -> None:
    bookstore_ops.configs.agent = AgentSettings(max_requests=3)
    script = Script([tool("db_execute_sql", query="SELECT nope FROM books")]
                    * 10)
    with pytest.raises(NoAnswerError, match="budget") as raised:
        nl2sql.ask("List the titles", model=script.model, config=bookstore_ops)
    assert "SELECT nope FROM books" in str(raised.value) and len(script.requests) == 3


def test_an_empty_result_is_questioned_once(bookstore_ops: OpsContext) -> None:
    empty = "SELECT title FROM books WHERE title = 'no such book'"
    script = Script([final(empty), final(empty, "No book has that title.")])
    answer = nl2sql.ask("Is there a book called no such book?", model=script.model,
                        config=bookstore_ops)
    assert "no rows" in script.feedback(1) and answer.row_count == 0 and answer.df.empty


def test_a_json_text_answer_works_too(bookstore_ops: OpsContext) -> None:
    script = Script([text("Sure."), text('```json\n{"sql": "SELECT count(*) AS n FROM authors", '
                                          '"explanation": "Counts authors."}\n```')])
    answer = nl2sql.ask("How many authors?", model=script.model, config=bookstore_ops)
    assert "JSON object" in script.feedback(1)
    assert answer.sql == "SELECT count(*) AS n FROM authors" and answer.row_count == 1


def test_no_model_is_one_error_naming_all_three_settings(bookstore_ops: OpsContext) -> None:
    with pytest.raises(ModelSetupError) as raised:
        nl2sql.ask("How many books?", config=bookstore_ops)
    assert all(s in str(raised.value) for s in ("--model", "NL2SQL_MODEL", "model:"))


def test_a_users_database_notes_reach_the_prompt(bookstore_ops: OpsContext) -> None:
    notes = bookstore_ops.data_dir / "prompts" / "nl2sql" / "db_specific"
    notes.mkdir(parents=True)
    (notes / "bookstore.md").write_text("Prices are in euro cents.")
    script = Script([final("SELECT count(*) FROM books")])
    nl2sql.ask("How many books?", model=script.model, config=bookstore_ops)
    assert "Prices are in euro cents." in script.instructions[0]
    assert "strftime" in script.instructions[0]  # the SQLite guidance


# -- ask() inside a running event loop (as Jupyter runs it) -----------------------------------

async def test_ask_works_inside_a_running_event_loop(bookstore_ops: OpsContext) -> None:
    asyncio.get_running_loop()  # this test body runs in a loop, as a notebook cell does
    script = Script([final("SELECT count(*) AS n FROM books")])
    answer = nl2sql.ask("How many books?", model=script.model, config=bookstore_ops)
    assert answer.row_count == 1
    again = await nl2sql.ask_async("How many books?", model=Script(
        [final("SELECT count(*) AS n FROM books")]).model, config=bookstore_ops)
    assert again.sql == answer.sql
    assert "```sql" in answer._repr_markdown_() and "| n |" in answer._repr_markdown_()
    html = answer._repr_html_()  # what Jupyter shows: it prefers HTML to Markdown
    assert "<pre><code class=\"language-sql\">SELECT count(*) AS n FROM books</code></pre>" in html
    assert "<table" in html and "<th>n</th>" in html and "<td>200</td>" in html
    assert "1 rows in " in html and "1 model request(s)" in html


def test_a_prompt_injected_model_cannot_leave_its_database_or_replace_a_file(
        tmp_path: Path) -> None:
    """The model does what text stored in a row might tell it: query another configured
    database, read its results, overwrite a user's file. The NL2SQL agent's tools are pinned
    to the database of the question, so none of it happens."""
    from conftest import run_sqlite_script, sqlite_config

    from nl2sql.operations import db_execute_sql_op
    from nl2sql.workspace.results import safe_name_from_query

    vault = tmp_path / "vault.sqlite"
    run_sqlite_script(vault, "CREATE TABLE secret (value TEXT); "
                             "INSERT INTO secret VALUES ('TOP-SECRET-VALUE');")
    registry = DbConnectionConfigs.load(
        write_dbs_yaml(tmp_path, [sqlite_config("vault", vault)]), workspace=tmp_path / "ws")
    ops = OpsContext(registry)
    for db_id in ("bookstore", "vault"):
        build_cache(ops.config(db_id), ops.data_dir)
    question = "How many books?"
    # A user's results: one of the other database, one named as ask() names this question's.
    db_execute_sql_op(ops, "vault", "SELECT value FROM secret", output_file="report.csv")
    theirs = db_execute_sql_op(ops, "bookstore", "SELECT 'mine' AS owner",
                               output_file=safe_name_from_query(question) + ".csv")
    files = {p.name: p.read_bytes() for p in (tmp_path / "ws").iterdir() if p.is_file()
             and not p.name.startswith(".")}
    script = Script([
        tool("db_execute_sql", db_id="vault", query="SELECT value FROM secret"),
        tool("db_execute_sql", query="SELECT 1 AS x", output_file="report.csv", overwrite=True),
        tool("db_search_schema", question="secret", db_id="vault"),
        tool("db_get_row_by_id", db_id="vault", table="secret", row_id=1),
        tool("db_execute_sql", query="SELECT value FROM secret"),  # runs on bookstore
        tool("csv_head", csv_file="report.csv"),
        tool("csv_tail", csv_file="report.csv"),
        tool("saved_query_get_details", csv_file="report.csv"),
        tool("saved_queries_list"),
        final("SELECT count(*) AS books FROM books")])
    try:
        answer = nl2sql.ask(question, db_id="bookstore", model=script.model, config=ops)
    finally:
        ops.close()
    sent = json.dumps([[m.parts for m in request] for request in script.requests], default=str)
    assert "TOP-SECRET-VALUE" not in sent  # nothing of the other database was read
    for step in range(1, 5):  # db_id, output_file, overwrite: not parameters the model has
        assert "extra_forbidden" in script.feedback(step), step
    assert "no such table: secret" in script.feedback(5)
    for step in (6, 7, 8):
        assert "'report.csv' is not a result of the database bookstore" in script.feedback(step)
    listed = script.feedback(9)
    assert "report.csv" not in listed and theirs.csv_filename in listed
    assert {name: (tmp_path / "ws" / name).read_bytes() for name in files} == files  # kept
    assert answer.db_id == "bookstore" and answer.df.iloc[0, 0] > 0
    assert Path(answer.csv_path).name not in files  # the answer got a file of its own


# -- the catalog agent ------------------------------------------------------------------------

@pytest.fixture
def three_databases(tmp_path: Path, sqlite_samples: dict[str, Path]) -> OpsContext:
    import shutil

    from conftest import sqlite_config

    configs = []
    for name in ("chinook", "northwind"):
        shutil.copyfile(sqlite_samples[name], tmp_path / f"{name}.sqlite")
        configs.append(sqlite_config(name, tmp_path / f"{name}.sqlite"))
    path = write_dbs_yaml(tmp_path, configs)
    registry = DbConnectionConfigs.load(path, workspace=tmp_path / "ws")
    for config in registry:
        build_cache(config, registry.data_dir)
    ops = OpsContext(registry)
    yield ops
    ops.close()


def test_the_catalog_picks_among_three_and_an_invented_id_is_retried(
        three_databases: OpsContext) -> None:
    script = Script([choose("music_store"), choose("chinook"),
                     final("SELECT count(*) AS tracks FROM Track")])
    answer = nl2sql.ask("How many tracks are there?", model=script.model,
                        config=three_databases)
    assert answer.db_id == "chinook" and answer.df.iloc[0, 0] == 3503
    assert "'music_store' is not one of the candidates" in script.feedback(1)
    catalog_prompt = script.instructions[0]
    assert all(db in catalog_prompt for db in ("chinook", "northwind", "bookstore"))


def test_one_configured_database_needs_no_catalog_call(chinook_ops: OpsContext) -> None:
    script = Script([final("SELECT count(*) AS n FROM " + (
        "Track" if chinook_ops.config("chinook").type.value == "sqlite" else "track"))])
    answer = nl2sql.ask("How many tracks?", model=script.model, config=chinook_ops)
    assert answer.db_id == "chinook" and len(script.requests) == 1


# -- conversations ----------------------------------------------------------------------------

def test_a_follow_up_after_a_restart_sees_the_earlier_turn(tmp_path: Path) -> None:
    def fresh_ops() -> OpsContext:  # a new process: nothing shared but the files
        return OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")

    ops = fresh_ops()
    build_cache(ops.config("bookstore"), ops.data_dir)
    first = Script([tool("db_execute_sql",
                         query="SELECT count(*) AS n FROM orders"),
                    final("SELECT count(*) AS n FROM orders", "Counts orders.")])
    nl2sql.ask("How many orders?", model=first.model, config=ops, conversation_id="c1",
               request_id="r1")
    ops.close()

    ops = fresh_ops()
    follow = Script([final("SELECT count(*) AS n FROM orders WHERE ordered_at >= '2024-01-01'")])
    answer = nl2sql.ask("and only for 2024?", model=follow.model, config=ops,
                        conversation_id="c1", request_id="r2")
    sent = follow.requests[0]
    earlier = " ".join(str(getattr(p, "content", "")) for m in sent for p in m.parts)
    assert "How many orders?" in earlier and tool_pairs_complete(sent)
    assert answer.conversation_id == "c1" and answer.db_id == "bookstore"

    # A retried call with the same request id returns the stored turn: no new model request.
    again = nl2sql.ask("and only for 2024?", model=Script([]).model, config=ops,
                       conversation_id="c1", request_id="r2")
    assert again.sql == answer.sql and again.df is not None
    from nl2sql.agents.conversations import ConversationStore

    store = ConversationStore(ops.store, ops.caller.name)
    assert [len(store.turns("c1"))] == [2] and store.list()[0].turns == 2
    assert store.delete("c1") == 2 and store.list() == []
    ops.close()


def test_trimming_drops_oldest_turns_whole_and_keeps_tool_pairs(tmp_path: Path) -> None:
    from nl2sql.agents.conversations import ConversationStore

    ops = OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    build_cache(ops.config("bookstore"), ops.data_dir)
    for i in range(4):
        script = Script([tool("db_execute_sql",
                              query=f"SELECT {i} AS n"), final(f"SELECT {i} AS n")])
        nl2sql.ask(f"question {i}", model=script.model, config=ops, conversation_id="c")
    ops.close()
    store = ConversationStore(ops.store, ops.caller.name)
    turns = store.turns("c")
    budget = turns[-1].tokens + turns[-2].tokens + 1
    history = store.history("c", budget)
    words = " ".join(str(getattr(p, "content", "")) for m in history for p in m.parts)
    assert "question 3" in words and "question 2" in words and "question 1" not in words
    assert tool_pairs_complete(history)
    assert store.history("c", 0) == []


def test_import_nl2sql_stays_light() -> None:
    import subprocess
    import sys

    script = ("import sys, nl2sql\n"
              "print(sorted(m for m in ('pandas', 'pydantic_ai', 'sqlalchemy', 'sqlglot', "
              "'numpy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_the_status_says_what_runs_now(chinook_ops: OpsContext, chinook: SampleDb) -> None:
    """nl2sql-ask's spinner said 'Asking the model…' while the database ran the query."""
    from nl2sql._helpers import status_to

    track = "Track" if chinook.backend == "sqlite" else "track"
    script = Script([tool("db_execute_sql", query=f"SELECT count(*) AS n FROM {track}"),
                     final(f"SELECT count(*) AS n FROM {track}")])
    said: list[str] = []
    with status_to(said.append):
        nl2sql.ask("How many tracks?", db_id="chinook", model=script.model, config=chinook_ops)
    asking, running = "Asking function:scripted…", "Running the query on database 'chinook'…"
    chosen = said.pop(1)  # the tables the context gave the model
    assert chosen.startswith("Using 11 tables of 'chinook' (") and f"{track}" in chosen, chosen
    assert said == ["Finding the tables of database 'chinook' the question needs…", asking,
                    running, asking, running]  # the final SQL runs too
