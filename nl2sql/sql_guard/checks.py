"""Checks on a parsed query: its syntax tree first, then its tokens as a backstop.

The tree walk gives precise messages. The token scan catches the same things again in case a
sqlglot dialect parses a clause loosely and drops it from the tree (SQLite's parser, for
example, silently drops ``FOR UPDATE``).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from nl2sql.sql_guard import messages
from nl2sql.sql_guard.denylist import is_denied_function

QUERY_TYPES = (exp.Select, exp.SetOperation, exp.Values, exp.Subquery)

_WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge)
_NOT_QUERIES = (exp.Command, exp.Create, exp.Drop, exp.Alter, exp.TruncateTable, exp.Copy,
                exp.Set, exp.Pragma, exp.Attach, exp.Detach, exp.Transaction, exp.Commit,
                exp.Rollback, exp.Grant, exp.Revoke, exp.Analyze, exp.Comment, exp.Use)
_STATEMENT_NAMES = {exp.TruncateTable: "TRUNCATE", exp.Transaction: "BEGIN"}

_STRING_TOKENS = {TokenType[name] for name in TokenType.__members__ if name.endswith("_STRING")}
_STRING_TOKENS.add(TokenType.STRING)
_WRITE_TOKENS = {TokenType.INSERT, TokenType.UPDATE, TokenType.DELETE, TokenType.MERGE}
_LOCK_WORDS = {"UPDATE", "SHARE", "NO", "KEY"}
_COMMAND_TOKENS = {TokenType.COMMAND, TokenType.EXECUTE, TokenType.FETCH, TokenType.SHOW,
                   TokenType.RENAME}


def statement_name(node: exp.Expr) -> str | None:
    """The keyword a write or non-query statement node starts with, else None."""
    if isinstance(node, exp.Command):
        return str(node.this)
    if isinstance(node, _WRITES + _NOT_QUERIES):
        return _STATEMENT_NAMES.get(type(node), node.key.upper())
    return None


def function_names(node: exp.Func) -> list[str]:
    """Every name a function node may have been written as."""
    if isinstance(node, exp.Anonymous):
        return [node.name]
    return [node.sql_name(), *type(node).sql_names()]


def check_tree(root: exp.Expr, dialect: str, postgres_syntax: bool) -> None:
    """Raise QueryRejectedError for the first forbidden node anywhere in the tree."""
    for node in root.walk():
        if isinstance(node, _WRITES):
            raise messages.reject(messages.write_inside(statement_name(node) or node.key))
        if isinstance(node, _NOT_QUERIES):
            raise messages.reject(messages.not_a_query(statement_name(node) or node.key))
        if isinstance(node, exp.Into):
            raise messages.reject(messages.SELECT_INTO)
        if isinstance(node, exp.Lock):
            raise messages.reject(messages.LOCKING)
        if isinstance(node, exp.Func):
            for name in function_names(node):
                if is_denied_function(name, dialect):
                    raise messages.reject(messages.denied_function(name.lower()))
        if not postgres_syntax:
            continue
        # Postgres attribute notation: (x).f and t.f call f(x) / f(t).
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
            if is_denied_function(node.expression.name, dialect):
                raise messages.reject(messages.denied_function(node.expression.name.lower()))
        if isinstance(node, exp.Column) and node.table and is_denied_function(node.name, dialect):
            raise messages.reject(messages.denied_function(node.name.lower()))


def check_tokens(tokens: list[Token], dialect: str, postgres_syntax: bool) -> None:
    """The same rules on the raw tokens, so nothing the parser dropped can slip through."""
    for i, token in enumerate(tokens):
        kind = token.token_type
        if kind in _STRING_TOKENS:
            continue
        previous = tokens[i - 1] if i else None
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if kind in _WRITE_TOKENS:
            raise messages.reject(messages.write_inside(token.text))
        if kind == TokenType.INTO:
            raise messages.reject(messages.SELECT_INTO)
        if kind == TokenType.FOR and following and following.text.upper() in _LOCK_WORDS:
            raise messages.reject(messages.LOCKING)
        if kind in _COMMAND_TOKENS and previous and previous.token_type == TokenType.BEGIN:
            raise messages.reject(messages.not_a_query(token.text))
        if not is_denied_function(token.text, dialect):
            continue
        is_call = following is not None and following.token_type == TokenType.L_PAREN
        is_attribute = (postgres_syntax and previous is not None
                        and previous.token_type == TokenType.DOT)
        if is_call or is_attribute:
            raise messages.reject(messages.denied_function(token.text.lower()))


def check_postgres_lexing(tokens: list[Token], text: str) -> None:
    """Refuse spellings Postgres may read differently from sqlglot.

    ``U&"pg_\\0073leep"`` is a Unicode-escaped name sqlglot does not decode, and a backslash
    before a quote in a plain string ends the string early or late depending on the server's
    ``standard_conforming_strings``.
    """
    for i, token in enumerate(tokens[:-2]):
        amp, name = tokens[i + 1], tokens[i + 2]
        if (token.text.upper() == "U" and amp.token_type == TokenType.AMP
                and name.token_type == TokenType.IDENTIFIER
                and token.end + 1 == amp.start and amp.end + 1 == name.start):
            raise messages.reject(messages.UNICODE_NAME)
    for token in tokens:
        if (token.token_type in (TokenType.STRING, TokenType.NATIONAL_STRING)
                and "\\'" in text[token.start: token.end + 1]):
            raise messages.reject(messages.BACKSLASH_QUOTE)


def statement_type(root: exp.Expr) -> str:
    """``select``, ``union``, ``intersect``, ``except`` or ``values`` (parentheses removed)."""
    node = root.unnest() if isinstance(root, exp.Subquery) else root
    return node.key.lower()
