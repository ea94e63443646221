"""``nl2sql-ask``: ask a question in plain language; get SQL that ran, a preview and a CSV.

A thin face over ``nl2sql.ask()``: a spinner on stderr while the model works, then the SQL
(highlighted on a terminal), the explanation, the first rows, the CSV path, the attempts and
the usage on stdout (``--json``: the ``Answer`` fields as one JSON object). Exit codes: 0
answered, 1 no answer after the retries, 2 usage or setup error (no model, unknown database,
missing schema cache, unreachable provider).
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nl2sql._helpers import one_line, status_to, terminal_text
from nl2sql.schema.provenance import is_placeholder_model
from nl2sql.cli.errors import add_version_flag, run_cli
from nl2sql.config.memory_cap import limit_process_memory
from nl2sql.cli.options import (CommandParser, add_common_options, parse_command_line,
                                positive_int)
from nl2sql.config.registry import ENV_CONFIG, ENV_MODEL
from nl2sql.errors import Nl2SqlError, UsageError
from nl2sql.llm.usage import format_cost
from nl2sql.operations.ops_context import OpsContext
from nl2sql.context_engine import context
from nl2sql.operations import verified_answers as workflow

if TYPE_CHECKING:
    from nl2sql.agents.answer import Answer

PREVIEW_ROWS = 10

DESCRIPTION = f"""\
Answer a question from a configured database: the model writes SQL, nl2sql runs it read-only
(fixing it with the model when the database reports an error), saves the result as a CSV in
the workspace and prints the SQL, the first rows and the file. Without --db the catalog agent
picks the database. Model: --model, else ${ENV_MODEL}, else 'model:' in dbs.yaml. Config:
--config, else ${ENV_CONFIG}, else ./dbs.yaml. Exit codes: 0 answered, 1 no answer after the
retries, 2 usage or setup error."""

EPILOG = f"""\
Example:
  nl2sql-ask "How many books did each author write?"          # the bundled bookstore sample
  nl2sql-ask "How many tracks are in the Rock genre?" --db chinook --model openai:gpt-4o-mini
  nl2sql-ask "Revenue per country in 2024" --candidates 5     # 5 candidates, the majority wins
  {ENV_MODEL}=ollama:qwen2.5-coder nl2sql-ask "Top 5 customers by revenue" --json
  nl2sql-ask "Orders per month" --conversation sales --chart orders.png
  nl2sql-ask "and only for 2024?" --conversation sales      # a follow-up, even after a restart
  nl2sql-ask --list-conversations
  nl2sql-ask --accept 3f2a9c1b7d4e                           # the answer's id: mark it right
  nl2sql-ask --list-verified --db chinook
  nl2sql-ask --list-proposed                                 # what models proposed as right
  nl2sql-ask --reject 9b1c2d3e4f50                           # a proposal that is wrong
  nl2sql-ask --unverify 3f2a9c1b7d4e
  nl2sql-ask "How many tracks are in the Rock genre?" --no-reuse   # ask the model anyway"""


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="nl2sql-ask", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version_flag(parser)
    parser.add_argument("question", nargs="?", help="the question, in quotes")
    parser.add_argument("--db", metavar="ID", help="database id (default: the catalog agent "
                                                   "chooses, or the conversation's database)")
    parser.add_argument("--model", metavar="M", help="pydantic-ai model string, e.g. "
                        "openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, ollama:qwen2.5-coder, "
                        "openai-chat:<name> with OPENAI_BASE_URL for any OpenAI-compatible server")
    parser.add_argument("--conversation", metavar="ID",
                        help="continue (or start) a conversation: earlier turns are context")
    parser.add_argument("--max-rows", type=positive_int, metavar="N",
                        help=f"rows read into the answer (default: 'agent: max_rows', 1000); "
                             f"{PREVIEW_ROWS} are printed")
    parser.add_argument("--candidates", type=int, metavar="N",
                        help="write N SQL candidates at once and answer with the result most "
                             "of them agree on; prints how many agree (default: 'agent: "
                             "candidates', 1)")
    parser.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    parser.add_argument("--chart", metavar="FILE", help="also draw the result as a chart, "
                        "chosen from its shape: FILE.png or FILE.svg")
    parser.add_argument("--show-context", action="store_true",
                        help="print what the model would be shown (databases, tables with "
                             "reasons, values, examples, schema; with --json as one object) "
                             "and exit; needs no model")
    parser.add_argument("--no-reuse", action="store_true",
                        help="ask the model even when the question has a verified answer")
    parser.add_argument("--accept", metavar="ID",
                        help="mark the answer or proposal with this id right (its SQL is run "
                             "again and kept as a verified answer) and exit")
    parser.add_argument("--list-verified", action="store_true",
                        help="list the verified answers (of --db, else all), stale ones with "
                             "the reason, and exit")
    parser.add_argument("--unverify", metavar="ID", help="remove a verified answer and exit")
    parser.add_argument("--list-proposed", action="store_true",
                        help="list the proposals (answers a model accepted, waiting for a "
                             "person; of --db, else all) and exit")
    parser.add_argument("--reject", metavar="ID",
                        help="reject the proposal with this id (never served, not proposed "
                             "again) and exit")
    parser.add_argument("--list-conversations", action="store_true",
                        help="list the stored conversations and exit")
    parser.add_argument("--delete-conversation", metavar="ID", help="delete a conversation")
    add_common_options(parser)
    return parser


def _run(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parse_command_line(parser, argv)
    limit_process_memory()  # NL2SQL_MAX_MEMORY: DuckDB runs in this process

    ops = OpsContext.load_local(args.config, "cli", data_dir=args.data_dir,
                                workspace=args.workspace)
    try:
        # An id option given even empty ('--accept ""') is that command, not a question.
        if args.list_conversations or args.delete_conversation is not None:
            return _conversations(ops, args)
        if args.list_verified or args.list_proposed or any(
                value is not None for value in (args.accept, args.unverify, args.reject)):
            return _verified(ops, args)
        if not args.question or not args.question.strip():
            parser.error("give a question, e.g. nl2sql-ask \"How many books are there?\"")
        if args.chart and Path(args.chart).suffix.lower() not in (".png", ".svg"):
            parser.error(f"--chart {args.chart}: give a file name ending in .png or .svg")
        if args.show_context:
            prompt_context = context(args.question, db_id=args.db, config=ops)
            print(prompt_context.model_dump_json(indent=2) if args.json
                  else prompt_context.render())
            return 0
        if is_placeholder_model(args.model or ops.configs.model):
            raise UsageError(
                "The 'test' model is pydantic-ai's offline TestModel, a tool for developers: it "
                "answers with placeholder text, never SQL; pass a real model (--model "
                "openai:gpt-4o-mini, or ollama:qwen2.5-coder for a local one), or use "
                "--show-context to see what a model would be shown.")

        # Here, not at the top: the agents import pydantic-ai (0.4-1 s), which --help, the
        # verified answers' commands and --show-context never use.
        from nl2sql.agents.ask import ask

        with _spinner() as status, status_to(status.update if status else None):
            answer = ask(args.question, db_id=args.db, model=args.model,
                         conversation_id=args.conversation, config=ops, max_rows=args.max_rows,
                         reuse=not args.no_reuse, candidates=args.candidates)
    finally:
        ops.close()
    if args.json:
        print(json.dumps(answer.to_json_dict(), ensure_ascii=False, default=str))
    else:
        _print_answer(answer)
    if args.chart:
        _save_chart(answer, args.chart, ops, sys.stderr if args.json else sys.stdout)
    return 0


def _save_chart(answer: Answer, path: str, ops: Any, out: Any) -> None:
    chart = answer.chart(config=ops)
    if chart.kind is None:  # answered all the same: a note, not a failure
        print(f"no chart: {chart.reason}", file=sys.stderr)
        return
    chart.save(path)
    print(f"chart: {chart.describe()} Saved as {path}.", file=out)


def _conversations(ops: Any, args: argparse.Namespace) -> int:
    from nl2sql.agents.conversations import ConversationStore  # pydantic-ai's message types

    store = ConversationStore(ops.store, ops.caller.name)
    if args.delete_conversation is not None:
        count = store.delete(args.delete_conversation)
        if not count:
            raise Nl2SqlError(f"No conversation '{args.delete_conversation}'; list them with "
                              f"nl2sql-ask --list-conversations.")
        print(f"Deleted conversation {args.delete_conversation} ({count} turn(s)).")
        return 0
    conversations = store.list()
    if args.json:
        print(json.dumps([vars(c) for c in conversations], ensure_ascii=False))
    elif not conversations:
        print("No conversations yet; start one with --conversation ID.")
    for c in [] if args.json else conversations:
        print(f"{c.conversation_id}  {c.turns} turn(s), {c.db_id or '?'}, last {c.updated_at}"
              f"  — {c.first_question}")
    return 0


def _verified(ops: Any, args: argparse.Namespace) -> int:
    listing = args.list_verified or args.list_proposed
    if args.accept is not None:
        found = [workflow.accept_answer(ops, args.accept)]
        print(f"Verified {found[0].id} on {found[0].db_id}: the same question is now answered "
              f"from it with no model request.", file=sys.stderr if args.json else sys.stdout)
    elif args.reject is not None:
        found = [workflow.reject_proposal(ops, args.reject)]
        print(f"Rejected proposal {found[0].id}: it is never served and not proposed again.",
              file=sys.stderr if args.json else sys.stdout)
    elif args.unverify is not None:
        found = [workflow.unverify(ops, args.unverify)]
        print(f"Removed verified answer {found[0].id}.",
              file=sys.stderr if args.json else sys.stdout)
    elif args.list_proposed:
        found = workflow.list_proposed(ops, args.db)
    else:
        found = workflow.list_verified(ops, args.db)
    if args.json:
        print(json.dumps([v.model_dump(mode="json") for v in found], ensure_ascii=False))
        return 0
    if args.list_verified and not found:
        print("No verified answers yet; accept one with --accept ID (the answer's id).")
    if args.list_proposed and not found:
        print("No proposals waiting; a model's saved_query_accept makes one.")
    for answer in found if listing else []:
        print(answer.render())
    return 0


def _spinner() -> Any:
    if not sys.stderr.isatty():
        return nullcontext()
    from rich.console import Console

    return Console(stderr=True).status("Starting…", spinner="dots")  # then what runs now


def _print_answer(answer: Answer) -> None:
    """The answer for a person: the SQL and explanation are a model's text and the rows the
    database's, so every line goes through ``terminal_text`` (no escape reaches the terminal)."""
    from nl2sql.agents.answer import markdown_table  # loaded with the agents already

    if sys.stdout.isatty():
        from rich.console import Console
        from rich.syntax import Syntax

        Console().print(Syntax(terminal_text(answer.sql), "sql", word_wrap=True))
    else:
        print(terminal_text(answer.sql))
    print()
    print(terminal_text(answer.explanation))
    print()
    lines = markdown_table(answer.df, PREVIEW_ROWS)
    print(terminal_text("\n".join(lines)) if lines else "(no columns)")
    shown = min(PREVIEW_ROWS, answer.row_count)
    more = f" (showing {shown})" if answer.row_count > shown else ""
    cut = " — cut at the row limit" if answer.truncated else ""
    print(f"\n{answer.row_count:,} row(s){more}{cut} in {answer.csv_path}")
    failed = sum(1 for attempt in answer.attempts if attempt.error)
    print(f"database: {answer.db_id}; attempts: {len(answer.attempts)} ({failed} failed)")
    for number, attempt in enumerate(answer.attempts, 1):
        if attempt.error:
            sql = one_line(attempt.sql)
            print(f"  {number}. {sql[:120]}{'…' if len(sql) > 120 else ''}\n"
                  f"     error: {one_line(attempt.error)}")
    if answer.confidence is not None:
        print(answer.agreement_line())
        if answer.selection_reason:
            print(f"  tie settled by the selection step: "
                  f"{terminal_text(answer.selection_reason)}")
    usage = answer.usage
    print(f"usage: {usage.requests} request(s), {usage.input_tokens:,} input tokens, "
          f"{usage.output_tokens:,} output tokens, cost {format_cost(answer.cost_usd)}")
    print(f"receipt: {answer.receipt_line(usage=False)}")
    if answer.conversation_id:
        print(f"conversation: {answer.conversation_id} (follow up with --conversation "
              f"{answer.conversation_id})")


def main(argv: list[str] | None = None) -> int:
    return run_cli(_run, argv)  # NoAnswerError exits 1, the other Nl2SqlErrors 2


if __name__ == "__main__":
    raise SystemExit(main())
