"""validate_read_only: accept exactly one read-only query, or say what to write instead."""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from nl2sql.errors import QueryRejectedError, lone_surrogate
from nl2sql.sql_guard import checks, lexing, messages
from nl2sql.sql_guard.dialect_checks import CheckedQuery
from nl2sql.sql_guard.profiles import GuardProfile, profile_for
from nl2sql.sql_guard.user_functions import written_calls

# First words a query may start with; anything else is refused before parsing.
_QUERY_STARTS = {"SELECT", "WITH", "VALUES", "TABLE", "("}
_ANALYZE_WORDS = {"ANALYZE", "ANALYSE"}
_TRAILING = re.compile(r"[ \t\n\r\f\v;]+\Z")
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
    #: ``(qualifier or None, name)`` of each name written before ``(`` (``written_calls``).
    written_calls: frozenset[tuple[str | None, str]] = frozenset()


#: Verdicts kept (accepted queries and refusals), least recently used dropped first.
VERDICT_CACHE_SIZE = 1024
#: Longer texts are checked every time: a cache of small queries must not hold big ones.
VERDICT_CACHE_MAX_CHARS = 4096
_NONE: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Rules:
    """Everything one check reads besides the text: the sqlglot dialect, the backend's profile,
    and the functions dbs.yaml allows."""

    engine: Dialect
    profile: type[GuardProfile]
    allowed: frozenset[str]


def validate_read_only(sql: str, dialect: str, *,
                       allowed_functions: Iterable[str] = ()) -> ValidatedQuery:
    """Check ``sql`` in a sqlglot dialect ("postgres", "sqlite", ...); raise QueryRejectedError.

    The dialect's rules come from the profile of the backend that reads it (``profiles.py``).
    ``allowed_functions``: the database's ``allowed_functions`` from dbs.yaml (``name`` or
    ``schema.name``), exempt from the guard's refusal of functions that are not built-ins
    (MySQL), never from the deny lists; the catalogue check of user-defined functions
    (``user_functions.py``) runs after the guard.

    Verdicts of short texts are cached (bounded LRU), keyed by the exact text and dialect
    name: the guard is a pure function of the two (its deny lists are constants), and the
    accepted ``sql`` is the caller's text itself, so any normalization of the key could hand
    one text the verdict or the text of another. A repeated query skips the sqlglot parse
    (about a quarter of a point query's time). The cached ``expression`` is shared: copy it
    before changing it. A refusal is raised as a new error with the same message each time.
    """
    allowed = _names(allowed_functions)
    if len(sql) > VERDICT_CACHE_MAX_CHARS:
        return _validate(sql, dialect, allowed)
    verdict = _cached_verdict(sql, dialect, allowed)
    if isinstance(verdict, QueryRejectedError):
        raise type(verdict)(verdict.message, db_id=verdict.db_id, table=verdict.table,
                            sql=verdict.sql)
    return verdict


@functools.lru_cache(maxsize=VERDICT_CACHE_SIZE)
def _cached_verdict(sql: str, dialect: str,
                    allowed: frozenset[str] = _NONE) -> ValidatedQuery | QueryRejectedError:
    try:
        return _validate(sql, dialect, allowed)
    except QueryRejectedError as error:
        error.__traceback__ = None  # kept in the cache: hold no frames
        return error


def clear_verdict_cache() -> None:
    """Forget every cached verdict (for tests and after changing a deny list at run time)."""
    _cached_verdict.cache_clear()


def _names(functions: Iterable[str]) -> frozenset[str]:
    """Lower-case names, each ``schema.name`` also as its bare ``name``."""
    names = {name.lower() for name in functions}
    return frozenset(names | {name.rsplit(".", 1)[-1] for name in names})


def _validate(sql: str, dialect: str, allowed: frozenset[str] = _NONE) -> ValidatedQuery:
    engine = Dialect.get_or_raise(dialect)  # ValueError for an unknown name: a developer error
    rules = _Rules(engine, profile_for(dialect), allowed)
    if "\x00" in sql:
        raise messages.reject(messages.NUL_CHARACTER)
    odd = lone_surrogate(sql)
    if odd is not None:
        raise messages.reject(messages.NOT_TEXT.format(code=ord(odd)))
    text = _TRAILING.sub("", sql)
    try:
        tokens = _tokenize(text, engine)
        is_explain = bool(tokens) and tokens[0].text.upper() == "EXPLAIN"
        if is_explain:
            expression, end = _explain_target(text, tokens[0], rules)
        else:
            expression, end = _validate_query(text, tokens, rules)
        validated = ValidatedQuery(
            text[:end], expression, is_explain,
            "explain" if is_explain else checks.statement_type(expression),
            written_calls([t for t in tokens if t.end < end]))
    except RecursionError:
        raise messages.reject(messages.TOO_DEEP) from None
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


def _explain_target(text: str, explain: Token, rules: _Rules) -> tuple[exp.Expr, int]:
    """Skip EXPLAIN's options (refusing ANALYZE) and validate the statement it explains."""
    rest = _blank_before(text, explain.end + 1)
    tokens = _tokenize(rest, rules.engine)
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
    # sqlglot reads all after EXPLAIN as one opaque token: the options are lexed on their own
    lexing.check(text, [explain, *tokens[:i]], tokens[i].start, rules.profile.lexing)
    target = _blank_before(text, tokens[i].start)
    target_tokens = _tokenize(target, rules.engine)
    if target_tokens[0].text.upper() == "EXPLAIN":
        raise messages.reject(messages.EXPLAIN_TWICE)
    return _validate_query(target, target_tokens, rules)


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


def _validate_query(text: str, tokens: list[Token], rules: _Rules) -> tuple[exp.Expr, int]:
    """Validate one query; return its tree and where its text ends (before a trailing ``;``)."""
    if not tokens:
        raise messages.reject(messages.EMPTY)
    first = tokens[0]
    if first.token_type == TokenType.SEMICOLON:
        raise messages.reject(messages.LEADING_SEMICOLON)
    profile, engine = rules.profile, rules.engine
    is_pragma = first.token_type == TokenType.PRAGMA and bool(profile.read_pragmas)
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
        _check_read_pragma(tokens, profile.read_pragmas)
    # The engine must read the text as these tokens (before parsing: a misread text's parse
    # errors would only confuse).
    lexing.check(text, tokens, end, profile.lexing)
    parser_tokens = _for_parser(tokens) if profile.postgres_noop_clauses else tokens
    try:
        parsed = engine.parser().parse(parser_tokens, text)
    except ParseError as error:
        if _into_file(parser_tokens):  # MySQL's INTO OUTFILE, which sqlglot cannot parse
            raise messages.reject(messages.INTO_FILE) from None
        incomplete = _incomplete_clause(engine, parser_tokens, text)
        raise messages.reject(messages.parse_error(error, incomplete)) from None
    except (ValueError, TypeError, IndexError, KeyError, AttributeError):
        # sqlglot's builders raise these for some malformed calls (Spark's date_trunc())
        raise messages.reject(messages.UNPARSABLE) from None
    statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
    if len(statements) != 1:
        raise messages.reject(messages.MULTIPLE_STATEMENTS if statements else messages.EMPTY)
    root = statements[0]
    if is_pragma and isinstance(root, exp.Pragma):
        return root, end
    if not isinstance(root, checks.QUERY_TYPES):
        raise messages.reject(messages.not_a_query(checks.statement_name(root) or first.text))
    checks.check_tree(root, profile)
    checks.check_tokens(tokens, profile)
    _check_credential_tables(root, profile)
    query = CheckedQuery(root, tokens, text, rules.allowed)
    for check in profile.extra_checks:
        check(query)
    return root, end


def _into_file(tokens: list[Token]) -> bool:
    return any(token.text.upper() == "INTO" and after.text.upper() in ("OUTFILE", "DUMPFILE")
               for token, after in zip(tokens, tokens[1:]))


def _check_credential_tables(root: exp.Expr, profile: type[GuardProfile]) -> None:
    for node in root.walk():
        if isinstance(node, exp.Table) and profile.is_denied_table(node.name, node.db or None):
            name = f"{node.db}.{node.name}" if node.db else node.name
            raise messages.reject(
                f"The table {name} holds credentials or other sessions' SQL and may not be "
                f"read; query the application's own tables instead.")
        if isinstance(node, exp.Func) and profile.is_denied_table(node.name, None):
            raise messages.reject(messages.denied_function(node.name.lower()))


def _first_word_message(first: Token) -> str:
    """A statement that is not a query, or a typo (``SELEC``): a syntax error with its place."""
    word = first.text
    known = unicodedata.normalize("NFKC", word).upper()
    if first.token_type != TokenType.VAR or known in messages.STATEMENT_WORDS:
        return messages.not_a_query(word)
    starts = sorted(w for w in _QUERY_STARTS if w.isalpha())
    suggestions = difflib.get_close_matches(known, [*starts, "EXPLAIN"], n=1)
    return messages.unknown_statement(word, first.line, first.col - len(word) + 1, suggestions)


def _check_read_pragma(tokens: list[Token], read_pragmas: frozenset[str]) -> None:
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
    if name not in read_pragmas or (argument and not call):
        raise messages.reject(messages.not_a_query("PRAGMA"))


def _for_parser(tokens: list[Token]) -> list[Token]:
    """The tokens without the Postgres options sqlglot cannot parse (see _XML_OPTION_FUNCTIONS)."""

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
