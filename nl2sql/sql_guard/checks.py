"""Checks on a parsed query: its syntax tree first, then its tokens as a backstop.

The tree walk gives precise messages. The token scan catches the same things again in case a
sqlglot dialect parses a clause loosely and drops it from the tree (SQLite's parser, for
example, silently drops ``FOR UPDATE``).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from nl2sql.sql_guard import messages
from nl2sql.sql_guard.profiles import GuardProfile

QUERY_TYPES = (exp.Select, exp.SetOperation, exp.Values, exp.Subquery)

_WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge)
_NOT_QUERIES = (exp.Command, exp.Create, exp.Drop, exp.Alter, exp.TruncateTable, exp.Copy,
                exp.Set, exp.Pragma, exp.Attach, exp.Detach, exp.Transaction, exp.Commit,
                exp.Rollback, exp.Grant, exp.Revoke, exp.Analyze, exp.Comment, exp.Use)
_STATEMENT_NAMES = {exp.TruncateTable: "TRUNCATE", exp.Transaction: "BEGIN"}

_STRING_TOKENS = {TokenType[name] for name in TokenType.__members__ if name.endswith("_STRING")}
_STRING_TOKENS.add(TokenType.STRING)
_WRITE_TOKENS = {TokenType.INSERT, TokenType.UPDATE, TokenType.DELETE, TokenType.MERGE}
# After these a write keyword is a name (t.update, 1 AS insert, SELECT update, a, delete,
# WHERE insert IS NULL...): no statement begins there in any supported grammar. Anywhere else
# (after "(", ")" or a name, where a CTE body, the main statement after a WITH list or the end
# of a CTE's SEARCH/CYCLE clause puts one) it may start a statement.
_NAME_CONTEXT = {TokenType.DOT, TokenType.ALIAS, TokenType.COMMA, TokenType.SELECT,
                 TokenType.DISTINCT, TokenType.WHERE, TokenType.AND, TokenType.OR,
                 TokenType.NOT, TokenType.ON, TokenType.HAVING, TokenType.CASE, TokenType.WHEN,
                 TokenType.THEN, TokenType.ELSE, TokenType.IS, TokenType.EQ, TokenType.NEQ,
                 TokenType.LT, TokenType.LTE, TokenType.GT, TokenType.GTE, TokenType.PLUS,
                 TokenType.DASH, TokenType.STAR, TokenType.SLASH, TokenType.MOD,
                 TokenType.DPIPE}
# Tokens that cannot follow a write keyword that starts a statement: the word was a name.
_AFTER_A_NAME = {TokenType.COMMA, TokenType.R_PAREN, TokenType.DOT, TokenType.DCOLON,
                 TokenType.EQ, TokenType.NEQ, TokenType.LT, TokenType.LTE, TokenType.GT,
                 TokenType.GTE, TokenType.PLUS, TokenType.DASH, TokenType.STAR,
                 TokenType.SLASH, TokenType.MOD, TokenType.DPIPE, TokenType.ARROW,
                 TokenType.DARROW, TokenType.L_BRACKET, TokenType.ALIAS, TokenType.SEMICOLON}
# ... and per keyword: UPDATE/INSERT/MERGE are never followed by FROM; INSERT( is MySQL's
# string function.
_AFTER_A_NAME_FOR = {TokenType.UPDATE: {TokenType.FROM}, TokenType.MERGE: {TokenType.FROM},
                     TokenType.INSERT: {TokenType.FROM, TokenType.L_PAREN},
                     TokenType.DELETE: set()}
# Locking clauses, word by word (FOR READ ONLY is Postgres' no-op spelling, not a lock).
_LOCKING_CLAUSES = (("UPDATE",), ("SHARE",), ("NO", "KEY", "UPDATE"), ("KEY", "SHARE"))
_QUERY_WORDS = {TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.TABLE,
                TokenType.L_PAREN}
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


def check_tree(root: exp.Expr, profile: type[GuardProfile]) -> None:
    """Raise QueryRejectedError for the first forbidden node anywhere in the tree."""
    is_denied_function = profile.is_denied_function

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
                if is_denied_function(name):
                    raise messages.reject(messages.denied_function(
                        name.lower(), profile.denied_effect(name)))
        if not profile.attribute_calls:
            continue
        # Postgres attribute notation: (x).f and t.f call f(x) / f(t).
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
            if is_denied_function(node.expression.name):
                raise messages.reject(messages.denied_function(
                    node.expression.name.lower(), profile.denied_effect(node.expression.name)))
        if isinstance(node, exp.Column) and node.table and is_denied_function(node.name):
            raise messages.reject(messages.denied_function(
                node.name.lower(), profile.denied_effect(node.name)))


def _starts_write(tokens: list[Token], i: int) -> bool:
    """Whether the write keyword at ``i`` can begin a statement, judged by its neighbours."""
    kind = tokens[i].token_type
    previous = tokens[i - 1] if i else None
    following = tokens[i + 1] if i + 1 < len(tokens) else None
    if previous is not None and previous.token_type in _NAME_CONTEXT:
        return False
    if following is None:
        return False
    return following.token_type not in _AFTER_A_NAME | _AFTER_A_NAME_FOR[kind]


def _words_at(tokens: list[Token], start: int, words: tuple[str, ...]) -> bool:
    """Whether unquoted keywords ``words`` follow from ``start`` (a quoted "update" is a name)."""
    chunk = tokens[start: start + len(words)]
    return len(chunk) == len(words) and all(
        t.token_type != TokenType.IDENTIFIER and t.text.upper() == w
        for t, w in zip(chunk, words))


def check_tokens(tokens: list[Token], profile: type[GuardProfile]) -> None:
    """The same rules on the raw tokens, so nothing the parser dropped can slip through.

    Words are judged in context, not matched: a write keyword counts where a statement can
    begin (see ``_starts_write``), and ``FOR UPDATE``/``SHARE``/... counts as a locking clause
    only in a query, not inside a function's parentheses (``substring(x FROM 1 FOR n)``).
    """
    in_query = [True]  # per open parenthesis: does a query start right inside it?
    for i, token in enumerate(tokens):
        kind = token.token_type
        if kind in _STRING_TOKENS:
            continue
        previous = tokens[i - 1] if i else None
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if kind == TokenType.L_PAREN:
            in_query.append(following is not None and following.token_type in _QUERY_WORDS)
        elif kind == TokenType.R_PAREN and len(in_query) > 1:
            in_query.pop()
        if kind in _WRITE_TOKENS and _starts_write(tokens, i):
            raise messages.reject(messages.write_inside(token.text))
        if kind == TokenType.INTO:
            raise messages.reject(messages.SELECT_INTO)
        if kind == TokenType.FOR and in_query[-1] and any(
                _words_at(tokens, i + 1, clause) for clause in _LOCKING_CLAUSES):
            raise messages.reject(messages.LOCKING)
        if kind in _COMMAND_TOKENS and previous and previous.token_type == TokenType.BEGIN:
            raise messages.reject(messages.not_a_query(token.text))
        if not profile.is_denied_function(token.text):
            continue
        is_call = following is not None and following.token_type == TokenType.L_PAREN
        is_attribute = (profile.attribute_calls and previous is not None
                        and previous.token_type == TokenType.DOT)
        if is_call or is_attribute:
            raise messages.reject(messages.denied_function(
                token.text.lower(), profile.denied_effect(token.text)))


def statement_type(root: exp.Expr) -> str:
    """``select``, ``union``, ``intersect``, ``except`` or ``values`` (parentheses removed)."""
    node = root.unnest() if isinstance(root, exp.Subquery) else root
    return node.key.lower()
