"""The one error edge of every nl2sql command: expected errors become ``error: <message>``.

Usage in a CLI module::

    def main(argv: list[str] | None = None) -> int:
        return run_cli(_run, argv)

Its console script (``cli/start.py``) ends the process with ``exit_process(main())``.

A command's process ends without tearing the interpreter down (``exit_process``): freeing every
module and object one by one took 0.25-0.36 s after ``annotate-schema`` of 1,000 tables (0.11 s
after the imports alone), longer than the interpreter's start; nothing a command writes waits
for it (files are closed when written; the at-exit work, such as the audit trail's flush, runs
first).
"""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import sys
import threading
from pathlib import Path
from collections.abc import Callable
from typing import NoReturn

from nl2sql._call_stop import logger as stop_logger
from nl2sql.cli.signals import Received, stopping_signals
from nl2sql._tracing import configure_from_environment
from nl2sql._tracing import shutdown as shutdown_tracing
from nl2sql.errors import InternalError, Nl2SqlError, as_one_sentence
from nl2sql import __version__

EXIT_ERROR = 1


def exit_process(code: int) -> NoReturn:
    """End the process with ``code`` as the interpreter's exit would, less its teardown: wait
    for the threads that are not daemons and run the at-exit functions (what ``Py_Finalize``
    does first; ``threading._shutdown`` is the interpreter's own hook for it), flush stdout and
    stderr, then ``os._exit``."""
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`) or stream: nothing to add
            code = code or 120  # what the interpreter's own exit answers then
    os._exit(code)


def run_cli(func: Callable[[list[str] | None], int | None], argv: list[str] | None = None) -> int:
    """Run ``func(argv)`` and return its exit code. An ``Nl2SqlError`` prints one line to
    stderr and exits with its ``exit_code`` (2: a set-up or usage error such as a broken
    dbs.yaml, an unknown database id, a missing extra; 1: the command's own "no"); argparse
    usage errors keep their code (2); Ctrl-C is 130 (SIGTERM 143, SIGHUP 129), with one line
    saying which running queries it stopped. A file-system failure (disk full, no permission...) is one line too
    (2); anything else is "internal error, see the log" (1) with the traceback logged
    (stderr, ``-v`` for the nl2sql logger's details)."""
    stops = _HeldStops()
    stop_logger.addFilter(stops)
    tracing = configure_from_environment(Path(sys.argv[0]).name or "nl2sql")  # OTEL_* asked
    try:
        with stopping_signals() as received:
            return _run_cli(func, argv, stops, received)
    finally:
        stop_logger.removeFilter(stops)
        stops.release()
        if tracing:
            shutdown_tracing()  # export what is buffered


def _run_cli(func: Callable[[list[str] | None], int | None], argv: list[str] | None,
             stops: _HeldStops, received: Received) -> int:
    try:
        return func(argv) or 0
    except Nl2SqlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        if isinstance(exc.code, str):
            print(f"error: {exc.code}", file=sys.stderr)
            return EXIT_ERROR
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP (nl2sql.cli.signals)
        print(stops.interrupted_line(received.words), file=sys.stderr)
        return received.exit_code
    except Exception as exc:  # noqa: BLE001 - the edge: a file-system fault or a bug, one line
        if isinstance(exc, OSError) or logging.getLogger("nl2sql").isEnabledFor(logging.DEBUG):
            error = as_one_sentence(exc, _command_name())  # -v: traceback logged
        else:
            error = InternalError(f"internal error ({type(exc).__name__} in "
                                  f"{_command_name()}); run it again with -v to see the "
                                  f"details in the log.")
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code


class _HeldStops(logging.Filter):
    """The log records of queries stopped while a command runs (``nl2sql._call_stop``), held so
    that Ctrl-C says them in its one line; on any other exit they are logged as usual."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "stopped") and not hasattr(record, "not_run"):
            return True  # e.g. a stop that failed: logged at once
        self.held.append(record)
        return False

    def interrupted_line(self, words: str = "interrupted") -> str:
        stopped = [getattr(r, "stopped") for r in self.held if hasattr(r, "stopped")]
        count = len(stopped)
        self.held.clear()  # said here (a query not run: nothing to say), not logged again
        if not count:
            return words
        queries = "the running query" if count == 1 else f"{count} running queries"
        return f"{words}; stopped {queries} on {', '.join(dict.fromkeys(stopped))}"

    def release(self) -> None:
        for record in self.held:
            stop_logger.handle(record)
        self.held.clear()


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
