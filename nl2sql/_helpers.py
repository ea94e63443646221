"""Small helpers every layer shares: wording, progress reporting, the status of a long call,
pausing the garbage collector, lazy package exports, quiet third-party imports and the OS
account's name."""

from __future__ import annotations

import contextvars
import gc
import getpass
import importlib
import logging
import os
import sys
import unicodedata
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

# --- wording --------------------------------------------------------------------------------

ELLIPSIS = "…"


def plural(n: int, noun: str) -> str:
    """``plural(1, "table")`` -> "1 table"; ``plural(1200, "row")`` -> "1,200 rows"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def terminal_text(text: str, *, replacement: str = "\ufffd") -> str:
    """``text`` safe to print for a person: each control or format character (a terminal
    escape, a bidi override, a zero-width one) but line breaks and tabs becomes
    ``replacement``, so what a model wrote or a table stores cannot rewrite the screen, set
    the clipboard or reorder what is read."""
    return "".join(replacement if c not in "\n\t" and unicodedata.category(c) in _NOT_SHOWN
                   else c for c in text)


def one_line(text: str) -> str:
    """``text`` as one line a person reads as it is (``terminal_text``, line breaks and runs of
    whitespace one space). For text a model wrote that a person then judges (a proposal's
    question and SQL, the audit log's SQL)."""
    return " ".join(terminal_text(text, replacement=" ").split())


_NOT_SHOWN = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when anything was cut."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def install_command(extra: str) -> str:
    """How to add an extra, as messages and docs say it: nl2sql installs from its clone (the
    ``nl2sql`` on PyPI is another project)."""
    return f"run `pip install -e '.[{extra}]'` in the nl2sql clone"


# --- progress: how long-running work (annotation) reports it; the CLI draws a bar or logs ---

class ProgressReporter(Protocol):
    def start(self, phase: str, total: int) -> None: ...
    def advance(self, item: str) -> None: ...
    def finish(self) -> None: ...


class NullProgress:
    """Reports nothing: the default for library callers."""

    def start(self, phase: str, total: int) -> None:
        pass

    def advance(self, item: str) -> None:
        pass

    def finish(self) -> None:
        pass


# --- status: what a long call is doing now, for a face that shows it (nl2sql-ask's spinner) ---

_STATUS: contextvars.ContextVar[Callable[[str], object] | None] = contextvars.ContextVar(
    "nl2sql_status", default=None)


def say(text: str) -> None:
    """Tell the face showing the status what is happening now (nothing when none listens).
    Worker threads see the caller's listener: ``nl2sql._worker`` copies the context."""
    listener = _STATUS.get()
    if listener is not None:
        listener(text)


@contextmanager
def status_to(listener: Callable[[str], object] | None) -> Iterator[None]:
    """``say`` calls ``listener`` while the block runs (and in the tasks and hand-offs it
    starts)."""
    token = _STATUS.set(listener)
    try:
        yield
    finally:
        _STATUS.reset(token)


# --- pausing the cyclic garbage collector while many long-lived objects are built ----------

@contextmanager
def gc_paused() -> Iterator[None]:
    """A wide schema (a reflection, a catalog of indexes) allocates hundreds of thousands of
    dicts, tuples and models that live on; each automatic collection re-scans all of them, which
    cost ~35% of the extraction time on a 1,000-table schema (bench/extract_wide.py) and half of
    a 200-database catalog load (bench/context_speed.py). Reference counting still frees
    everything; cycles, if any, are collected afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: Whether this process runs one of nl2sql's console scripts (set by ``nl2sql.cli.start``).
console_script = False


def freeze_imports() -> None:
    """In a console script's process, what exists now moved out of the collector's reach
    (``gc.freeze``): the modules imported so far live as long as the process, and every later
    collection would scan them again (``nl2sql.cli.start``). Anywhere else (a library's user,
    the tests) nothing: a frozen object is never collected."""
    if console_script:
        gc.freeze()


@contextmanager
def imports_paused() -> Iterator[None]:
    """The block's imports with the collector paused, then frozen (``freeze_imports``): for
    what a command imports once its arguments are parsed (the server, the web stack)."""
    with gc_paused():
        yield
    freeze_imports()


# --- lazy package exports (PEP 562) ----------------------------------------------------------

def lazy_exports(package: str, where: dict[str, str],
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``name`` comes from
    ``{package}.{where[name]}`` and is cached in the package's namespace after first use, so
    importing the package stays cheap."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return [*namespace, *where]

    return __getattr__, __dir__


# --- importing third-party modules without changing the user's logging or warning output ---

@contextmanager
def quiet_imports(*names: str) -> Iterator[None]:
    """Some libraries configure logging on import (one calling ``logging.basicConfig(level=INFO)``
    makes every library's INFO lines appear in a notebook; ``bm25s`` sets its own logger to
    DEBUG, so its debug lines reach stderr) or warn
    about optional notebook widgets (``tqdm.auto`` via ``bm25s``). Import them inside
    ``quiet_imports(name)``: the root logger and the library's own logger are put back as they
    were, and the widget warning is not shown.

        with quiet_imports("bm25s"):
            import bm25s
    """
    root = logging.getLogger()
    own = [logging.getLogger(name) for name in names]
    handlers, level, own_levels = list(root.handlers), root.level, [o.level for o in own]
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="IProgress not found")
            yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        for logger, own_level in zip(own, own_levels):
            logger.setLevel(own_level)


def os_user_name() -> str:
    """The name of the operating-system account this process runs as: from the user database
    by uid where there is one (``USER``/``LOGNAME`` can be set to anything)."""
    try:
        import pwd  # not on Windows
    except ImportError:
        return getpass.getuser()
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # a uid without a passwd entry (containers)
        return getpass.getuser()
