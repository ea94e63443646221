"""validate_read_only: accept exactly one read-only query, or say what to write instead."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from nl2sql.sql_guard import checks, messages

# First words a query may start with; anything else is refused before parsing.
_QUERY_STARTS = {"SELECT", "WITH", "VALUES", "TABLE", "("}
_ANALYZE_WORDS = {"ANALYZE", "ANALYSE"}
_TRAILING = re.compile(r"[ \t\n\r\f\v;]+\Z")
# Dialects whose lexing and attribute notation (``t.f`` calling ``f(t)``) differ from Postgres'.
_NOT_POSTGRES_SYNTAX = {"sqlite"}


@dataclass(frozen=True)
class ValidatedQuery:
    """A query the guard accepted.

    ``sql`` is the caller's text minus trailing semicolons, whitespace and comments after the
    last semicolon: never re-rendered, so the database runs exactly what was checked.
    ``expression`` is the query's sqlglot tree (for EXPLAIN: the explained query).
    """

    sql: str
    expression: exp.Expr
    is_explain: bool
    statement_type: str


def validate_read_only(sql: str, dialect: str) -> ValidatedQuery:
    """Check ``sql`` in a sqlglot dialect ("postgres", "sqlite", ...); raise QueryRejectedError."""
    engine = Dialect.get_or_raise(dialect)  # ValueError for an unknown name: a developer error
    name = dialect.lower()
    if "\x00" in sql:
        raise messages.reject(messages.NUL_CHARACTER)
    text = _TRAILING.sub("", sql)
    try:
        tokens = _tokenize(text, engine)
        if tokens and tokens[0].text.upper() == "EXPLAIN":
            inner, end = _explain_target(text, tokens[0], engine, name)
            return ValidatedQuery(text[:end], inner, True, "explain")
        expression, end = _validate_query(text, tokens, engine, name)
    except RecursionError:
        raise messages.reject(messages.TOO_DEEP) from None
    return ValidatedQuery(text[:end], expression, False, checks.statement_type(expression))


def _tokenize(text: str, engine: Dialect) -> list[Token]:
    tokenizer = engine.tokenizer()
    try:
        return tokenizer.tokenize(text)
    except TokenError:
        core = getattr(tokenizer, "_core", None)
        line, col = getattr(core, "_line", None), getattr(core, "_col", None)
        raise messages.reject(messages.token_error(line, col)) from None


def _blank_before(text: str, offset: int) -> str:
    """``text`` with everything before ``offset`` blanked, keeping line and column numbers."""
    return re.sub(r"[^\n]", " ", text[:offset]) + text[offset:]


def _explain_target(text: str, explain: Token, engine: Dialect,
                    dialect: str) -> tuple[exp.Expr, int]:
    """Skip EXPLAIN's options (refusing ANALYZE) and validate the statement it explains."""
    rest = _blank_before(text, explain.end + 1)
    tokens = _tokenize(rest, engine)
    if dialect not in _NOT_POSTGRES_SYNTAX:
        checks.check_postgres_lexing(tokens, rest)
    i = 0
    while i < len(tokens):
        word = tokens[i].text.upper()
        following = tokens[i + 1].text.upper() if i + 1 < len(tokens) else ""
        if word in _ANALYZE_WORDS:
            raise messages.reject(messages.EXPLAIN_ANALYZE)
        if word == "VERBOSE":
            i += 1
        elif word == "QUERY" and following == "PLAN":  # SQLite
            i += 2
        elif word == "(" and following and following not in _QUERY_STARTS:  # Postgres options
            i = _skip_options(tokens, i)
        else:
            break
    if i == len(tokens):
        raise messages.reject(messages.EXPLAIN_EMPTY)
    target = _blank_before(text, tokens[i].start)
    target_tokens = _tokenize(target, engine)
    if target_tokens[0].text.upper() == "EXPLAIN":
        raise messages.reject(messages.EXPLAIN_TWICE)
    return _validate_query(target, target_tokens, engine, dialect)


def _skip_options(tokens: list[Token], open_index: int) -> int:
    """Index after the ``)`` closing Postgres' ``EXPLAIN (option, ...)`` list."""
    depth = 0
    for j in range(open_index, len(tokens)):
        word = tokens[j].text.upper()
        if word in _ANALYZE_WORDS:
            raise messages.reject(messages.EXPLAIN_ANALYZE)
        depth += {"(": 1, ")": -1}.get(word, 0)
        if depth == 0:
            return j + 1
    return len(tokens)


def _validate_query(text: str, tokens: list[Token], engine: Dialect,
                    dialect: str) -> tuple[exp.Expr, int]:
    """Validate one query; return its tree and where its text ends (before a trailing ``;``)."""
    if not tokens:
        raise messages.reject(messages.EMPTY)
    first = tokens[0]
    if first.token_type == TokenType.SEMICOLON:
        raise messages.reject(messages.LEADING_SEMICOLON)
    if first.text.upper() not in _QUERY_STARTS:
        raise messages.reject(messages.not_a_query(first.text))
    end = len(text)
    semicolons = [i for i, t in enumerate(tokens) if t.token_type == TokenType.SEMICOLON]
    if semicolons:
        # Only semicolons (and the comments attached to them) may follow the first one.
        if any(t.token_type != TokenType.SEMICOLON for t in tokens[semicolons[0]:]):
            raise messages.reject(messages.MULTIPLE_STATEMENTS)
        end = len(text[: tokens[semicolons[0]].start].rstrip(" \t\n\r\f\v"))
        tokens = tokens[: semicolons[0]]
    postgres_syntax = dialect not in _NOT_POSTGRES_SYNTAX
    if postgres_syntax:
        checks.check_postgres_lexing(tokens, text)
    try:
        parsed = engine.parser().parse(tokens, text)
    except ParseError as error:
        raise messages.reject(messages.parse_error(error)) from None
    statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
    if len(statements) != 1:
        raise messages.reject(messages.MULTIPLE_STATEMENTS if statements else messages.EMPTY)
    root = statements[0]
    if not isinstance(root, checks.QUERY_TYPES):
        raise messages.reject(messages.not_a_query(checks.statement_name(root) or first.text))
    checks.check_tree(root, dialect, postgres_syntax)
    checks.check_tokens(tokens, dialect, postgres_syntax)
    return root, end
