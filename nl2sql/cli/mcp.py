"""``nl2sql-mcp``: run the MCP server over stdio (default) or streamable HTTP.

stdout belongs to the stdio transport: everything else (logs, errors) goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from nl2sql._helpers import imports_paused
from nl2sql.cli.errors import add_version_flag, run_cli
from nl2sql.config.memory_cap import limit_process_memory
from nl2sql.cli.options import (CommandParser, add_common_options, parse_command_line,
                                port_number)
from nl2sql.config.registry import ENV_AUTH_TOKEN, ENV_CONFIG, ENV_DATA_DIR, ENV_WORKSPACE
from nl2sql.operations.registry import OPERATIONS

_TOOLS = ", ".join(op.name for op in OPERATIONS)
DESCRIPTION = textwrap.fill(
    f"Serve nl2sql's tools ({_TOOLS}) and resources (db://catalog, db://{{db_id}}/schema) to "
    "MCP clients such as Claude Code.", width=90) + f"""
Config: --config, else ${ENV_CONFIG}, else ./dbs.yaml (in the folder the client starts the
server in). Schema caches: --data-dir, else ${ENV_DATA_DIR}, else 'data_dir:' in dbs.yaml, else
data/ beside it. Results: --workspace, else ${ENV_WORKSPACE}, else 'workspace:' in dbs.yaml, else
./workspace. With no dbs.yaml, both are in the per-user
dir ($XDG_DATA_HOME/nl2sql, by default ~/.local/share/nl2sql) and the bundled bookstore is served."""

def _executable() -> str:
    """This command's absolute path: MCP clients start it without the venv on PATH."""
    beside = Path(sys.executable).with_name("nl2sql-mcp")
    return str(beside) if beside.exists() else "/absolute/path/to/.venv/bin/nl2sql-mcp"


EPILOG = f"""\
Example:
  nl2sql-mcp                                     # stdio, for an MCP client to launch
  nl2sql-mcp --config ~/nl2sql/dbs.yaml --workspace ~/nl2sql/results
  nl2sql-mcp --transport http --port 8000        # streamable HTTP at http://127.0.0.1:8000/mcp
  nl2sql-mcp --transport http --host 192.168.1.5 --auth-token-file ~/.config/nl2sql/token
  claude mcp add nl2sql -e NL2SQL_CONFIG=$PWD/dbs.yaml -e NL2SQL_WORKSPACE=$PWD/workspace \\
    -- {_executable()}
(Claude Code starts the server without your shell's PATH or venv: give the absolute path.)"""


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="nl2sql-mcp", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version_flag(parser)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                        help="stdio (default) or streamable HTTP")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=8000, help="HTTP port (default 8000; 0: any)")
    parser.add_argument("--auth-token-file", metavar="PATH",
                        help=f"HTTP: require 'Authorization: Bearer TOKEN' on every request, "
                             f"the token read from PATH (mode 0600; default: ${ENV_AUTH_TOKEN}); "
                             f"needed for a non-loopback --host")
    parser.add_argument("--auth-token", metavar="TOKEN",
                        help="HTTP: the token itself (visible to other users in the process "
                             "list: prefer --auth-token-file)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="HTTP: a host name clients use (Host header check against DNS "
                             "rebinding); repeatable; needed with --host 0.0.0.0")
    add_common_options(parser)
    return parser


def _run(argv: list[str] | None) -> int:
    args = parse_command_line(build_parser(), argv)  # logging before the SDK's, which then defers
    # Imported once the arguments are parsed: the MCP SDK takes ~0.5 s to import, which --help
    # and a mistyped option need not wait for (a server imports it before tools/list anyway).
    with imports_paused():
        from nl2sql.mcp.auth import load_token
        from nl2sql.mcp.http import serve_http
        from nl2sql.mcp.server import build_server

    limit_process_memory()  # NL2SQL_MAX_MEMORY: one query cannot take the server's host down

    token = (load_token(flag=args.auth_token, file=args.auth_token_file)
             if args.transport == "http" else None)
    server = build_server(args.config, data_dir=args.data_dir, workspace=args.workspace,
                          log_level="INFO" if args.verbose else "WARNING",
                          transport=args.transport)
    if args.transport == "http":
        serve_http(server, host=args.host, port=args.port, token=token,
                   allowed_hosts=args.allowed_host,
                   log_level="INFO" if args.verbose else "WARNING")
    else:
        if server.startup_note:
            print(server.startup_note, file=sys.stderr, flush=True)
        server.run("stdio")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_cli(_run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
