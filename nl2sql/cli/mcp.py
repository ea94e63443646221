"""``nl2sql-mcp``: run the MCP server over stdio (default) or streamable HTTP.

stdout belongs to the stdio transport: everything else (logs, errors) goes to stderr.
"""

from __future__ import annotations

import argparse
import textwrap

from nl2sql.cli.errors import configure_logging, run_cli

from nl2sql.config import ENV_CONFIG, ENV_DATA_DIR, ENV_WORKSPACE
from nl2sql.operations.registry import OPERATIONS

_TOOLS = ", ".join(op.name for op in OPERATIONS)
DESCRIPTION = textwrap.fill(
    f"Serve nl2sql's tools ({_TOOLS}) and resources (db://catalog, db://{{db_id}}/schema) to "
    "MCP clients such as Claude Code.", width=90) + f"""
Config: --config, else ${ENV_CONFIG}, else ./dbs.yaml. Results: --workspace, else
${ENV_WORKSPACE}, else ./workspace. Schema caches: --data-dir, else ${ENV_DATA_DIR}."""

EPILOG = """\
Example:
  nl2sql-mcp                                     # stdio, for an MCP client to launch
  nl2sql-mcp --config ~/nl2sql/dbs.yaml --workspace ~/nl2sql/results
  nl2sql-mcp --transport http --port 8000        # streamable HTTP at http://127.0.0.1:8000/mcp
  claude mcp add nl2sql -e NL2SQL_CONFIG=$PWD/dbs.yaml -- nl2sql-mcp"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nl2sql-mcp", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                        help="stdio (default) or streamable HTTP")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    parser.add_argument("--config", help=f"path of dbs.yaml (default: ${ENV_CONFIG} or ./dbs.yaml)")
    parser.add_argument("--workspace", help=f"folder for result files (default: ${ENV_WORKSPACE})")
    parser.add_argument("--data-dir",
                        help=f"folder of the schema caches (default: ${ENV_DATA_DIR})")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    return parser


def _run(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)  # before the SDK's own logging set-up, which then defers
    from nl2sql.mcp.server import build_server  # after parsing: --help stays instant

    server = build_server(args.config, data_dir=args.data_dir, workspace=args.workspace,
                          log_level="INFO" if args.verbose else "WARNING")
    if args.transport == "http":
        server.run("streamable-http", host=args.host, port=args.port)
    else:
        server.run("stdio")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_cli(_run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
