"""``nl2sql-web``: the page for people who do not write code, and the MCP endpoint at ``/mcp``
with the same users, in one process."""

from __future__ import annotations

import argparse
import sys

from nl2sql._helpers import imports_paused
from nl2sql.cli.errors import add_version_flag, run_cli
from nl2sql.cli.options import (CommandParser, add_common_options, parse_command_line,
                                port_number)
from nl2sql.config.memory_cap import limit_process_memory
from nl2sql.config.registry import ENV_AUTH_TOKEN, ENV_CONFIG, ENV_MODEL

DESCRIPTION = f"""\
Serve the nl2sql page: ask questions in plain language and see the SQL, the rows and a chart;
browse the schema, saved queries and your history; curators accept answers. The MCP endpoint
is served on the same address, with the same users (both URLs are printed at start).
Config: --config, else ${ENV_CONFIG}, else ./dbs.yaml. Model: ${ENV_MODEL} or 'model:' in dbs.yaml
(without one the page still shows the schema, saved queries and runs SQL you write). Schema
caches: --data-dir, else data/ beside dbs.yaml; with no dbs.yaml, the per-user dir
$XDG_DATA_HOME/nl2sql, by default ~/.local/share/nl2sql, and the bundled bookstore is served."""

EPILOG = """\
Example:
  nl2sql-web                                     # http://127.0.0.1:8080/ (its URL on stderr)
  nl2sql-web --config ~/nl2sql/dbs.yaml --port 0 # any free port
  nl2sql-secrets add-user ana --group analysts   # her token signs her in (docs/team.md)
  nl2sql-web --host 127.0.0.1 --port 8080 --allowed-host nl2sql.acme.example  # behind TLS"""


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="nl2sql-web", description=DESCRIPTION, epilog=EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version_flag(parser)
    parser.add_argument("--host", default="127.0.0.1",
                        help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=8080,
                        help="port (default 8080; 0: any free port)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="a host name people use (Host header check against DNS "
                             "rebinding); repeatable; needed with --host 0.0.0.0")
    parser.add_argument("--auth-token-file", metavar="PATH",
                        help=f"a one-user page (no users configured): sign in with the token "
                             f"read from PATH (mode 0600; default: ${ENV_AUTH_TOKEN}); needed "
                             f"for a non-loopback --host without users")
    add_common_options(parser)
    return parser


def _run(argv: list[str] | None) -> int:
    args = parse_command_line(build_parser(), argv)
    # Imported once the arguments are parsed: the page, the MCP SDK and uvicorn take ~1 s to
    # import, which --help and a mistyped option need not wait for (1.24 -> 0.2 s).
    with imports_paused():
        from nl2sql.mcp.auth import load_token
        from nl2sql.mcp.http import MCP_PATH, netloc, run_app
        from nl2sql.web import build_app

    limit_process_memory()
    log_level = "INFO" if args.verbose else "WARNING"
    app = build_app(args.config, data_dir=args.data_dir, workspace=args.workspace,
                    host=args.host, allowed_hosts=args.allowed_host,
                    server_token=load_token(flag=None, file=args.auth_token_file),
                    log_level=log_level)

    def started(port: int) -> None:
        print(f"nl2sql-web: http://{netloc(args.host)}:{port}/ (MCP at "
              f"http://{netloc(args.host)}:{port}{MCP_PATH})", file=sys.stderr, flush=True)

    run_app(app, host=args.host, port=args.port, log_level=log_level, started=started)
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_cli(_run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
