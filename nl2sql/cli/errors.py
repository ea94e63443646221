"""The one error edge of every nl2sql command: expected errors become ``error: <message>``.

Usage in a CLI module::

    def main(argv: list[str] | None = None) -> int:
        return run_cli(_run, argv)
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from collections.abc import Callable

from nl2sql.errors import Nl2SqlError, UsageError, as_one_sentence
from nl2sql import __version__

EXIT_ERROR = 1
EXIT_USAGE = 2  # what argparse uses for a bad command line
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C


def run_cli(func: Callable[[list[str] | None], int | None], argv: list[str] | None = None) -> int:
    """Run ``func(argv)`` and return its exit code. ``Nl2SqlError`` prints one line to stderr
    (1; a ``UsageError`` such as an unknown database id 2); argparse usage errors keep their
    code (2); Ctrl-C is 130. A file-system failure (disk
    full, no permission...) is one line too; anything else is "internal error, see the log" with
    the traceback logged (stderr, ``-v`` for the nl2sql logger's details)."""
    try:
        return func(argv) or 0
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
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
    except Exception as exc:  # noqa: BLE001 - the edge: a file-system fault or a bug, one line
        if isinstance(exc, OSError) or logging.getLogger("nl2sql").isEnabledFor(logging.DEBUG):
            message = str(as_one_sentence(exc, _command_name()))  # -v: traceback logged
        else:
            message = (f"internal error ({type(exc).__name__} in {_command_name()}); run it "
                       f"again with -v to see the details in the log.")
        print(f"error: {message}", file=sys.stderr)
        return EXIT_ERROR


def _command_name() -> str:
    return Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "nl2sql"


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """``--version``: print ``<command> <nl2sql version>`` and exit 0 (every command has it)."""
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")


def configure_logging(verbose: bool = False) -> None:
    """Logs to stderr (stdout may belong to MCP stdio or to piped output): nl2sql at INFO
    (DEBUG with ``verbose``), other libraries at WARNING (INFO with ``verbose``)."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("nl2sql").setLevel(logging.DEBUG if verbose else logging.INFO)
