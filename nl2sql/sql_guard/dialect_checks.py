"""Parser-layer checks that only some backends need; a backend's guard profile (``profiles.py``)
lists the ones it runs (MySQL's executable comments and user-defined functions, DuckDB's reads
of files by path, Spark's rules in ``spark.py``). Each takes the query as the guard saw it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from nl2sql.sql_guard import allowlist, messages
from nl2sql.sql_guard import spark as spark_rules
from nl2sql.sql_guard.duckdb_functions import ALLOWLIST as DUCKDB_FUNCTIONS
from nl2sql.sql_guard.spark_functions import ALLOWLIST as SPARK_FUNCTIONS
from nl2sql.sql_guard.calls import arguments, calls, string_value
from nl2sql.sql_guard.denylist import (HARMLESS_VARIABLES, MYSQL_BUILTINS, SECRET_SETTING,
                                       SECRET_VARIABLE)

# MySQL runs the text of /*! ... */ (MariaDB also /*M! ... */) as SQL: the parser would take it
# for a comment, so it is refused wherever it appears outside a string.
_EXECUTABLE_COMMENT = re.compile(r"/\*M?!")
# The scope words of MySQL's @@GLOBAL.name, @@SESSION.name, @@LOCAL.name.
_SCOPES = {"global", "session", "local"}
# DuckDB reads a file for a table name that looks like a path ("replacement scan").
_FILE_LIKE = re.compile(r"[/\\]|\.(csv|tsv|txt|parquet|json|jsonl|ndjson|gz|zst|xlsx|db|duckdb)$",
                        re.IGNORECASE)


@dataclass(frozen=True)
class CheckedQuery:
    """A parsed query: its tree, its tokens, its text, and the functions the caller allows
    although they are not built-ins (a dbs.yaml allow list)."""

    root: exp.Expr
    tokens: list[Token]
    text: str
    allowed_functions: frozenset[str] = frozenset()


def executable_comments(query: CheckedQuery) -> None:
    comments = [c for token in query.tokens for c in (token.comments or [])]
    if any(c.lstrip().startswith(("!", "M!")) for c in comments) or _EXECUTABLE_COMMENT.search(
            _without_strings(query.text)):
        raise messages.reject(
            "Executable comments (/*! ... */) are not allowed: MySQL runs their text; write "
            "the SQL without them.")


def _without_strings(text: str) -> str:
    return re.sub(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"|`[^`]*`", "''", text)


def mysql_user_functions(query: CheckedQuery) -> None:
    """A name sqlglot does not know that is no MySQL built-in is a stored function."""
    for node in query.root.walk():
        if isinstance(node, exp.Anonymous) and node.name.lower() not in MYSQL_BUILTINS \
                and node.name.lower() not in query.allowed_functions:
            raise messages.reject(
                f"The function {node.name} is not a MySQL built-in; user-defined functions are "
                f"not allowed in read-only queries (their bodies cannot be checked).")


def file_path_tables(query: CheckedQuery) -> None:
    for node in query.root.walk():
        if isinstance(node, exp.Table) and (isinstance(node.this, exp.Literal)
                                            or _FILE_LIKE.search(node.name or "")):
            raise messages.reject("Reading a file by its path is not allowed; query the "
                                  "configured tables and views instead.")


def secret_settings(query: CheckedQuery) -> None:
    """``current_setting`` reads a setting named by a literal that holds no credential
    (``primary_conninfo`` holds a replication password, DuckDB's ``http_proxy_password``)."""
    for call in calls(query.tokens):
        if call.name != "current_setting":
            continue
        args = arguments(query.tokens, call)
        name = string_value(args[0], query.text) if args else None
        if name is None or SECRET_SETTING.search(name):
            raise messages.reject(
                "current_setting() may read only a built-in setting named by a string "
                "literal that holds no credential (no password, key, token, connection "
                "string or command; no custom app.name setting); remove it.")


def secret_variables(query: CheckedQuery) -> None:
    """MySQL's ``@@name`` reads a system variable (also ``@@GLOBAL.name``, `` @@`name` ``, a
    key cache's ``@@cache.name``): none whose name looks like a credential (``SECRET_VARIABLE``)
    unless it is one of the listed harmless ones (``HARMLESS_VARIABLES``); the tables behind
    SHOW VARIABLES are credential tables."""
    tokens = query.tokens
    for i, token in enumerate(tokens):
        if token.token_type != TokenType.SESSION_PARAMETER:
            continue
        parts, j = [], i + 1
        while j < len(tokens):  # name(.name)*: every part, whatever the tokenizer made of it
            parts.append(tokens[j].text)
            if j + 2 < len(tokens) and tokens[j + 1].token_type == TokenType.DOT:
                j += 2
            else:
                break
        for name in parts:
            if name.lower() in _SCOPES or name.lower() in HARMLESS_VARIABLES:
                continue
            if SECRET_VARIABLE.search(name):
                raise messages.reject(
                    f"The system variable {name} may hold a credential (a password, key, "
                    f"token or the SQL run at each connection) and may not be read; remove it "
                    f"from the query.")


def duckdb_functions(query: CheckedQuery) -> None:
    """Only the functions of DuckDB's reviewed list (``duckdb_functions.py``)."""
    allowlist.check(DUCKDB_FUNCTIONS, query.root, query.tokens, query.text,
                    query.allowed_functions)


def spark_functions(query: CheckedQuery) -> None:
    """Only the functions of Spark's reviewed list (``spark_functions.py``)."""
    allowlist.check(SPARK_FUNCTIONS, query.root, query.tokens, query.text,
                    query.allowed_functions)


def spark_relations(query: CheckedQuery) -> None:
    """Spark's rules: no path-based relation, script transform or qualified call (spark.py)."""
    spark_rules.check(query.root, query.tokens, query.text)
