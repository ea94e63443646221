"""What the store costs the calls that use it, on SQLite files (the default) and on PostgreSQL.

Times, each the median of ``--calls`` after a warm-up:

- the lookup that serves a verified answer (``answers(db_id).for_question``) among
  ``--answers`` verified answers of one database (every ``ask()`` pays it first);
- one audit record written (``audit.append``; the access layer batches a busy server's);
- a turn appended to a conversation, and its turns read back;
- with ``--store`` only (a shared store keeps the saved-query index): ``saved_queries_list``'s
  search among ``--results`` indexed results (newest 50, and by two words), and a save's record.

Usage:
    .venv/bin/python bench/store.py [--store postgresql://...] [--answers 1000]
        [--results 100000] [--calls 200]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from timing import median_ms

from nl2sql.store.records import AuditRecord, VerifiedAnswer
from nl2sql.store.schema import saved_query
from nl2sql.store.store import Store
from nl2sql.verified.questions import question_key


def fill_answers(store: Store, count: int) -> None:
    answers = store.answers("bench")
    for k in range(count):
        question = f"How many orders did customer {k} place?"
        answers.add(VerifiedAnswer(id=f"{k:012x}", db_id="bench", question=question,
                                   question_key=question_key(question),
                                   sql=f"SELECT count(*) FROM orders WHERE customer_id = {k}"))


def fill_index(store: Store, workspace: str, count: int) -> None:
    table = store.saved_queries
    rows = [{"workspace": workspace, "path": f"result_{k}.metadata.json",
             "timestamp": f"2026-01-01T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d}",
             "db_id": "bookstore", "row_count": 1, "column_count": 3,
             "csv_filename": f"result_{k}.csv",
             "natural_language_query": f"order number {k} and its customer",
             "sql_query": f"SELECT * FROM orders WHERE id = {k}", "result_id": f"{k:012x}"}
            for k in range(count)]
    table.database.write(lambda connection: connection.execute(saved_query.insert(), rows),
                         ordered=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", help="a PostgreSQL URL (default: SQLite files in a "
                                        "temporary data dir)")
    parser.add_argument("--answers", type=int, default=1000)
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder), args.store)
        print(f"store: {store.describe()}")
        fill_answers(store, args.answers)
        key = question_key(f"how many orders did customer {args.answers // 2} place")
        answers = store.answers("bench")
        print(f"serve lookup among {args.answers:,} answers: "
              f"{median_ms(lambda: answers.for_question(key), args.calls):.2f} ms")
        record = AuditRecord(user="ana", face="mcp-http", tool="db_execute_sql",
                             db_id="bench", sql="SELECT 1", row_count=1, duration_ms=2)
        print(f"audit append: {median_ms(lambda: store.audit.append(record), args.calls):.2f} ms")
        turns = store.conversations
        counter = iter(range(10**9))
        print(f"turn append: {median_ms(lambda: turns.append('c', user='ana', request_id=str(next(counter)), question='q', db_id='bench', answer_json=None, messages_json=b'[]'), args.calls):.2f} ms")  # noqa: E501
        print(f"turns read ({len(turns.turns('c', user='ana'))} turns): "
              f"{median_ms(lambda: turns.turns('c', user='ana'), args.calls):.2f} ms")
        if not store.shared:
            return
        workspace = f"{folder}/ws"
        fill_index(store, workspace, args.results)
        table = store.saved_queries
        calls = min(args.calls, 50)
        print(f"index search, newest 50 of {args.results:,}: "
              f"{median_ms(lambda: table.search(workspace, None, limit=50), calls):.1f} ms")
        print(f"index search 'order 4711': "
              f"{median_ms(lambda: table.search(workspace, ['order', '4711'], limit=50), calls):.1f} ms")  # noqa: E501
        values = {"timestamp": "2027-01-01T00:00:00", "db_id": "bookstore", "row_count": 1,
                  "column_count": 1, "csv_filename": "new.csv", "sql_query": "SELECT 1",
                  "natural_language_query": "a new one", "result_id": "new"}
        print(f"index record (a save): "
              f"{median_ms(lambda: table.record(workspace, 'new.metadata.json', values), calls):.2f} ms")  # noqa: E501


if __name__ == "__main__":
    main()
