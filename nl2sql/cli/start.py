"""The console scripts (``pyproject.toml``): each command's module imported with the cyclic
garbage collector paused, what the imports made frozen out of later collections, then the
command run.

Importing a command (SQLAlchemy, pydantic, the MCP SDK, nl2sql's models) allocates objects that
live as long as the process, and every automatic collection during the imports re-scans all of
them: about 9% of the CPU time to ``nl2sql-mcp``'s ``tools/list`` answer
(``bench/mcp_cold_start.py``: 0.670 -> 0.610 s, the bare SDK server 0.585 s) and 0.04-0.05 s of
``annotate-schema``'s 0.35 s of imports (``bench/annotate_wide.py --process``). Reference
counting frees what dies meanwhile; a cycle made during the imports waits for the next
collection. ``gc.freeze()`` then moves what the imports made to the permanent generation, so
the collections while the command runs skip it. The command modules themselves stay free of
this: importing one (tests, other code) changes nothing about the collector.
"""

from __future__ import annotations

import gc
import importlib
from types import ModuleType
from typing import NoReturn

#: The module that implements each console script (its ``build_parser`` documents the options).
COMMANDS = {
    "annotate-schema": "nl2sql.cli.annotate",
    "nl2sql-ask": "nl2sql.cli.ask",
    "nl2sql-audit": "nl2sql.cli.audit",
    "nl2sql-eval": "nl2sql.cli.eval",
    "nl2sql-mcp": "nl2sql.cli.mcp",
    "nl2sql-secrets": "nl2sql.cli.secrets",
    "nl2sql-web": "nl2sql.cli.web",
}


def imported(script: str) -> ModuleType:
    """The module of the console script ``script``, imported with the collector paused, then
    what the imports made frozen; and the process marked as a console script's, so that what
    the command imports later (``nl2sql._helpers.imports_paused``) is frozen too."""
    gc.disable()
    try:
        module = importlib.import_module(COMMANDS[script])
        from nl2sql import _helpers  # the command imported it already

        _helpers.console_script = True
        _helpers.freeze_imports()
    finally:
        gc.enable()
    return module


def _command(script: str) -> NoReturn:
    """A command: its ``main()``, then the process ends with its code (``exit_process``)."""
    main = imported(script).main
    # Here, not at the top: this module imports nothing of nl2sql itself, so that all of it is
    # imported with the collector paused (the command has imported this module already).
    from nl2sql.cli.errors import exit_process

    exit_process(main())


def annotate_schema() -> NoReturn:
    _command("annotate-schema")


def nl2sql_ask() -> NoReturn:
    _command("nl2sql-ask")


def nl2sql_audit() -> NoReturn:
    _command("nl2sql-audit")


def nl2sql_eval() -> NoReturn:
    _command("nl2sql-eval")


def nl2sql_secrets() -> NoReturn:
    _command("nl2sql-secrets")


def nl2sql_mcp(argv: list[str] | None = None) -> int:
    """A server: its ``main`` returns when it stops (no ``exit_process``)."""
    return imported("nl2sql-mcp").main(argv)


def nl2sql_web(argv: list[str] | None = None) -> int:
    return imported("nl2sql-web").main(argv)
