"""Every expected failure of nl2sql, under one root.

Messages are one sentence a person can act on: what went wrong and what to do next. They never
contain a password, a key or a ciphertext. The edges translate them once: the CLI prints
``error: <message>``, MCP tools raise ``ToolError(message)``, agents raise ``ModelRetry`` for
what the model can fix and ``UserError`` for the rest.
"""

from __future__ import annotations

import difflib
import errno
import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

logger = logging.getLogger("nl2sql")


def did_you_mean(name: str, choices: Iterable[str], *, capitalize: bool = True) -> str:
    """``"Did you mean 'x'? "`` for the closest of ``choices``, or ``""`` when none is close;
    a name several schema-qualified choices end with gets them all (``'orders'``: ``"Did you
    mean 'sales.orders' or 'archive.orders'? "``)."""
    choices = list(choices)
    bare = str(name).rsplit(".", 1)[-1].lower()
    close = [choice for choice in choices if "." in choice
             and choice.rsplit(".", 1)[-1].lower() == bare]
    if len(close) < 2:
        close = difflib.get_close_matches(str(name), choices, n=1, cutoff=0.6)
    if not close:
        return ""
    listed = " or ".join(f"'{choice}'" for choice in close)
    return f"{'Did' if capitalize else 'did'} you mean {listed}? "


def require_question(question: str) -> str:
    """``question`` without surrounding blanks; an ``Nl2SqlError`` when nothing is left or
    when it is not text (a lone surrogate: a byte a terminal sent that is not UTF-8)."""
    if not isinstance(question, str):
        raise Nl2SqlError(f"The question must be text (got {type(question).__name__}).")
    question = question.strip()
    if not question:
        raise Nl2SqlError("The question is empty; ask something about the data.")
    return require_text(question, "The question")


def require_string(value: object, name: str) -> str:
    """``value`` when it is a string; else an ``Nl2SqlError`` naming the argument ``name`` (a
    Python caller's id of the wrong kind is one sentence, not an ``AttributeError``)."""
    if not isinstance(value, str):
        raise Nl2SqlError(f"{name} must be a string (got {type(value).__name__}).")
    return value


def require_whole_number(value: object, name: str, *, at_least: int | None = 1) -> int:
    """``value`` when it is an ``int`` (not a bool) of at least ``at_least`` (None: any);
    else an ``Nl2SqlError`` naming the argument ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or (
            at_least is not None and value < at_least):
        raise Nl2SqlError(f"{name} must be a whole number of at least {at_least or 1} (got "
                          f"{value!r}).")
    return value


def require_text(text: str, what: str) -> str:
    """``text``, or an ``Nl2SqlError`` naming ``what`` when it holds a NUL (PostgreSQL stores
    refuse it) or UTF-8 cannot encode it (no store, file or driver takes it)."""
    if "\x00" in text:
        raise Nl2SqlError(f"{what} contains a NUL character; remove it and send it again.")
    odd = lone_surrogate(text)
    if odd is not None:
        raise Nl2SqlError(f"{what} is not valid text (U+{ord(odd):04X}, a lone surrogate: a byte "
                          f"that is not UTF-8, as a terminal not set to UTF-8 sends); send it "
                          f"again as valid text.")
    return text


def lone_surrogate(text: str) -> str | None:
    """The first character of ``text`` that UTF-8 cannot encode (a lone UTF-16 surrogate: an
    undecodable byte from ``argv`` or a file read with ``surrogateescape``), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return text[exc.start]
    return None


class Nl2SqlError(Exception):
    """Root of every expected nl2sql error; ``str(error)`` is the message for people."""

    #: True when a model could correct the input (bad SQL, unknown column) and try again.
    model_fixable: bool = False
    #: What a command exits with when it stops on this error: 2, the set-up or the command
    #: line needs a fix (dbs.yaml, a missing extra, a model, a port); 1 is the command's own
    #: "no" (no answer) and an internal error.
    exit_code: int = 2

    def __init__(self, message: str, *, db_id: str | None = None, table: str | None = None,
                 sql: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.db_id = db_id
        self.table = table
        self.sql = sql

    def __str__(self) -> str:
        return self.message


class ConfigError(Nl2SqlError):
    """dbs.yaml is missing a field, has a wrong value, or is not valid YAML."""


class UsageError(Nl2SqlError):
    """What the command line asks for cannot be: an unknown database id, a busy port."""


class UnknownDatabaseError(UsageError):
    """A db_id that is not in the registry."""

    model_fixable = True


class AccessDeniedError(Nl2SqlError):
    """The caller may not do this: a database outside their groups, or curating without being
    a curator."""

    model_fixable = True  # a model can use one of the caller's own databases instead


class SecretsError(Nl2SqlError):
    """The secrets key is missing, unsafe or wrong, or an ENC: value cannot be decrypted."""


class SchemaCacheMissingError(Nl2SqlError):
    """No annotation cache exists for a database yet."""


class SchemaCacheError(Nl2SqlError):
    """The annotation cache exists but cannot be read."""


class DatabaseConnectionError(Nl2SqlError):
    """The database cannot be reached or refused the login."""


class LoginNotReadOnlyError(Nl2SqlError):
    """``require_read_only_login`` is set and the database's login can write or is privileged."""


class UnknownTableError(Nl2SqlError):
    """A table or column name that is not in the cached schema."""

    model_fixable = True


class QueryRejectedError(Nl2SqlError):
    """SQL refused by the read-only guard before it reaches the database."""

    model_fixable = True


class QueryExecutionError(Nl2SqlError):
    """The database refused or failed a query (syntax, missing column, timeout...)."""

    model_fixable = True


class QueryTimeoutError(QueryExecutionError):
    """A query ran longer than the statement time limit and was stopped."""


class WorkspacePathError(Nl2SqlError):
    """A file path that resolves outside the workspace, or a file that does not exist there."""

    model_fixable = True


class ResultExistsError(WorkspacePathError):
    """A result file name that is taken, without ``overwrite``: nothing is replaced."""


class WorkspaceFileError(Nl2SqlError):
    """A result file cannot be written or read: disk full, no permission, not a CSV text file."""


class ChartError(Nl2SqlError):
    """No chart for a result: its shape does not chart, or a kind, x, y or colour that does not
    fit its columns."""

    model_fixable = True


class ModelSetupError(Nl2SqlError):
    """The LLM provider cannot be used: no API key, unreachable host, rate limit, bad model name."""


class NoAnswerError(Nl2SqlError):
    """The agent ran out of retries or of its request/token budget without SQL that ran."""

    exit_code = 1

    def __init__(self, message: str, *, attempts: list | None = None,  # noqa: ANN001
                 db_id: str | None = None, sql: str | None = None) -> None:
        super().__init__(message, db_id=db_id, sql=sql)
        self.attempts = attempts or []
        self.cost_usd: float | None = None  # what the model requests cost (None: unpriced)


class VerifiedAnswerError(Nl2SqlError):
    """An answer cannot be accepted or found: unknown id, no question, SQL that no longer runs."""


class GlossaryError(ConfigError):
    """A glossary file is not valid YAML or an entry lacks a field (file, line and field)."""


class SemanticModelError(ConfigError):
    """A database's ``semantic_model:`` path is missing or none of it can be read."""


class MetricQueryError(Nl2SqlError):
    """A metric query that cannot be compiled: an unknown or broken metric, a dimension the
    metrics cannot be grouped by, a filter that is not a condition over group-by names."""

    model_fixable = True


class StorageError(Nl2SqlError):
    """A file could not be written or read: disk full, no permission, name too long..."""


class StoreError(Nl2SqlError):
    """The store (verified answers, proposals, conversations, users, the audit log) cannot be
    used: its PostgreSQL database is unreachable, its file cannot be opened, it was written by a
    newer nl2sql, or a name is taken."""


class InternalError(Nl2SqlError):
    """An unexpected failure (a bug, or a fault nobody foresaw); the details are in the log."""

    exit_code = 1


def free_space(path: Path | str | None) -> str:
    """``"1.5 MB free"`` on the file system of ``path`` (or its nearest existing parent)."""
    place = Path(path) if path else Path.cwd()
    while not place.exists() and place != place.parent:
        place = place.parent
    try:
        free = shutil.disk_usage(place).free
    except OSError:
        return "free space unknown"
    return f"{free / 1e6:,.1f} MB free" if free >= 1e6 else f"{free:,} bytes free"


def os_error_sentence(exc: OSError, path: Path | str | None = None) -> str:
    """One sentence for a file-system failure, naming the file (never its content)."""
    target = exc.filename or path
    where = f" ({target})" if target else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"The disk is full ({free_space(target)}){where}; free some space and try again."
    reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else type(exc).__name__)
    return f"{reason}{where}."


def as_one_sentence(exc: BaseException, where: str) -> Nl2SqlError:
    """The ``Nl2SqlError`` a face reports for ``exc``: expected errors as they are, file-system
    failures as one sentence, anything else as "internal error, see the log" with the details
    (traceback included) logged, never shown."""
    if isinstance(exc, Nl2SqlError):
        return exc
    if isinstance(exc, OSError):
        logger.debug("%s: %r", where, exc)
        return StorageError(f"{where} failed: {os_error_sentence(exc)}")
    logger.error("%s: unexpected error", where, exc_info=exc)
    return InternalError(f"internal error, see the log ({type(exc).__name__} in {where}).")
