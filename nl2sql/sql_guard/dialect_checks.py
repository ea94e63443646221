"""Parser-layer checks that differ by dialect: credential tables (every dialect), and a table
of per-dialect checks (MySQL's executable comments and user-defined functions, DuckDB's reads
of files by path)."""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp
from sqlglot.tokens import Token

from nl2sql.sql_guard import messages
from nl2sql.sql_guard.denylist import MYSQL_BUILTINS, is_denied_table

# MySQL runs the text of /*! ... */ (MariaDB also /*M! ... */) as SQL: the parser would take it
# for a comment, so it is refused wherever it appears outside a string.
_EXECUTABLE_COMMENT = re.compile(r"/\*M?!")
# DuckDB reads a file for a table name that looks like a path ("replacement scan").
_FILE_LIKE = re.compile(r"[/\\]|\.(csv|tsv|txt|parquet|json|jsonl|ndjson|gz|zst|xlsx|db|duckdb)$",
                        re.IGNORECASE)


def check_dialect(root: exp.Expr, tokens: list[Token], text: str, dialect: str) -> None:
    """Raise QueryRejectedError for a credential table or a dialect-specific trick."""
    for check in _TEXT_CHECKS.get(dialect, ()):
        check(tokens, text)
    node_checks = _NODE_CHECKS.get(dialect, ())
    for node in root.walk():
        if isinstance(node, exp.Table) and is_denied_table(node.name, node.db or None, dialect):
            raise messages.reject(
                f"The table {node.name} holds credentials and may not be read; query the "
                f"application's own tables instead.")
        if isinstance(node, exp.Func) and is_denied_table(node.name, None, dialect):
            raise messages.reject(messages.denied_function(node.name.lower()))
        for check in node_checks:
            check(node)


def _executable_comments(tokens: list[Token], text: str) -> None:
    comments = [c for token in tokens for c in (token.comments or [])]
    if any(c.lstrip().startswith(("!", "M!")) for c in comments) or _EXECUTABLE_COMMENT.search(
            _without_strings(text)):
        raise messages.reject(
            "Executable comments (/*! ... */) are not allowed: MySQL runs their text; write "
            "the SQL without them.")


def _without_strings(text: str) -> str:
    return re.sub(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"|`[^`]*`", "''", text)


def _user_defined_function(node: exp.Expr) -> None:
    if isinstance(node, exp.Anonymous) and node.name.lower() not in MYSQL_BUILTINS:
        raise messages.reject(
            f"The function {node.name} is not a MySQL built-in; user-defined functions are "
            f"not allowed in read-only queries (their bodies cannot be checked).")


def _file_path_table(node: exp.Expr) -> None:
    if isinstance(node, exp.Table) and (isinstance(node.this, exp.Literal)
                                        or _FILE_LIKE.search(node.name or "")):
        raise messages.reject("Reading a file by its path is not allowed; query the configured "
                              "tables and views instead.")


_TEXT_CHECKS: dict[str, tuple[Callable[[list[Token], str], None], ...]] = {
    "mysql": (_executable_comments,),
}
_NODE_CHECKS: dict[str, tuple[Callable[[exp.Expr], None], ...]] = {
    "mysql": (_user_defined_function,),
    "duckdb": (_file_path_table,),
}
