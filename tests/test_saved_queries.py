"""Saved queries: the FTS5 index (sync, search, sanitizing, rebuild, WAL) and the two ops."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.errors import WorkspacePathError
from nl2sql.operations import OpsContext, saved_queries_list_op, saved_query_get_details_op
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.workspace import saved_query_index, saved_query_sync
from nl2sql.workspace.results import CsvResultWriter, remove_result
from nl2sql.workspace.saved_query_index import INDEX_FILENAME, SavedQueryIndex, fts_query


def save_result(workspace: Path, name: str, *, question: str | None, sql: str,
                timestamp: str, rows: list[list[object]] | None = None, db_id: str = "bookstore",
                columns: list[str] | None = None) -> Path:
    """A result pair in the file contract of ARCHITECTURE.md ("Result files")."""
    import csv

    columns = columns or ["id", "title"]
    rows = rows if rows is not None else [[1, "Dune"], [2, "Emma"]]
    csv_path = workspace / f"{name}.csv"
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([columns, *rows])
    metadata = {"sql_query": sql, "timestamp": timestamp, "row_count": len(rows),
                "column_count": len(columns), "csv_filename": csv_path.name, "db_id": db_id,
                "natural_language_query": question, "columns": columns,
                "elapsed_seconds": 0.01, "truncated": False}
    meta_path = workspace / f"{name}.metadata.json"
    meta_path.write_text(json.dumps(metadata), encoding="utf-8")
    return meta_path


@pytest.fixture
def ctx(tmp_path: Path) -> OpsContext:
    return OpsContext(DbConnectionConfigs.load(None, data_dir=tmp_path / "data",
                                               workspace=tmp_path / "workspace"))


@pytest.fixture
def workspace(ctx: OpsContext) -> Path:
    ctx.workspace.mkdir(parents=True, exist_ok=True)
    save_result(ctx.workspace, "authors_by_country", question="How many authors per country?",
                sql="SELECT country, count(*) FROM authors GROUP BY country",
                timestamp="2026-01-01T10:00:00+00:00")
    save_result(ctx.workspace, "top_customers", question="Who are the top customers by revenue?",
                sql="SELECT c.name, sum(oi.price) FROM customers c "
                    "JOIN orders o USING (customer_id) JOIN order_items oi USING (order_id) GROUP BY c.name",
                timestamp="2026-01-03T10:00:00+00:00")
    save_result(ctx.workspace, "late_orders", question=None,
                sql="SELECT * FROM orders WHERE status = 'shipped'",
                timestamp="2026-01-02T10:00:00+00:00")
    return ctx.workspace


def names(result) -> list[str]:  # noqa: ANN001
    return [q.csv_file for q in result.queries]


def test_list_is_newest_first_with_limit_and_total(ctx: OpsContext, workspace: Path) -> None:
    result = saved_queries_list_op(ctx)
    assert names(result) == ["top_customers.csv", "late_orders.csv", "authors_by_country.csv"]
    assert result.total == 3
    limited = saved_queries_list_op(ctx, limit=1)
    assert names(limited) == ["top_customers.csv"] and limited.total == 3
    assert "1 of 3 saved queries" in limited.render()
    top = result.queries[0]
    assert (top.db_id, top.row_count, top.column_count) == ("bookstore", 2, 2)
    assert "Who are the top customers" in result.render()


@pytest.mark.parametrize(("search", "expected"), [
    ("customers", ["top_customers.csv"]),                   # word in question and SQL
    ("cust revenue", ["top_customers.csv"]),                # prefixes, all words required
    ("GROUP", ["top_customers.csv", "authors_by_country.csv"]),  # SQL only, case-insensitive
    ("shipped", ["late_orders.csv"]),                       # SQL string literal
    ("order_items", ["top_customers.csv"]),                 # identifier with underscore
    ("authors nonexistentword", []),
])
def test_search_matches_question_and_sql(ctx: OpsContext, workspace: Path, search: str,
                                         expected: list[str]) -> None:
    result = saved_queries_list_op(ctx, search=search)
    assert names(result) == expected
    assert result.total == len(expected)


@pytest.mark.parametrize("search", [
    '"', '""', '"unterminated', "*", "cust*", "NEAR(customers", "customers AND", "OR", "NOT x",
    "-customers", "title:dune", "^start", "a + b", "(", ")", "{col}", "'; DROP TABLE x; --",
    "count(*)", "\x00", "é",
])
def test_search_never_raises_an_fts_syntax_error(ctx: OpsContext, workspace: Path,
                                                 search: str) -> None:
    result = saved_queries_list_op(ctx, search=search)
    assert result.total == len(result.queries)


def test_search_with_operators_is_literal_words(ctx: OpsContext, workspace: Path) -> None:
    assert names(saved_queries_list_op(ctx, search='"customers" *')) == ["top_customers.csv"]
    assert names(saved_queries_list_op(ctx, search="count(*)")) == ["authors_by_country.csv"]
    assert fts_query('a"b* NEAR(c') == '"a"* "b"* "NEAR"* "c"*'
    assert fts_query("*** ") is None


def test_index_follows_files_added_changed_and_deleted(ctx: OpsContext, workspace: Path) -> None:
    assert saved_queries_list_op(ctx).total == 3
    save_result(workspace, "new_one", question="Which genres sell best?", sql="SELECT genre",
                timestamp="2026-02-01T00:00:00+00:00")
    assert names(saved_queries_list_op(ctx, search="genres")) == ["new_one.csv"]
    # Rewrite in place with another question (mtime/size change).
    meta = save_result(workspace, "new_one", question="Which formats sell best?",
                       sql="SELECT format", timestamp="2026-02-01T00:00:00+00:00")
    os.utime(meta, ns=(time.time_ns(), time.time_ns() + 1_000_000))
    assert saved_queries_list_op(ctx, search="genres").total == 0
    assert names(saved_queries_list_op(ctx, search="formats")) == ["new_one.csv"]
    (workspace / "late_orders.metadata.json").unlink()
    assert "late_orders.csv" not in names(saved_queries_list_op(ctx))


def test_subfolders_and_unreadable_metadata(ctx: OpsContext, workspace: Path) -> None:
    save_result(workspace / "reports", "q1", question="quarterly revenue", sql="SELECT 1",
                timestamp="2026-03-01T00:00:00+00:00")
    (workspace / "broken.metadata.json").write_text("{not json", encoding="utf-8")
    (workspace / "list.metadata.json").write_text("[1, 2]", encoding="utf-8")
    result = saved_queries_list_op(ctx)
    assert names(result)[0] == "reports/q1.csv"
    assert result.total == 4  # the two unreadable files are skipped, not fatal


def test_index_is_rebuilt_when_missing_or_corrupt(ctx: OpsContext, workspace: Path) -> None:
    assert saved_queries_list_op(ctx, search="authors").total == 1
    index = workspace / INDEX_FILENAME
    assert index.is_file()
    index.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    assert saved_queries_list_op(ctx, search="authors").total == 1
    for suffix in ("-wal", "-shm"):
        Path(f"{index}{suffix}").unlink(missing_ok=True)
    index.write_bytes(b"this is not a database" * 100)
    assert saved_queries_list_op(ctx, search="authors").total == 1


def test_index_damaged_inside_is_rebuilt(ctx: OpsContext, workspace: Path) -> None:
    for k in range(300):  # enough rows for several pages
        save_result(workspace, f"bulk{k}", question=f"bulk question {k}", sql=f"SELECT {k}",
                    timestamp="2025-01-01T00:00:00+00:00")
    assert saved_queries_list_op(ctx, search="bulk").total == 300
    index = workspace / INDEX_FILENAME
    with sqlite3.connect(index) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = bytearray(index.read_bytes())
    page = 4096
    data[page:len(data)] = b"\xff" * (len(data) - page)  # keep the header, wreck every page
    index.write_bytes(bytes(data))
    assert saved_queries_list_op(ctx, search="bulk").total == 300


def test_a_lock_held_past_the_busy_timeout_falls_back_to_memory(
        ctx: OpsContext, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nl2sql.workspace.saved_query_index as module

    SavedQueryIndex(workspace).sync()
    monkeypatch.setattr(module, "BUSY_TIMEOUT_MS", 200)
    blocker = sqlite3.connect(workspace / INDEX_FILENAME, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        save_result(workspace, "during_lock", question="held lock", sql="SELECT 3",
                    timestamp="2026-06-01T00:00:00+00:00")
        assert names(saved_queries_list_op(ctx, search="held")) == ["during_lock.csv"]
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert (workspace / INDEX_FILENAME).is_file()  # a busy index is never deleted
    assert names(saved_queries_list_op(ctx, search="held")) == ["during_lock.csv"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to a read-only folder")
def test_a_read_only_workspace_is_searched_in_memory(ctx: OpsContext, workspace: Path) -> None:
    workspace.chmod(0o555)
    try:
        assert names(saved_queries_list_op(ctx, search="authors")) == ["authors_by_country.csv"]
        assert not (workspace / INDEX_FILENAME).exists()
    finally:
        workspace.chmod(0o755)


def test_index_uses_wal_and_a_busy_timeout(ctx: OpsContext, workspace: Path) -> None:
    SavedQueryIndex(workspace).sync()
    with sqlite3.connect(workspace / INDEX_FILENAME) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    index = SavedQueryIndex(workspace)
    db = index._open(index.path)
    try:
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    finally:
        db.close()


def test_a_writer_holding_the_lock_delays_but_does_not_fail_a_sync(
        ctx: OpsContext, workspace: Path) -> None:
    import threading

    SavedQueryIndex(workspace).sync()
    blocker = sqlite3.connect(workspace / INDEX_FILENAME, isolation_level=None,
                              check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")
    save_result(workspace, "while_locked", question="locked", sql="SELECT 2",
                timestamp="2026-04-01T00:00:00+00:00")
    threading.Timer(0.5, lambda: (blocker.execute("COMMIT"), blocker.close())).start()
    started = time.monotonic()
    assert names(saved_queries_list_op(ctx, search="locked")) == ["while_locked.csv"]
    assert time.monotonic() - started >= 0.4


def test_details_show_metadata_and_preview(ctx: OpsContext, workspace: Path) -> None:
    rows = [[i, f"title {i}"] for i in range(1, 21)]
    save_result(workspace, "many", question="All titles", sql="SELECT id, title FROM books",
                timestamp="2026-05-01T00:00:00+00:00", rows=rows)
    for name in ("many.csv", "many", "many.metadata.json"):
        details = saved_query_get_details_op(ctx, name)
        assert details.metadata is not None and details.metadata.row_count == 20
        assert details.preview.rows == [["1", "title 1"], ["2", "title 2"], ["3", "title 3"],
                                        ["4", "title 4"], ["5", "title 5"]]
        text = details.render()
        assert "SELECT id, title FROM books" in text and "All titles" in text
        assert "First 5 of 20 rows of many.csv" in text


def test_details_of_a_csv_without_metadata(ctx: OpsContext, workspace: Path) -> None:
    (workspace / "loose.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    details = saved_query_get_details_op(ctx, "loose.csv")
    assert details.metadata is None and details.preview.rows == [["1", "2"]]
    assert "no readable metadata" in details.render()


@pytest.mark.parametrize("name", ["missing.csv", "../outside.csv", "/etc/passwd",
                                  "reports/../../x.csv"])
def test_details_refuse_missing_or_outside_files(ctx: OpsContext, workspace: Path,
                                                 name: str) -> None:
    (workspace.parent / "outside.csv").write_text("a\n1\n", encoding="utf-8")
    with pytest.raises(WorkspacePathError):
        saved_query_get_details_op(ctx, name)


def test_details_of_no_name_say_the_name_is_empty(ctx: OpsContext) -> None:
    """As csv_head and csv_chart say it (it said "Path '.csv' has an empty ... part")."""
    with pytest.raises(WorkspacePathError, match="^The file name is empty; "):
        saved_query_get_details_op(ctx, "")


def _age(path: Path, seconds: float = 10) -> None:
    """Set a folder's mtime into the past (outside the index's racy window)."""
    past = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(past, past))


def _metadata(workspace: Path, name: str, question: str) -> None:
    """A result's metadata written as nl2sql (another server) writes it: temp file + rename."""
    tmp = workspace / f".{name}.tmp"
    tmp.write_text(json.dumps({"sql_query": "SELECT 1", "timestamp": "2026-05-01T00:00:00+00:00",
                               "row_count": 1, "column_count": 1, "csv_filename": f"{name}.csv",
                               "db_id": "bookstore", "natural_language_query": question}),
                   encoding="utf-8")
    os.replace(tmp, workspace / f"{name}.metadata.json")


def test_a_call_with_nothing_new_lists_no_folder(workspace: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The sync's cost does not grow with the workspace: with nothing new it stats the known
    folders and at most SWEEP_FILES files, and lists no folder."""
    from nl2sql.workspace import saved_query_index

    (workspace / "old").mkdir()
    for k in range(600):
        _metadata(workspace / ("old" if k % 2 else ""), f"r{k}", f"question {k}")
    index = SavedQueryIndex(workspace)
    index.search(limit=1)  # builds the index (and its folder in the workspace)
    _age(workspace)
    _age(workspace / "old")
    total = index.search(limit=1)[1]  # lists both folders once more, now trusting them
    assert total >= 600
    listed: list[str] = []
    stats: list[str] = []
    real_scandir, real_stat = os.scandir, os.stat
    monkeypatch.setattr(saved_query_index.os, "scandir",
                        lambda path: listed.append(str(path)) or real_scandir(path))
    monkeypatch.setattr(saved_query_index.os, "stat",
                        lambda path, **kw: stats.append(str(path)) or real_stat(path, **kw))
    assert index.search(limit=1)[1] == total
    assert listed == []
    files = [path for path in stats if path.endswith(".json")]
    assert len(files) <= saved_query_sync.SWEEP_FILES  # the sweep's share, not all 600
    assert len(stats) - len(files) <= 5  # the folders (and the index folder's mkdir)
    # another process adds a result: only its folder is listed, and it is found
    _metadata(workspace / "old", "new_one", "a brand new question")
    listed.clear()
    found, total = index.search("brand new", limit=5)
    assert total == 1 and found[0].path == "old/new_one.metadata.json"
    assert listed == [str(workspace / "old")]


def test_files_changed_in_place_and_folders_removed_are_seen(workspace: Path) -> None:
    (workspace / "gone").mkdir()
    _metadata(workspace / "gone", "doomed", "doomed question")
    _metadata(workspace, "kept", "first wording")
    index = SavedQueryIndex(workspace)
    assert index.search("doomed", limit=5)[1] == 1
    _age(workspace)
    _age(workspace / "gone")
    index.search(limit=1)  # the folders' mtimes are now trusted
    # rewritten in place (same inode, no folder change): the sweep notices the new size/mtime
    meta = workspace / "kept.metadata.json"
    meta.write_text(meta.read_text().replace("first wording", "second wording, longer"))
    assert index.search("second wording", limit=5)[1] == 1
    assert index.search("first wording", limit=5)[1] == 0
    (workspace / "gone" / "doomed.metadata.json").unlink()
    (workspace / "gone").rmdir()
    assert index.search("doomed", limit=5)[1] == 0


# -- results this server writes are recorded in the index as they are saved -------------------

@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders the index lists (``os.scandir`` calls) from now on."""
    calls: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(saved_query_index.os, "scandir",
                        lambda path: calls.append(str(path)) or real_scandir(path))
    return calls


def _known_index(ctx: OpsContext) -> SavedQueryIndex:
    """The workspace's index, built and trusting the workspace folder's mtime (aged past the
    racy window), so a call with nothing new lists nothing."""
    index = SavedQueryIndex(ctx.workspace_root)
    index.search(limit=1)
    _age(ctx.workspace_root)
    index.search(limit=1)
    return index


def _recorded_mtime(workspace: Path, folder: str = "") -> int:
    with closing(sqlite3.connect(workspace / INDEX_FILENAME)) as db:
        return db.execute("SELECT mtime_ns FROM folder WHERE path = ?", (folder,)).fetchone()[0]


SQL = "SELECT title FROM books ORDER BY title LIMIT 2"


def test_a_result_saved_by_the_server_is_found_without_listing_its_folder(
        ctx: OpsContext, workspace: Path, listed: list[str]) -> None:
    index = _known_index(ctx)
    listed.clear()
    saved = db_execute_sql_op(ctx, "bookstore", SQL, nl_query="Which unusual titles exist?")
    assert _recorded_mtime(workspace) == workspace.stat().st_mtime_ns  # taken as known
    found, total = index.search("unusual titles", limit=5)
    assert total == 1 and found[0].path == saved.metadata_filename
    assert saved_queries_list_op(ctx).total == 4
    assert listed == []  # the folder was not listed again for the server's own result


def test_overwrite_and_removal_by_the_server_are_recorded(
        ctx: OpsContext, workspace: Path, listed: list[str]) -> None:
    index = _known_index(ctx)
    db_execute_sql_op(ctx, "bookstore", SQL, output_file="mine", nl_query="first wording")
    db_execute_sql_op(ctx, "bookstore", SQL, output_file="mine", nl_query="second wording",
                      overwrite=True)
    listed.clear()
    assert index.search("first wording", limit=5)[1] == 0
    assert [q.path for q in index.search("second wording", limit=5)[0]] == \
        ["mine.metadata.json"]
    trace = remove_result(workspace / "mine.csv")  # as nl2sql-ask drops candidates not chosen
    SavedQueryIndex(ctx.workspace_root).record(workspace / "mine.metadata.json", trace.marks)
    assert index.search("second wording", limit=5)[1] == 0
    assert _recorded_mtime(workspace) == workspace.stat().st_mtime_ns
    assert listed == []


@pytest.mark.parametrize("when", ["before the query", "while the query runs",
                                  "after the result"])
def test_a_foreign_write_beside_the_servers_result_is_still_found(
        ctx: OpsContext, workspace: Path, listed: list[str], monkeypatch: pytest.MonkeyPatch,
        when: str) -> None:
    """Another program (no lock, nothing recorded) writes in the same folder around the
    server's write: the server's result is in at once, and the foreign one is found by the
    next call (its folder listed), not hidden behind the server's record."""
    index = _known_index(ctx)

    class ForeignWriteDuringQuery(CsvResultWriter):
        def publish(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
            if when == "while the query runs":
                _metadata(workspace, "foreign", "a foreign question")
            super().publish(*args, **kwargs)
            if when == "after the result":
                _metadata(workspace, "foreign", "a foreign question")

    monkeypatch.setattr("nl2sql.operations.queries.CsvResultWriter", ForeignWriteDuringQuery)
    if when == "before the query":
        _metadata(workspace, "foreign", "a foreign question")
    db_execute_sql_op(ctx, "bookstore", SQL, nl_query="the server's own question")
    listed.clear()
    assert index.search("server's own question", limit=5)[1] == 1
    assert [q.path for q in index.search("foreign question", limit=5)[0]] == \
        ["foreign.metadata.json"]
    assert set(listed) == {str(ctx.workspace_root)}  # found by listing the folder again


def test_results_saved_by_two_writers_at_once_are_all_found(
        ctx: OpsContext, workspace: Path) -> None:
    """Two servers (threads here) save results into one folder at the same time, each
    recording its own: every result is found."""
    import threading

    index = _known_index(ctx)
    other = OpsContext(DbConnectionConfigs.load(None, data_dir=ctx.configs.data_dir,
                                                workspace=workspace))

    def write(ops: OpsContext, who: str) -> None:
        for k in range(15):
            db_execute_sql_op(ops, "bookstore", SQL, output_file=f"{who}_{k}",
                              nl_query=f"concurrent {who} question {k}")

    threads = [threading.Thread(target=write, args=(ops, who))
               for ops, who in ((ctx, "alpha"), (other, "beta"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    other.close()
    assert index.search("concurrent alpha", limit=50)[1] == 15
    assert index.search("concurrent beta", limit=50)[1] == 15


def test_a_result_in_a_new_folder_is_found_and_the_folder_known(
        ctx: OpsContext, workspace: Path) -> None:
    index = _known_index(ctx)
    db_execute_sql_op(ctx, "bookstore", SQL, output_file="reports/2026/q1",
                      nl_query="quarterly titles")
    assert [q.path for q in index.search("quarterly", limit=5)[0]] == \
        ["reports/2026/q1.metadata.json"]
    _metadata(workspace / "reports" / "2026", "later", "a later foreign question")
    assert index.search("later foreign", limit=5)[1] == 1


def test_recording_never_builds_waits_long_for_or_fails_on_the_index(
        ctx: OpsContext, workspace: Path) -> None:
    db_execute_sql_op(ctx, "bookstore", SQL, nl_query="before any index")
    assert not (workspace / INDEX_FILENAME).exists()  # the first search builds it, whole
    assert saved_queries_list_op(ctx, search="before any index").total == 1
    blocker = sqlite3.connect(workspace / INDEX_FILENAME, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:  # another process holds the index: the result is saved all the same
        db_execute_sql_op(ctx, "bookstore", SQL, nl_query="while the index was busy")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert saved_queries_list_op(ctx, search="index was busy").total == 1


def test_recording_follows_an_index_file_replaced_meanwhile(
        ctx: OpsContext, workspace: Path, listed: list[str]) -> None:
    """``record`` keeps its connection open; a deleted and rebuilt index gets a new one."""
    _known_index(ctx)
    db_execute_sql_op(ctx, "bookstore", SQL, nl_query="into the first index file")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{workspace / INDEX_FILENAME}{suffix}").unlink(missing_ok=True)
    index = _known_index(ctx)
    listed.clear()
    db_execute_sql_op(ctx, "bookstore", SQL, nl_query="into the second index file")
    assert index.search("second index file", limit=5)[1] == 1
    assert index.search("first index file", limit=5)[1] == 1
    assert listed == []


def _save_in_another_process(data_dir: str, workspace: str, question: str) -> None:
    ops = OpsContext(DbConnectionConfigs.load(None, data_dir=Path(data_dir),
                                              workspace=Path(workspace)))
    db_execute_sql_op(ops, "bookstore", SQL, nl_query=question)
    ops.close()


def test_a_result_saved_by_another_nl2sql_process_is_recorded_by_it(
        ctx: OpsContext, workspace: Path, listed: list[str]) -> None:
    import multiprocessing

    index = _known_index(ctx)
    listed.clear()
    other = multiprocessing.get_context("spawn").Process(
        target=_save_in_another_process,
        args=(str(ctx.configs.data_dir), str(workspace), "saved by another process"))
    other.start()
    other.join(timeout=120)
    assert other.exitcode == 0
    assert index.search("another process", limit=5)[1] == 1
    assert listed == []  # it recorded its result itself: nothing to list here


def test_the_folder_mtime_is_taken_only_from_an_unbroken_chain(
        ctx: OpsContext, workspace: Path) -> None:
    """``record`` takes a writer's last mark as the folder's mtime only when the chain starts
    at the mtime the index knew, and the mark is not in whole milliseconds (coarse)."""
    _known_index(ctx)
    known = _recorded_mtime(workspace)
    coarse = (known // 1_000_000 + 3) * 1_000_000
    meta = workspace / "authors_by_country.metadata.json"
    index = SavedQueryIndex(ctx.workspace_root)
    index.record(meta, [known + 5, coarse + 7])  # something else changed the folder first
    index.record(meta, [])  # the writer's chain broke
    index.record(meta, [known, coarse])  # a file system with coarse timestamps
    assert _recorded_mtime(workspace) == known
    index.record(meta, [known, coarse + 1, coarse + 9])
    assert _recorded_mtime(workspace) == coarse + 9
    index.record(meta, [known, coarse + 11])  # the index has moved on meanwhile
    assert _recorded_mtime(workspace) == coarse + 9
