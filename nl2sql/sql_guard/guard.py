"""validate_read_only: accept exactly one read-only query, or say what to write instead."""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from nl2sql.errors import QueryRejectedError
from nl2sql.sql_guard import checks, lexing, messages
from nl2sql.sql_guard import spark as spark_checks
from nl2sql.sql_guard.dialect_checks import check_dialect
from nl2sql.sql_guard.denylist import SQLITE_READ_PRAGMAS

# First words a query may start with; anything else is refused before parsing.
_QUERY_STARTS = {"SELECT", "WITH", "VALUES", "TABLE", "("}
_ANALYZE_WORDS = {"ANALYZE", "ANALYSE"}
_TRAILING = re.compile(r"[ \t\n\r\f\v;]+\Z")
# Dialects whose lexing and attribute notation (``t.f`` calling ``f(t)``) differ from Postgres'.
_NOT_POSTGRES_SYNTAX = {"sqlite", "spark", "databricks", "mysql"}
# Extra rules of one dialect, run after the shared ones (Spark: no path-based relations...).
_DIALECT_CHECKS = {"spark": spark_checks.check, "databricks": spark_checks.check}
# Dialects whose read-only PRAGMA statements (``PRAGMA table_info(t)``) are queries.
_PRAGMA_DIALECTS = {"sqlite"}
# Engines that pin standard_conforming_strings=on, so a backslash in '...' is a plain character
# for the server exactly as for sqlglot's tokenizer: 'C:\' is safe there.
_PINNED_STRING_LEXING = {"postgres"}
# How each engine reads comments and strings (see lexing.LexingRules); any other dialect gets
# the strictest rules, every reading at once.
_LEXING = {
    "sqlite": lexing.LexingRules(line_comment_ends=("\n",), nested_comments=(False,),
                                 line_comment_needs_space=(False,), string_escapes_pinned=True),
    "postgres": lexing.LexingRules(line_comment_ends=("\r\n",), nested_comments=(True,),
                                   line_comment_needs_space=(False,), string_escapes_pinned=True,
                                   colon_parameters=False),
    "mysql": lexing.LexingRules(line_comment_ends=("\n",), nested_comments=(False,),
                                line_comment_needs_space=(True,), hash_comments=True,
                                string_escapes_pinned=True, colon_parameters=False),
    "duckdb": lexing.LexingRules(line_comment_ends=("\r\n",),
                                 line_comment_needs_space=(False,), colon_parameters=False),
    "spark": lexing.LexingRules(line_comment_ends=("\r\n",), nested_comments=(True,),
                                line_comment_needs_space=(False,), string_escapes_pinned=True,
                                hints=True),
}
# Postgres syntax sqlglot does not parse and that calls nothing: dropped from the tokens the
# parser sees (the server still runs the caller's text). FOR READ ONLY is a no-op clause;
# DOCUMENT/CONTENT and STRIP/PRESERVE WHITESPACE are options of xmlparse/xmlserialize.
_XML_OPTION_FUNCTIONS = {"XMLPARSE", "XMLSERIALIZE"}
_XML_MODES = {"DOCUMENT", "CONTENT"}
_WHITESPACE_OPTIONS = {"STRIP", "PRESERVE"}


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


#: Verdicts kept (accepted queries and refusals), least recently used dropped first.
VERDICT_CACHE_SIZE = 1024
#: Longer texts are checked every time: a cache of small queries must not hold big ones.
VERDICT_CACHE_MAX_CHARS = 4096


def validate_read_only(sql: str, dialect: str) -> ValidatedQuery:
    """Check ``sql`` in a sqlglot dialect ("postgres", "sqlite", ...); raise QueryRejectedError.

    Verdicts of short texts are cached (bounded LRU), keyed by the exact text and dialect
    name: the guard is a pure function of the two (its deny lists are constants), and the
    accepted ``sql`` is the caller's text itself, so any normalization of the key could hand
    one text the verdict or the text of another. A repeated query skips the sqlglot parse
    (about a quarter of a point query's time). The cached ``expression`` is shared: copy it
    before changing it. A refusal is raised as a new error with the same message each time.
    """
    if len(sql) > VERDICT_CACHE_MAX_CHARS:
        return _validate(sql, dialect)
    verdict = _cached_verdict(sql, dialect)
    if isinstance(verdict, QueryRejectedError):
        raise type(verdict)(verdict.message, db_id=verdict.db_id, table=verdict.table,
                            sql=verdict.sql)
    return verdict


@functools.lru_cache(maxsize=VERDICT_CACHE_SIZE)
def _cached_verdict(sql: str, dialect: str) -> ValidatedQuery | QueryRejectedError:
    try:
        return _validate(sql, dialect)
    except QueryRejectedError as error:
        error.__traceback__ = None  # kept in the cache: hold no frames
        return error


def clear_verdict_cache() -> None:
    """Forget every cached verdict (for tests and after changing a deny list at run time)."""
    _cached_verdict.cache_clear()


def _validate(sql: str, dialect: str) -> ValidatedQuery:
    engine = Dialect.get_or_raise(dialect)  # ValueError for an unknown name: a developer error
    name = dialect.lower()
    if "\x00" in sql:
        raise messages.reject(messages.NUL_CHARACTER)
    text = _TRAILING.sub("", sql)
    try:
        tokens = _tokenize(text, engine)
        if tokens and tokens[0].text.upper() == "EXPLAIN":
            inner, end = _explain_target(text, tokens[0], engine, name)
            # sqlglot reads what follows EXPLAIN as one opaque token: lex it on its own
            tokens = [tokens[0], *_tokenize(_blank_before(text, tokens[0].end + 1), engine)]
            validated = ValidatedQuery(text[:end], inner, True, "explain")
        else:
            expression, end = _validate_query(text, tokens, engine, name)
            validated = ValidatedQuery(text[:end], expression, False,
                                       checks.statement_type(expression))
    except RecursionError:
        raise messages.reject(messages.TOO_DEEP) from None
    # Last, so the other checks keep their more precise messages: the engine must read the
    # accepted text as the tokens checked above.
    lexing.check(text, tokens, end, _LEXING.get(name, lexing.LexingRules()))
    return validated


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
        checks.check_postgres_lexing(tokens, rest,
                                     backslash_safe=dialect in _PINNED_STRING_LEXING)
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
    is_pragma = first.token_type == TokenType.PRAGMA and dialect in _PRAGMA_DIALECTS
    if first.text.upper() not in _QUERY_STARTS and not is_pragma:
        raise messages.reject(_first_word_message(first))
    end = len(text)
    semicolons = [i for i, t in enumerate(tokens) if t.token_type == TokenType.SEMICOLON]
    if semicolons:
        # Only semicolons (and the comments attached to them) may follow the first one.
        if any(t.token_type != TokenType.SEMICOLON for t in tokens[semicolons[0]:]):
            raise messages.reject(messages.MULTIPLE_STATEMENTS)
        end = len(text[: tokens[semicolons[0]].start].rstrip(" \t\n\r\f\v"))
        tokens = tokens[: semicolons[0]]
    if is_pragma:
        _check_read_pragma(tokens)
    postgres_syntax = dialect not in _NOT_POSTGRES_SYNTAX
    if postgres_syntax:
        checks.check_postgres_lexing(tokens, text,
                                     backslash_safe=dialect in _PINNED_STRING_LEXING)
    try:
        parsed = engine.parser().parse(_for_parser(tokens, dialect), text)
    except ParseError as error:
        incomplete = _incomplete_clause(engine, _for_parser(tokens, dialect), text)
        raise messages.reject(messages.parse_error(error, incomplete)) from None
    statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
    if len(statements) != 1:
        raise messages.reject(messages.MULTIPLE_STATEMENTS if statements else messages.EMPTY)
    root = statements[0]
    if is_pragma and isinstance(root, exp.Pragma):
        return root, end
    if not isinstance(root, checks.QUERY_TYPES):
        raise messages.reject(messages.not_a_query(checks.statement_name(root) or first.text))
    checks.check_tree(root, dialect, postgres_syntax)
    checks.check_tokens(tokens, dialect, postgres_syntax)
    if dialect in _DIALECT_CHECKS:
        _DIALECT_CHECKS[dialect](root, tokens)
    check_dialect(root, tokens, text, dialect)
    return root, end


def _first_word_message(first: Token) -> str:
    """A statement that is not a query, or a typo (``SELEC``): a syntax error with its place."""
    word = first.text
    known = unicodedata.normalize("NFKC", word).upper()
    if first.token_type != TokenType.VAR or known in messages.STATEMENT_WORDS:
        return messages.not_a_query(word)
    starts = sorted(w for w in _QUERY_STARTS if w.isalpha())
    suggestions = difflib.get_close_matches(known, [*starts, "EXPLAIN"], n=1)
    return messages.unknown_statement(word, first.line, first.col - len(word) + 1, suggestions)


def _check_read_pragma(tokens: list[Token]) -> None:
    """Allow ``PRAGMA [schema.]name`` or ``PRAGMA [schema.]name(arg)`` for a reading pragma."""
    rest = tokens[1:]
    if len(rest) >= 2 and rest[1].token_type == TokenType.DOT:
        rest = rest[2:]
    name = rest[0].text.lower() if rest else ""
    argument = rest[1:]
    call = (len(argument) == 3 and argument[0].token_type == TokenType.L_PAREN
            and argument[2].token_type == TokenType.R_PAREN
            and argument[1].token_type in (TokenType.STRING, TokenType.IDENTIFIER,
                                           TokenType.VAR, TokenType.NUMBER))
    if name not in SQLITE_READ_PRAGMAS or (argument and not call):
        raise messages.reject(messages.not_a_query("PRAGMA"))


def _for_parser(tokens: list[Token], dialect: str) -> list[Token]:
    """The tokens without the Postgres options sqlglot cannot parse (see _XML_OPTION_FUNCTIONS)."""
    if dialect in _NOT_POSTGRES_SYNTAX:
        return tokens

    def word(i: int) -> str:
        ok = 0 <= i < len(tokens) and tokens[i].token_type != TokenType.IDENTIFIER
        return tokens[i].text.upper() if ok else ""

    drop: set[int] = set()
    for i, token in enumerate(tokens):
        kind = token.token_type
        if kind == TokenType.FOR and word(i + 1) == "READ" and word(i + 2) == "ONLY":
            drop.update((i, i + 1, i + 2))
        elif (word(i) in _XML_OPTION_FUNCTIONS and word(i + 1) == "("
              and word(i + 2) in _XML_MODES):
            drop.add(i + 2)
        elif word(i) in _WHITESPACE_OPTIONS and word(i + 1) == "WHITESPACE" and word(i + 2) == ")":
            drop.update((i, i + 1))
    return [t for i, t in enumerate(tokens) if i not in drop] if drop else tokens


def _incomplete_clause(engine: Dialect, tokens: list[Token], text: str) -> str | None:
    """The first clause a lenient parse leaves without a required part (``WHERE`` in
    ``SELECT * FROM t WHERE``), read from the tree's own argument rules."""
    try:
        trees = engine.parser(error_level=ErrorLevel.IGNORE).parse(tokens, text)
    except Exception:  # noqa: BLE001 - only a better message is at stake
        return None
    for tree in trees:
        for node in tree.walk() if tree is not None else ():
            if any(required and node.args.get(arg) in (None, [])
                   for arg, required in node.arg_types.items()):
                return node.key
    return None
