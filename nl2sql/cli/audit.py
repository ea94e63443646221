"""``nl2sql-audit``: read the audit log, one record per tool call, ask and data request.

A thin adapter over the store's ``AuditLog.read`` (records stream from the store oldest first,
filtered there): ``--json`` prints one JSON object per line with the record's fields, otherwise
one aligned line per record.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone

from nl2sql._helpers import one_line
from nl2sql.cli.errors import add_version_flag, run_cli
from nl2sql.cli.options import CommandParser, add_common_options, parse_command_line
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.store.records import AuditRecord
from nl2sql.store.store import Store

DESCRIPTION = """\
Read the audit log: who ran what, through which face, on which database, and how it ended
(ok, refused, error, cancelled). One record per MCP tool call, resource read and prompt, per
ask (nl2sql-ask, nl2sql.ask()) and per tool call of an agent, kept in the store (dbs.yaml's
'store:', else audit.sqlite in the data dir)."""
EPILOG = """\
Example:
  nl2sql-audit                                   # every record, oldest first
  nl2sql-audit --user ana --since 2026-05-01     # ana's, since May 1st (UTC)
  nl2sql-audit --db chinook --json | jq -r 'select(.outcome != "ok") | .sql'"""
_SQL_CHARS = 120


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="nl2sql-audit", description=DESCRIPTION, epilog=EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version_flag(parser)
    parser.add_argument("--user", help="only this user's records")
    parser.add_argument("--db", metavar="ID", help="only the records of this database")
    parser.add_argument("--since", metavar="ISO", type=_moment,
                        help="only records at or after this time (ISO 8601, e.g. 2026-05-01 or "
                             "2026-05-01T09:30:00+02:00; UTC when no offset is given)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per line (JSON lines) with every field")
    add_common_options(parser)
    return parser


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an ISO 8601 time; write it as "
                                         f"2026-05-01 or 2026-05-01T09:30:00") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _line(record: AuditRecord) -> str:
    """One line for a terminal: the SQL (a model's text) and the names without control or
    format characters, so an escape in them cannot rewrite what the reader sees."""
    sql = one_line(record.sql or "")
    sql = sql if len(sql) <= _SQL_CHARS else sql[:_SQL_CHARS - 1] + "…"
    rows = "" if record.row_count is None else f"{record.row_count} rows"
    user, tool, db_id = (one_line(v or "") or "-" for v in (record.user, record.tool,
                                                          record.db_id))
    return "  ".join([f"{record.ts:%Y-%m-%d %H:%M:%S}", f"{user:<12}",
                      f"{record.face or '-':<9}", f"{tool:<20}",
                      f"{db_id:<12}", f"{record.outcome:<9}", f"{rows:>10}",
                      f"{record.duration_ms or 0:>6} ms", sql])


def _run(argv: list[str] | None) -> int:
    args = parse_command_line(build_parser(), argv)
    configs = DbConnectionConfigs.load(args.config, data_dir=args.data_dir,
                                       workspace=args.workspace)
    if args.db and args.db not in configs:
        configs.get(args.db)  # an unknown db_id: one line with the known ones
    store = Store.of(configs)
    count = 0
    for record in store.audit.read(user=args.user, db_id=args.db, since=args.since):
        print(record.model_dump_json() if args.json else _line(record))
        count += 1
    if not count and not args.json:
        print(f"No audit records{' matching' if args.user or args.db or args.since else ''} "
              f"in {store.describe()}.", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_cli(_run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
