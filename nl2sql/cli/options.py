"""Options every nl2sql command shares: where the registry, the caches and the results are,
and how much to log. Flags win over the ``NL2SQL_*`` variables, which win over dbs.yaml."""

from __future__ import annotations

import argparse
import typing

from nl2sql.config.registry import ENV_CONFIG, ENV_DATA_DIR, ENV_WORKSPACE
from nl2sql.cli.errors import configure_logging


#: Where the cache and the results go, as ``DbConnectionConfigs.load`` decides it.
DATA_DIR_HELP = (f"folder of the schema caches and conversations (default: ${ENV_DATA_DIR}, else "
                 f"'data_dir:' in dbs.yaml, else data/ beside dbs.yaml; with no dbs.yaml, the "
                 f"per-user dir $XDG_DATA_HOME/nl2sql, by default ~/.local/share/nl2sql)")
WORKSPACE_HELP = (f"folder for result files (default: ${ENV_WORKSPACE}, else 'workspace:' in "
                  f"dbs.yaml, else ./workspace; with no dbs.yaml, workspace/ in the per-user "
                  f"dir)")


class CommandParser(argparse.ArgumentParser):
    """argparse for an nl2sql command: a usage error is one line naming the problem and where
    the usage is (exit 2), not the whole usage block."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def add_common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help=f"path of dbs.yaml (default: ${ENV_CONFIG} or ./dbs.yaml)")
    parser.add_argument("--data-dir", help=DATA_DIR_HELP)
    parser.add_argument("--workspace", help=WORKSPACE_HELP)
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")


def positive_int(text: str) -> int:
    """argparse type: a whole number of 1 or more (a bad value exits 2 before any work)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: a whole number of 0 or more."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def parse_command_line(parser: argparse.ArgumentParser,
                       argv: list[str] | None) -> argparse.Namespace:
    """``argv`` parsed by ``parser``, and logging set up from ``-v`` before anything logs."""
    args = parser.parse_args(argv)
    configure_logging(args.verbose)
    return args


def port_number(text: str) -> int:
    """argparse type: a TCP port, 0 (any free one) to 65535."""
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be a port number from 0 (any free port) to 65535")
    return value
