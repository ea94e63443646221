"""Function calls as a query's text writes them: each name before ``(`` and its arguments.

The engine looks a function up by the name written before ``(`` (in any case, quoted or not,
qualified or not), so the checks that judge calls by name read them from the guard's own
tokens, not from sqlglot's tree, which renames the functions it knows (``date_trunc`` becomes
``TIMESTAMP_TRUNC``) and keeps no trace of how a call was written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlglot.tokens import Token, TokenType

#: A keyword or name token that can name a function when ``(`` follows (``LEFT(``, ``DATE(``).
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


@dataclass(frozen=True)
class Call:
    """A name written before ``(``: ``tokens[index]`` is the name, ``index + 1`` the ``(``."""

    index: int
    name: str  # lower case, quotes removed
    qualifier: str | None  # the name before a ``.`` (lower case), else None
    quoted: bool  # written as a quoted name ("query", `reflect`)


def calls(tokens: Sequence[Token]) -> Iterator[Call]:
    """Every name (or keyword) followed by ``(`` in ``tokens``."""
    for i in range(len(tokens) - 1):
        token = tokens[i]
        if tokens[i + 1].token_type != TokenType.L_PAREN:
            continue
        quoted = token.token_type == TokenType.IDENTIFIER
        if not (quoted or token.token_type == TokenType.VAR or _WORD.fullmatch(token.text)):
            continue
        qualifier = tokens[i - 2].text.lower() if i >= 2 \
            and tokens[i - 1].token_type == TokenType.DOT else None
        yield Call(i, token.text.lower(), qualifier, quoted)


def arguments(tokens: Sequence[Token], call: Call) -> list[list[Token]]:
    """The tokens of each argument of ``call``, split at its own commas (nested parentheses,
    brackets and braces kept whole); ``[]`` for ``f()``."""
    depth, current, found = 0, [], []
    for token in tokens[call.index + 1:]:
        kind = token.token_type
        if kind in (TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE):
            depth += 1
            if depth == 1:
                continue
        elif kind in (TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE):
            depth -= 1
            if depth == 0:
                break
        elif kind == TokenType.COMMA and depth == 1:
            found.append(current)
            current = []
            continue
        current.append(token)
    if current or found:
        found.append(current)
    return found


def string_value(argument: Sequence[Token], text: str) -> str | None:
    """The value of an argument that is one plain string literal (no escapes, no prefix, no
    second literal the engine would join to it), else None."""
    if len(argument) != 1 or argument[0].token_type != TokenType.STRING:
        return None
    token = argument[0]
    raw = text[token.start:token.end + 1]
    if "\\" in raw or not raw.startswith("'"):
        return None
    return token.text
