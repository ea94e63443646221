"""The engine must read the text exactly as the guard did: refuse what it could read otherwise.

The guard checks sqlglot's tokens but the database runs the caller's text, so every place where
the engine's lexer could split the text differently is a way around every other check (Spark
continues a ``--`` comment across a backslash-newline, sqlglot does not: the rest of the line
was a string to the guard and a ``TRANSFORM ... USING`` shell command to Spark). Rather than
list tricks, this reads the text between sqlglot's tokens with the *engine's* comment rules
(``LexingRules``, declared per backend) and accepts it only when every reading the engine may
apply sees nothing but whitespace and comments there, and it refuses the token forms whose
boundaries depend on the engine (a backslash before a quote in a string when the engine's
escape mode is not pinned, a prefix sqlglot does not know glued to a quote, parameters and
variables, a backslash outside a string, non-ASCII whitespace). The defaults are the strictest:
a backend that declares nothing gets every reading checked at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import product

from sqlglot.tokens import Token, TokenType

from nl2sql.sql_guard import messages

#: ASCII whitespace (an engine that does not take \f or \v for a blank fails on it); anything
#: else between tokens is refused.
_BLANKS = frozenset(" \t\n\r\f\v")
_ODD_BLANK = re.compile(r"[^\S \t\n\r\f\v]")  # whitespace that is not one of those
_STRINGS = frozenset({
    TokenType.STRING, TokenType.NATIONAL_STRING, TokenType.BYTE_STRING, TokenType.RAW_STRING,
    TokenType.HEX_STRING, TokenType.BIT_STRING, TokenType.HEREDOC_STRING,
    TokenType.UNICODE_STRING})
#: Strings whose backslashes follow the engine's escape mode (the others have fixed rules).
_MODE_STRINGS = frozenset({TokenType.STRING, TokenType.NATIONAL_STRING})
_QUOTED = _STRINGS | {TokenType.IDENTIFIER}
_BACKSLASH_QUOTE = re.compile(r"\\['\"`]")
_WORD_END = re.compile(r"[\w$]\Z")
#: What may follow a parameter mark to name it: ``$1``, ``@x``, ``@@version``, ``@`x```.
_NAMED = _QUOTED | {TokenType.VAR, TokenType.NUMBER, TokenType.PARAMETER}
#: First characters of a variable or parameter some engine reads as one token (``$a``; SQLite
#: also reads ``$a('...')`` with any quotes up to the ``)`` as one).
_VARIABLE_MARKS = ("$", "@", ":", "#")
_VALUES = {TokenType.VAR, TokenType.NUMBER, TokenType.IDENTIFIER, TokenType.R_PAREN,
           TokenType.R_BRACKET, TokenType.STRING}


@dataclass(frozen=True)
class LexingRules:
    """How a backend's engine reads comments and strings, where engines differ.

    Each tuple lists every reading the engine may apply (a server setting the backend does not
    pin, versions that differ); the text is accepted only when all of them agree with sqlglot.
    """

    #: Characters that end a ``--`` comment ("\\n": only a newline, as SQLite; "\\r\\n": either).
    line_comment_ends: tuple[str, ...] = ("\n", "\r\n")
    #: Whether ``/* /* */ */`` nests (Postgres, Spark) or ends at the first ``*/`` (MySQL).
    nested_comments: tuple[bool, ...] = (False, True)
    #: ``--`` starts a comment only before whitespace (MySQL: ``1--1`` is arithmetic).
    line_comment_needs_space: tuple[bool, ...] = (False, True)
    #: ``#`` starts a line comment (MySQL).
    hash_comments: bool = False
    #: The engine's backslash handling in '...' strings is pinned (by the engine or by the
    #: connection's settings) to the one sqlglot's dialect assumes.
    string_escapes_pinned: bool = False
    #: ``/*+ ... */`` optimizer hints are allowed (their text is parsed and checked).
    hints: bool = False
    #: ``:name`` outside a value (``WHERE a = :x``) is a parameter to the engine (SQLite).
    colon_parameters: bool = True


def check(text: str, tokens: list[Token], end: int, rules: LexingRules) -> None:
    """Raise QueryRejectedError unless ``text[:end]`` reads as ``tokens`` to the engine."""
    position = 0
    previous: Token | None = None
    odd_blanks = _ODD_BLANK.search(text) is not None
    for index, token in enumerate(tokens):
        if token.start >= end:
            break
        gap = text[position:token.start]
        _check_gap(gap, rules)
        _check_token(text, token, rules, odd_blanks)
        if not _span_is_token(text, tokens, index):  # positions off: nothing above would hold
            raise messages.reject(messages.UNCHECKABLE)
        if not gap and previous is not None:
            _check_adjacent(text, tokens, index, rules)
        position, previous = token.end + 1, token
    _check_gap(text[position:end], rules, last=True)


def _span_is_token(text: str, tokens: list[Token], index: int) -> bool:
    """The text at the token's position spells the token (words compared without case and
    spacing; quoted tokens hold what their quotes do). Several tokens may share one span
    (Spark's ``1500L`` is read as ``1500::BIGINT``)."""
    token = tokens[index]
    if token.token_type in _QUOTED or token.token_type == TokenType.HINT:
        return True
    span = text[token.start:token.end + 1]
    if span == token.text or " ".join(span.split()).upper() == " ".join(token.text.split()).upper():
        return True
    return any((other.start, other.end) == (token.start, token.end)
               for other in tokens[max(index - 2, 0):index + 3] if other is not token)


def _check_gap(gap: str, rules: LexingRules, *, last: bool = False) -> None:
    """The text between two tokens: whitespace and comments under every reading, or refused.
    ``last``: nothing follows the gap (a line comment may end with the text)."""
    if not gap or _BLANKS.issuperset(gap):
        return
    for ends, nested, needs_space in product(rules.line_comment_ends, rules.nested_comments,
                                             rules.line_comment_needs_space):
        problem = _read_gap(gap, ends, nested, needs_space, rules.hash_comments, last)
        if problem:
            raise messages.reject(problem)


def _read_gap(gap: str, ends: str, nested: bool, needs_space: bool, hash_comments: bool,
              last: bool) -> str | None:
    """Read ``gap`` as the engine would; the refusal message unless it is all blank."""
    i = 0
    while i < len(gap):
        char = gap[i]
        if char in _BLANKS:
            i += 1
        elif gap.startswith("--", i) or (hash_comments and char == "#"):
            start = i + (1 if char == "#" else 2)
            if char == "-" and needs_space and start < len(gap) and gap[start] not in _BLANKS:
                return messages.AMBIGUOUS_COMMENT
            stops = [gap.find(c, start) for c in ends if c in gap[start:]]
            if not stops and not last:  # the engine's comment runs on into the next token
                return messages.AMBIGUOUS_COMMENT
            i = min(stops, default=len(gap))
            if "\\" in gap[start:i]:  # Spark continues a -- comment after a backslash
                return messages.AMBIGUOUS_COMMENT
        elif gap.startswith("/*", i):
            if gap.startswith(("/*!", "/*M!", "/*+"), i):
                return messages.EXECUTABLE_COMMENT
            stop = _block_comment_end(gap, i, nested)
            if stop < 0 or "\\" in gap[i:stop]:
                return messages.AMBIGUOUS_COMMENT
            i = stop
        else:
            return messages.AMBIGUOUS_WHITESPACE if char.isspace() else messages.AMBIGUOUS_COMMENT
    return None


def _block_comment_end(gap: str, start: int, nested: bool) -> int:
    """Index after the ``*/`` closing the comment at ``start`` (-1: not closed in ``gap``)."""
    depth, i = 0, start
    while i < len(gap) - 1:
        pair = gap[i:i + 2]
        if pair == "/*" and (nested or depth == 0):
            depth, i = depth + 1, i + 2
        elif pair == "*/":
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return -1


def _check_token(text: str, token: Token, rules: LexingRules, odd_blanks: bool) -> None:
    kind = token.token_type
    span = text[token.start:token.end + 1]
    if kind in _QUOTED:
        if kind in _MODE_STRINGS and not rules.string_escapes_pinned \
                and _BACKSLASH_QUOTE.search(span):
            raise messages.reject(messages.BACKSLASH_QUOTE)
        return
    if kind == TokenType.HINT:
        body = span[3:-2]
        # Spark lexes a hint's body as SQL (a quoted '*/' does not end it), sqlglot as a comment
        if not rules.hints or any(mark in body for mark in ("--", "/*", "#", "\\", "'", '"', "`")):
            raise messages.reject(messages.HINT)
        return
    if kind == TokenType.BACKSLASH:
        raise messages.reject(messages.BACKSLASH_OUTSIDE_STRING)
    if kind == TokenType.VAR and span.startswith(_VARIABLE_MARKS):
        raise messages.reject(messages.PARAMETER)
    if odd_blanks and _ODD_BLANK.search(span):
        raise messages.reject(messages.AMBIGUOUS_WHITESPACE)


def _check_adjacent(text: str, tokens: list[Token], index: int, rules: LexingRules) -> None:
    """Token ``index`` touches the one before it: a quote glued to a name may be a string
    prefix the engine knows and sqlglot does not (E'', U&'', b'', a$tag$...); a keyword
    (DATE'2024-01-01') or a charset introducer (_utf8mb4'x') is read the same by both."""
    token, previous = tokens[index], tokens[index - 1]
    if token.token_type in _QUOTED and previous.token_type in (TokenType.VAR, TokenType.NUMBER) \
            and _WORD_END.search(text[previous.start:previous.end + 1]):
        raise messages.reject(messages.STRING_PREFIX)
    if token.token_type in _QUOTED and previous.token_type == TokenType.AMP and index >= 2 \
            and tokens[index - 2].end + 1 == previous.start \
            and text[tokens[index - 2].start:tokens[index - 2].end + 1] in ("U", "u"):
        raise messages.reject(messages.UNICODE_NAME)
    if previous.token_type == TokenType.PARAMETER and token.token_type in _NAMED:
        raise messages.reject(messages.PARAMETER)
    if rules.colon_parameters and previous.token_type == TokenType.COLON \
            and token.token_type in _NAMED and not _follows_value(text, tokens, index - 1):
        raise messages.reject(messages.PARAMETER)


def _follows_value(text: str, tokens: list[Token], index: int) -> bool:
    """Whether token ``index`` is glued to a value before it (``a[1:n]``, ``col:key``)."""
    return index > 0 and tokens[index - 1].end + 1 == tokens[index].start \
        and tokens[index - 1].token_type in _VALUES
