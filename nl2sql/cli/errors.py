"""The one error edge of every nl2sql command: expected errors become ``error: <message>``.

Usage in a CLI module::

    def main(argv: list[str] | None = None) -> int:
        return run_cli(_run, argv)
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable

from nl2sql.errors import Nl2SqlError

EXIT_ERROR = 1
EXIT_USAGE = 2  # what argparse uses for a bad command line
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C


def run_cli(func: Callable[[list[str] | None], int | None], argv: list[str] | None = None) -> int:
    """Run ``func(argv)`` and return its exit code. ``Nl2SqlError`` prints one line to stderr
    (1); argparse usage errors keep their code (2); Ctrl-C is 130. Anything else is a bug and
    keeps its traceback."""
    try:
        return func(argv) or 0
    except Nl2SqlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        if isinstance(exc.code, str):
            print(f"error: {exc.code}", file=sys.stderr)
            return EXIT_ERROR
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """``--version``: print ``<command> <nl2sql version>`` and exit 0 (every command has it)."""
    from nl2sql import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")


def configure_logging(verbose: bool = False) -> None:
    """Logs to stderr (stdout may belong to MCP stdio or to piped output): nl2sql at INFO
    (DEBUG with ``verbose``), other libraries at WARNING (INFO with ``verbose``)."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("nl2sql").setLevel(logging.DEBUG if verbose else logging.INFO)
