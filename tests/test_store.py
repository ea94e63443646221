"""The store (``nl2sql.store``) on both kinds: SQLite files in the data dir and a real PostgreSQL
database (``store: postgresql://...``). Each area's rules, two processes writing at once, files
written before the store had versions read after the upgrade, and a store written by a newer
nl2sql refused in one line."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from agent_scripts import Script
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, \
    TextPart, UserPromptPart

import nl2sql
from conftest import sqlite_config, write_dbs_yaml
from nl2sql.agents.conversations import ConversationStore
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import ConfigError, StoreError
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.operations.saved_queries import saved_queries_list_op
from nl2sql.schema.models import utc_now
from nl2sql.store import AuditRecord, Store, StoredUser, VerifiedAnswer
from nl2sql.verified.questions import question_key
from nl2sql.workspace.results import metadata_name_for, remove_result
from nl2sql.workspace.saved_query_store import SharedSavedQueryIndex, saved_query_index

BIN = Path(sys.executable).parent


def answer(i: int, question: str, sql: str = "SELECT 1", **fields: object) -> VerifiedAnswer:
    return VerifiedAnswer(id=f"{i:012x}", db_id="chinook", question=question,
                          question_key=question_key(question), sql=sql, **fields)


# -- answers ----------------------------------------------------------------------------------
def test_concurrent_accepts_keep_one_answer_per_question(tmp_path: Path,
                                                         store_url: str | None) -> None:
    def add(i: int) -> None:
        Store(tmp_path, store_url).answers("chinook").add(
            answer(i, f"How many tracks are on album {i % 40}?", f"SELECT {i}"))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(add, range(80)))
    answers = Store(tmp_path, store_url).answers("chinook")
    kept = answers.list()
    assert len(kept) == 40  # a later accept of a question replaced the earlier one
    assert len(answers.list(limit=5)) == 5
    assert answers.for_question(question_key("how many tracks are on album 7")) is not None
    answers.mark(kept[0].id, stale_reason="broken")
    assert answers.for_question(kept[0].question_key) is None
    assert len(answers.list(include_stale=False)) == 39
    assert answers.remove(kept[0].id) and not answers.remove(kept[0].id)
    # Another database's answers are its own.
    assert Store(tmp_path, store_url).answers("other").list() == []


def test_a_proposal_never_replaces_a_verified_answer(tmp_path: Path,
                                                     store_url: str | None) -> None:
    answers = Store(tmp_path, store_url).answers("chinook")
    question = "How many artists are there?"
    answers.add(answer(1, question, "SELECT count(*) FROM Artist", accepted_by="ana"))
    proposed = answers.propose(answer(2, question, "SELECT 0", proposed_by="model"))
    assert proposed.state == "proposed" and proposed.proposed_by == "model"
    assert answers.for_question(question_key(question)).id == f"{1:012x}"
    assert [v.id for v in answers.list()] == [f"{1:012x}"]
    # The id of a verified answer proposed again: left as it is.
    assert answers.propose(answer(1, question, "SELECT 0")).sql == "SELECT count(*) FROM Artist"
    # The same proposal again: still one.
    answers.propose(answer(2, question, "SELECT 0", proposed_by="model"))
    assert [p.id for p in answers.proposals()] == [f"{2:012x}"]
    # Another person's accept of the waiting proposal leaves it its proposer's.
    kept = answers.propose(answer(2, question, "SELECT 0", proposed_by="bo"))
    assert kept.proposed_by == "model" and [p.proposed_by for p in answers.proposals()] == \
        ["model"]
    assert answers.reject(f"{2:012x}", rejected_by="ana")
    assert not answers.reject(f"{2:012x}", rejected_by="ana")  # not waiting any more
    again = answers.propose(answer(2, question, "SELECT 0"))
    assert again.state == "rejected" and again.accepted_by == "ana"
    assert answers.proposals() == [] and len(answers.proposals(state="rejected")) == 1
    # A person's accept of a waiting proposal moves it to verified.
    answers.propose(answer(3, question, "SELECT 3"))
    answers.add(answer(3, question, "SELECT 3", accepted_by="ana", proposed_by="model"))
    assert answers.proposals() == [] and answers.get(f"{3:012x}").proposed_by == "model"
    assert answers.for_question(question_key(question)).sql == "SELECT 3"
    # A curator may still accept a rejected one later.
    answers.add(answer(2, question, "SELECT 0", accepted_by="bo"))
    assert answers.proposals(state="rejected") == [] and answers.get(f"{2:012x}").sql == \
        "SELECT 0" and answers.get(f"{3:012x}") is None


def test_a_file_removed_or_replaced_while_the_process_runs_is_followed(tmp_path: Path) -> None:
    """Connections are pooled per file: one removed or replaced meanwhile (another process,
    a person, a restore from backup) is what the next call reads and writes."""
    answers = Store(tmp_path).answers("chinook")
    answers.add(answer(1, "How many albums?"))
    path = tmp_path / "verified" / "chinook.sqlite"
    backup = tmp_path / "backup.sqlite"
    with sqlite3.connect(path) as live, sqlite3.connect(backup) as copy:
        live.backup(copy)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    assert answers.list() == []
    answers.add(answer(2, "How many tracks?"))
    assert [v.id for v in Store(tmp_path).answers("chinook").list()] == [f"{2:012x}"]
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT id FROM verified").fetchall() == [(f"{2:012x}",)]
    # A restore: the file and its WAL removed, the backup moved in place.
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(backup, tmp_path / "restored.sqlite")
    os.replace(tmp_path / "restored.sqlite", path)
    assert [v.id for v in answers.list()] == [f"{1:012x}"]


# -- users --------------------------------------------------------------------------------------
def test_users_by_name_and_token_hash(tmp_path: Path, store_url: str | None) -> None:
    users = Store(tmp_path, store_url).users
    assert users.list() == [] and users.find_by_token_hash("h") is None
    users.add(StoredUser(name="ana", token_hash="hash-a", groups=["analysts"]))
    users.add(StoredUser(name="bo", token_hash="hash-b", groups=["analysts", "curators"]))
    with pytest.raises(StoreError, match="'ana' already exists; remove it first"):
        users.add(StoredUser(name="ana", token_hash="hash-c"))
    assert users.find_by_token_hash("hash-b").groups == ["analysts", "curators"]
    users.add(StoredUser(name="ana", token_hash="hash-new", groups=[]), replace=True)
    assert users.find_by_token_hash("hash-a") is None
    assert users.find_by_token_hash("hash-new").name == "ana"
    assert [u.name for u in users.list()] == ["ana", "bo"]
    assert "hash" not in repr(users.get("bo"))  # the hash is never shown
    assert users.remove("bo") and not users.remove("bo") and users.get("bo") is None


# -- the audit log ------------------------------------------------------------------------------
def test_audit_reads_back_filtered_oldest_first(tmp_path: Path, store_url: str | None) -> None:
    log = Store(tmp_path, store_url).audit
    start = utc_now()
    for i in range(6):
        assert log.append(AuditRecord(
            ts=start + timedelta(seconds=i), user="ana" if i % 2 else "bo", face="mcp-http",
            tool="db_execute_sql", db_id="chinook" if i < 4 else "shop", sql=f"SELECT {i}",
            row_count=i, duration_ms=3, outcome="refused" if i == 5 else "ok",
            answer_id=f"a{i}"))
    every = list(log.read())
    assert [r.sql for r in every] == [f"SELECT {i}" for i in range(6)]
    assert every[5].outcome == "refused" and every[1].user == "ana"
    assert [r.row_count for r in log.read(user="ana")] == [1, 3, 5]
    assert [r.row_count for r in log.read(db_id="shop")] == [4, 5]
    assert [r.row_count for r in log.read(since=start + timedelta(seconds=3))] == [3, 4, 5]
    assert [r.row_count for r in log.read(user="bo", db_id="chinook", limit=1)] == [2]


def test_an_odd_record_is_written_and_never_takes_its_batch_with_it(
        tmp_path: Path, store_url: str | None, caplog: pytest.LogCaptureFixture) -> None:
    """A NUL (PostgreSQL refuses it in text) and a lone surrogate (not UTF-8) are kept as
    backslash escapes; a record the store still refuses (a count no integer column holds) is
    the only one lost: the others of its write go in (a caller could hide their calls from the
    audit by sending such a record beside them)."""
    log = Store(tmp_path, store_url).audit
    first = AuditRecord(user="bo", tool="db_list")
    odd = AuditRecord(user="ana", tool="db_execute_sql", db_id="x\udcff",
                      sql="SELECT '\ud800', '\x00', 'caf\u00e9'")
    assert odd.sql == "SELECT '\\ud800', '\\x00', 'caf\u00e9'" and odd.db_id == "x\\udcff"
    too_big = AuditRecord(user="eve", tool="db_execute_sql", sql="SELECT 2", row_count=2 ** 70)
    batch = [first, odd, too_big,
             AuditRecord(user="bo", tool="csv_head")]
    with caplog.at_level(logging.WARNING, logger="nl2sql.store.audit"):
        assert log.append_many(batch) is False
    assert [(r.user, r.tool, r.sql) for r in log.read()] == [
        ("bo", "db_list", None), ("ana", "db_execute_sql", odd.sql), ("bo", "csv_head", None)]
    assert "a record of db_execute_sql by eve was not written" in caplog.text


@pytest.mark.parametrize("broken", ["a file where the data dir should be",
                                    "a PostgreSQL server that is not there"])
def test_an_audit_write_that_fails_never_raises(tmp_path: Path, broken: str,
                                                caplog: pytest.LogCaptureFixture) -> None:
    if broken.startswith("a file"):
        (tmp_path / "data").write_text("not a folder")
        store = Store(tmp_path / "data")
    else:
        store = Store(tmp_path, "postgresql://nobody:secret@127.0.0.1:9/none")
    with caplog.at_level(logging.WARNING, logger="nl2sql.store.audit"):
        assert store.audit.append(AuditRecord(user="ana", tool="db_list")) is False
    assert "audit: a record of db_list by ana was not written" in caplog.text
    assert "secret" not in caplog.text


# -- conversations ------------------------------------------------------------------------------
def test_turns_are_numbered_once_per_request(tmp_path: Path, store_url: str | None) -> None:
    turns = Store(tmp_path, store_url).conversations

    def add(i: int) -> bool:
        return turns.append("c", user="ana", request_id=f"r{i % 10}", question=f"q{i % 10}",
                            db_id="chinook", answer_json=None, messages_json=b"[]")

    with ThreadPoolExecutor(8) as pool:
        added = list(pool.map(add, range(30)))
    assert sum(added) == 10  # a retried request adds nothing
    stored = turns.turns("c", user="ana")
    assert [t.seq for t in stored] == list(range(1, 11))
    assert sorted(t.request_id for t in stored) == sorted(f"r{i}" for i in range(10))
    [summary] = turns.list(user="ana")
    assert summary.turns == 10 and summary.first_question == stored[0].question
    assert turns.delete("c", user="ana") == 10 and turns.turns("c", user="ana") == []
    assert turns.list(user="ana") == []


def test_a_conversation_is_its_users_own(tmp_path: Path, store_url: str | None) -> None:
    """Two people on one store: each reads, lists, continues and deletes only their own
    conversations; a conversation id another user has is refused, not joined."""
    turns = Store(tmp_path, store_url).conversations
    assert turns.append("sales", user="ana", request_id="a1", question="Revenue per month?",
                        db_id="chinook", answer_json=None, messages_json=b"[]")
    with pytest.raises(StoreError, match="Conversation 'sales' is another user's"):
        turns.append("sales", user="bo", request_id="b1", question="and in 2024?",
                     db_id="chinook", answer_json=None, messages_json=b"[]")
    assert turns.turns("sales", user="bo") == [] and turns.list(user="bo") == []
    assert turns.turn_for_request("a1", user="bo") is None
    assert turns.delete("sales", user="bo") == 0
    assert [t.question for t in turns.turns("sales", user="ana")] == ["Revenue per month?"]


# -- the saved-query index ----------------------------------------------------------------------
def test_saved_queries_are_listed_and_searched_alike_on_either_store(
        tmp_path: Path, store_url: str | None) -> None:
    """The same calls on the workspace's own index (SQLite store) and on the shared store's
    (PostgreSQL): newest first, every word a required prefix, by database, by id, and a
    removed result gone."""
    path = write_dbs_yaml(tmp_path, [], **({"store": store_url} if store_url else {}))
    ops = OpsContext(DbConnectionConfigs.load(path, workspace=tmp_path / "ws"))
    try:
        titles = db_execute_sql_op(ops, "bookstore", "SELECT title FROM books",
                                   nl_query="Which unusual titles exist?", answer_id="a1")
        authors = db_execute_sql_op(ops, "bookstore", "SELECT count(*) AS n FROM authors",
                                    nl_query="How many authors?", output_file="sub/authors")
        index = saved_query_index(ops.workspace, ops.store)
        assert isinstance(index, SharedSavedQueryIndex) == (store_url is not None)
        listed = saved_queries_list_op(ops)
        assert listed.total == 2
        assert [q.csv_file for q in listed.queries] == ["sub/authors.csv", titles.csv_filename]
        assert [q.csv_file for q in saved_queries_list_op(ops, "unusu TIT").queries] == \
            [titles.csv_filename]
        assert saved_queries_list_op(ops, "unusual authors").total == 0
        assert saved_queries_list_op(ops, "count").queries[0].natural_language_query == \
            "How many authors?"
        assert saved_queries_list_op(ops, "*** ").total == 0
        assert saved_queries_list_op(ops, db_id="other").total == 0
        assert saved_queries_list_op(ops, limit=1).total == 2
        assert index.find("a1").sql_query == "SELECT title FROM books"
        csv_path = ops.workspace_root / authors.csv_filename
        trace = remove_result(csv_path)
        index.record(csv_path.with_name(metadata_name_for(csv_path.name)), trace.marks)
        assert [q.csv_file for q in saved_queries_list_op(ops).queries] == [titles.csv_filename]
    finally:
        ops.close()


def test_a_shared_store_does_not_infer_from_folders(tmp_path: Path, pg_store: str) -> None:
    """With a shared store the index is what nl2sql recorded: a file another program drops
    into the workspace is not listed, and another workspace's results are its own."""
    path = write_dbs_yaml(tmp_path, [], store=pg_store)
    ops = OpsContext(DbConnectionConfigs.load(path, workspace=tmp_path / "ws"))
    other = OpsContext(DbConnectionConfigs.load(path, workspace=tmp_path / "other"))
    try:
        saved = db_execute_sql_op(ops, "bookstore", "SELECT 1 AS one", nl_query="One?")
        dropped = ops.workspace_root / "dropped.metadata.json"
        dropped.write_text(json.dumps({"sql_query": "SELECT 2", "db_id": "bookstore",
                                       "natural_language_query": "Two?"}))
        assert [q.csv_file for q in saved_queries_list_op(ops).queries] == [saved.csv_filename]
        assert saved_queries_list_op(other).total == 0
    finally:
        ops.close()
        other.close()


def test_the_first_shared_index_is_upgraded(tmp_path: Path, pg_database: object) -> None:
    """A PostgreSQL store whose saved-query index has the first release's layout (no stored
    words) is brought to the current one on first use, its rows searchable."""
    dbname = pg_database()  # type: ignore[operator]
    with psycopg.connect(f"host=127.0.0.1 user=postgres dbname={dbname}", autocommit=True) as db:
        db.execute("CREATE TABLE schema_version (area TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        db.execute("INSERT INTO schema_version VALUES ('saved_queries', 1)")
        db.execute("CREATE TABLE saved_query (workspace TEXT, path TEXT, timestamp TEXT, "
                   "db_id TEXT, row_count INTEGER, column_count INTEGER, csv_filename TEXT, "
                   "natural_language_query TEXT, sql_query TEXT, result_id TEXT, "
                   "PRIMARY KEY (workspace, path))")
        db.execute("INSERT INTO saved_query (workspace, path, natural_language_query, sql_query) "
                   "VALUES ('/ws', 'old.metadata.json', 'Which old titles?', 'SELECT 1')")
    table = Store(tmp_path, f"postgresql://postgres@127.0.0.1:5432/{dbname}").saved_queries
    found, total = table.search("/ws", ["old", "tit"], limit=5)
    assert total == 1 and found[0].path == "old.metadata.json"
    with psycopg.connect(f"host=127.0.0.1 user=postgres dbname={dbname}") as db:
        assert db.execute("SELECT version FROM schema_version WHERE area = 'saved_queries'"
                          ).fetchone() == (2,)


# -- two processes at once ----------------------------------------------------------------------
WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from nl2sql.store import AuditRecord, Store, StoredUser, VerifiedAnswer
    data_dir, url, me, count = Path(sys.argv[1]), sys.argv[2] or None, sys.argv[3], int(sys.argv[4])
    store = Store(data_dir, url)
    for i in range(count):
        question = f"shared question {i % 5}" if i % 2 else f"{me} question {i}"
        store.answers("chinook").add(VerifiedAnswer(
            id=f"{me}-{i}", db_id="chinook", question=question, question_key=question,
            sql=f"SELECT {i}", accepted_by=me))
        store.conversations.append("shared", user="p", request_id=f"{me}-{i}", question="q",
                                   db_id="chinook", answer_json=None, messages_json=b"[]")
        assert store.audit.append(AuditRecord(user=me, tool="db_list"))
        store.users.add(StoredUser(name=f"{me}-{i}", token_hash=f"{me}-{i}"))
""")


def test_two_processes_write_at_once(tmp_path: Path, store_url: str | None) -> None:
    count = 40
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), store_url or "",
                                 name, str(count)], stderr=subprocess.PIPE, text=True)
               for name in ("p1", "p2")]
    for writer in writers:
        assert writer.wait(timeout=300) == 0, writer.stderr.read()  # type: ignore[union-attr]
    store = Store(tmp_path, store_url)
    seqs = [t.seq for t in store.conversations.turns("shared", user="p")]
    assert seqs == list(range(1, 2 * count + 1))
    assert len(list(store.audit.read())) == 2 * count
    assert len(store.users.list()) == 2 * count
    kept = store.answers("chinook").list()
    shared = [v for v in kept if v.question.startswith("shared")]
    assert len(shared) == 5 and len(kept) == 5 + count  # one per question, whoever came last


# -- upgrades -------------------------------------------------------------------------------------
OLD_VERIFIED = """CREATE TABLE verified (
    id TEXT PRIMARY KEY, question TEXT NOT NULL, question_key TEXT NOT NULL UNIQUE,
    sql TEXT NOT NULL, tables TEXT NOT NULL, schema_fingerprint TEXT, accepted_by TEXT,
    accepted_at TEXT NOT NULL, stale_reason TEXT)"""
FIRST_PROPOSALS = """CREATE TABLE proposal (
    id TEXT PRIMARY KEY, question TEXT NOT NULL, question_key TEXT NOT NULL, sql TEXT NOT NULL,
    tables TEXT NOT NULL, schema_fingerprint TEXT, proposed_by TEXT, proposed_at TEXT NOT NULL,
    state TEXT NOT NULL, decided_by TEXT, decided_at TEXT)"""
OLD_TURNS = """CREATE TABLE turns (
    conversation_id TEXT NOT NULL, seq INTEGER NOT NULL, request_id TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL, question TEXT NOT NULL, db_id TEXT, answer_json TEXT,
    messages_json BLOB NOT NULL, PRIMARY KEY (conversation_id, seq))"""
EMPLOYEES = "SELECT count(*) AS employees FROM Employee"


@pytest.fixture
def old_site(tmp_path: Path, sqlite_samples: dict[str, Path]) -> dict[str, object]:
    """A data dir as nl2sql wrote it before the store: a verified answer (and a proposal, of
    the first release with proposals) in ``verified/chinook.sqlite``, a conversation in
    ``conversations.sqlite``; no schema versions."""
    shutil.copyfile(sqlite_samples["chinook"], tmp_path / "chinook.sqlite")
    path = write_dbs_yaml(tmp_path, [sqlite_config("chinook", tmp_path / "chinook.sqlite")])
    data = tmp_path / "data"
    (data / "verified").mkdir(parents=True)
    with sqlite3.connect(data / "verified" / "chinook.sqlite") as db:
        db.execute(OLD_VERIFIED)
        db.execute(FIRST_PROPOSALS)
        db.execute("INSERT INTO verified VALUES ('0123456789ab', 'How many employees are "
                   "there?', ?, ?, '[\"Employee\"]', NULL, 'ana', '2025-01-02T10:00:00+00:00', "
                   "NULL)", (question_key("How many employees are there?"), EMPLOYEES))
        db.execute("INSERT INTO proposal VALUES ('ba9876543210', 'How many albums?', ?, "
                   "'SELECT 0', '[]', NULL, 'bo', '2025-01-03T10:00:00+00:00', 'proposed', "
                   "NULL, NULL)", (question_key("How many albums?"),))
    db.close()
    messages = ModelMessagesTypeAdapter.dump_json([
        ModelRequest(parts=[UserPromptPart("How many employees are there?")]),
        ModelResponse(parts=[TextPart("There are 8.")])])
    with sqlite3.connect(data / "conversations.sqlite") as db:
        db.execute(OLD_TURNS)
        db.execute("INSERT INTO turns VALUES ('staff', 1, 'r1', '2025-01-02T10:00:00+00:00', "
                   "'How many employees are there?', 'chinook', NULL, ?)", (messages,))
    db.close()
    env = {"NL2SQL_CONFIG": str(path), "NL2SQL_DATA_DIR": str(data),
           "NL2SQL_WORKSPACE": str(tmp_path / "ws")}
    registry = DbConnectionConfigs.load(path, data_dir=data, workspace=tmp_path / "ws")
    return {"registry": registry, "data": data, "env": env}


def test_files_from_before_the_store_are_read_after_the_upgrade(old_site: dict) -> None:
    ops = OpsContext(old_site["registry"])
    try:
        [verified] = nl2sql.list_verified(config=ops)
        assert verified.id == "0123456789ab" and verified.accepted_by == "ana"
        assert verified.db_id == "chinook" and verified.tables == ["Employee"]
        [proposal] = nl2sql.list_proposed(config=ops)
        assert proposal.id == "ba9876543210" and proposal.proposed_by == "bo"
        served = nl2sql.ask("how many employees are there", model=Script([]).model, config=ops)
        assert served.source == "verified:0123456789ab" and served.df.iloc[0, 0] == 8
        [turn] = ConversationStore(ops.store, ops.caller.name).turns("staff")
        assert [type(m).__name__ for m in turn.messages()] == ["ModelRequest", "ModelResponse"]
        # The upgraded files take new rows (a person's accept of the old proposal).
        nl2sql.accept("ba9876543210", config=ops)
        assert {v.id for v in nl2sql.list_verified(config=ops)} == {"0123456789ab",
                                                                     "ba9876543210"}
    finally:
        ops.close()
    for name, area, version in (("verified/chinook.sqlite", "answers", 2),
                                ("conversations.sqlite", "conversations", 2)):
        with sqlite3.connect(old_site["data"] / name) as db:
            assert db.execute("SELECT area, version FROM schema_version").fetchall() == [
                (area, version)]
        db.close()
    listed = subprocess.run([str(BIN / "nl2sql-ask"), "--list-conversations"],
                            env={**os.environ, **old_site["env"]}, capture_output=True,
                            text=True, timeout=120)
    assert listed.returncode == 0 and "staff  1 turn(s), chinook" in listed.stdout


def test_a_store_from_a_newer_nl2sql_is_refused_in_one_line(old_site: dict,
                                                            pg_database: object) -> None:
    dbname = pg_database()  # type: ignore[operator]
    url = f"postgresql://postgres@127.0.0.1:5432/{dbname}"
    assert Store(old_site["data"], url).answers("chinook").list() == []  # made at this version
    with psycopg.connect(f"host=127.0.0.1 user=postgres dbname={dbname}", autocommit=True) as db:
        db.execute("UPDATE schema_version SET version = 99 WHERE area = 'answers'")
    with sqlite3.connect(old_site["data"] / "verified" / "chinook.sqlite") as db:
        db.execute("CREATE TABLE schema_version (area TEXT PRIMARY KEY, version INTEGER)")
        db.execute("INSERT INTO schema_version VALUES ('answers', 99)")
    db.close()
    config = Path(old_site["env"]["NL2SQL_CONFIG"])
    on_pg = config.with_name("pg.yaml")
    on_pg.write_text(config.read_text() + f"store: {url}\n")
    for dbs_yaml, where in ((config, "verified/chinook.sqlite"), (on_pg, dbname)):
        done = subprocess.run([str(BIN / "nl2sql-ask"), "--list-verified"],
                              env={**os.environ, **old_site["env"], "NL2SQL_CONFIG": str(dbs_yaml)},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert where in done.stderr and "schema version 99, written by a newer nl2sql" \
            in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("value", ["mysql://x@y/z", "42", "postgresql:/no-slashes"])
def test_store_must_be_a_postgresql_url(tmp_path: Path, value: str) -> None:
    path = tmp_path / "dbs.yaml"
    path.write_text(f"store: '{value}'\n")
    with pytest.raises(ConfigError, match="'store' must be a PostgreSQL URL"):
        DbConnectionConfigs.load(path)
    path.write_text(json.dumps({"store": "postgresql://u:pw@h/db"}))
    assert DbConnectionConfigs.load(path).store == "postgresql://u:pw@h/db"
    assert Store(tmp_path, "postgresql://u:pw@h/db").describe() == "postgresql://u:***@h/db"
