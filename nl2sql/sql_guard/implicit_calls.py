"""User-defined functions a query reaches without naming them (PostgreSQL): operators, casts, types.

PostgreSQL calls a function for an operator (``a + b``; the ``=`` behind ``IN``, ``CASE x WHEN``,
``NULLIF``, ``IS DISTINCT FROM``, ``JOIN ... USING`` and ``NATURAL JOIN``; ``>=``/``<=`` behind
``BETWEEN``; ``~~`` behind ``LIKE``...), for a cast (``x::text``, ``CAST``, and implicitly when a
value meets another type), for a domain's ``CHECK``, a range type's subtype difference and a
type's input and output. Anyone may create an operator, and a cast or a domain for a type they
own; its function then runs like any call of it, ``SECURITY DEFINER`` included, and no function
name appears in the query.

The catalogue read (``PostgresConnection.read_user_functions``) lists those whose function is a
user-defined one as ``ImplicitCalls``; the types involved are closed over what holds or makes
their values (arrays and their elements, domains over them, composite types and so table and
view rows with a column of one, ranges and multiranges). A query is refused, unless
``allowed_functions`` lists every function it could reach, when:

- its text holds the operator's name as PostgreSQL's lexer reads it (outside strings, quoted
  names and comments; the longest run of operator characters, a trailing ``+``/``-`` split off
  as the server does, ``!=`` read as ``<>``), or a construct that implies the operator;
- a name in its text is such a type, or a table or view whose rows hold one, or it calls a user
  function (or operator) that takes or returns one;
- a cast between two built-in types has a user function (only a superuser can create one): any
  explicit cast, and for an implicit or assignment cast any query.

This refuses more than could run the function (an ``=`` between two numbers when a user ``=``
exists for some type, a column named like such a type): only databases with such operators,
casts or domains see it; with none, nothing here runs. Operator classes (what ``ORDER BY``,
``GROUP BY``, ``DISTINCT``, set operations and ``GREATEST`` use) need a superuser to create and
are not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

from nl2sql.errors import QueryRejectedError

#: Operator characters (PostgreSQL, and DuckDB, whose parser is PostgreSQL's), and those that
#: let an operator end in ``+`` or ``-``.
OPERATOR_CHARS = frozenset("~!@#^&|`?+-*/%<>=")
_NON_SQL_OPERATOR_CHARS = frozenset("~!@#^&|`?%")
#: Tokens whose text is a value, not SQL: their characters are never operators.
_VALUES = frozenset({
    TokenType.STRING, TokenType.NATIONAL_STRING, TokenType.BYTE_STRING, TokenType.RAW_STRING,
    TokenType.HEX_STRING, TokenType.BIT_STRING, TokenType.HEREDOC_STRING,
    TokenType.UNICODE_STRING, TokenType.IDENTIFIER, TokenType.NUMBER})
_NOT_NAMES = _VALUES - {TokenType.IDENTIFIER}
_PLAIN_NUMBER = re.compile(r"[0-9._]*([eE][+-]?[0-9_]+)?\Z")
#: Operators PostgreSQL calls for a construct that does not spell them.
_IMPLIED: dict[type[exp.Expr], tuple[str, ...]] = {
    exp.In: ("=", "<>"), exp.Between: ("<", ">", "<=", ">="), exp.Like: ("~~", "!~~"),
    exp.ILike: ("~~*", "!~~*"), exp.SimilarTo: ("~", "!~"), exp.Nullif: ("=",),
    exp.NullSafeEQ: ("=",), exp.NullSafeNEQ: ("=",)}


@dataclass(frozen=True)
class Route:
    """A way to a user-defined function: ``what`` PostgreSQL calls it for, and the function."""

    what: str  # "the operator public.+(text, text)", "the cast from mood to text"
    function: str  # schema.name, lower case


@dataclass(frozen=True)
class ImplicitCalls:
    """One database's operators, casts and types that call a user-defined function."""

    #: Operator name -> the operators of that name (any schema, any operand types).
    operators: Mapping[str, frozenset[Route]] = field(default_factory=dict)
    #: Type or relation (bare and ``schema.name``, lower case) -> what its values can reach.
    types: Mapping[str, frozenset[Route]] = field(default_factory=dict)
    #: User function ``schema.name`` -> what its argument and result types can reach.
    function_types: Mapping[str, frozenset[Route]] = field(default_factory=dict)
    #: Casts between built-in types: reached by any explicit cast / by any query.
    any_cast: frozenset[Route] = frozenset()
    every_query: frozenset[Route] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.operators or self.types or self.function_types or self.any_cast
                    or self.every_query)

    @classmethod
    def from_catalogue(cls, rows: Iterable[tuple[str, str | None, str | None, str, str, str]]
                       ) -> ImplicitCalls:
        """From ``(kind, schema, name, function schema, function, what)`` rows, kind one of
        ``operator``, ``type``, ``function type``, ``explicit cast``, and ``implicit cast`` or
        ``every query`` (reached by any query)."""
        by_kind: dict[str, dict[str, set[Route]]] = {}
        for kind, schema, name, function_schema, function, what in rows:
            route = Route(what, f"{function_schema}.{function}".lower())
            keys = {(name or "").lower()}
            if kind == "type" and schema:
                keys.add(f"{schema}.{name}".lower())
            elif kind == "function type":
                keys = {f"{schema}.{name}".lower()}
            for key in keys:
                by_kind.setdefault(kind, {}).setdefault(key, set()).add(route)

        def frozen(kind: str) -> dict[str, frozenset[Route]]:
            return {key: frozenset(routes) for key, routes in by_kind.get(kind, {}).items()}

        def every(kind: str) -> frozenset[Route]:
            return frozenset().union(*by_kind.get(kind, {}).values())

        return cls(frozen("operator"), frozen("type"), frozen("function type"),
                   every("explicit cast"), every("implicit cast") | every("every query"))


NO_IMPLICIT_CALLS = ImplicitCalls()


def check_implicit_calls(sql: str, expression: exp.Expr, calls: ImplicitCalls,
                         allowed: frozenset[str], called: Iterable[str], *, dialect: str,
                         db_id: str) -> None:
    """Refuse ``sql`` (its tree ``expression``) when it could reach a user-defined function
    through an operator, a cast or a type that ``allowed`` (lower case) does not vouch for;
    ``called``: the user functions it calls by name (``schema.name``)."""
    if not calls:
        return
    tokens = Dialect.get_or_raise(dialect).tokenizer().tokenize(sql)
    routes: list[tuple[Route, str | None]] = []
    called = set(called)
    if calls.operators:
        for name in sorted(operators_in(sql, tokens) | implied_operators(expression)):
            for route in sorted(calls.operators.get(name, ()), key=_order):
                routes.append((route, None))
                called.add(route.function)  # its operand types come with it
    names = {token.text.lower() for token in tokens if token.token_type not in _NOT_NAMES}
    for name in sorted(names & calls.types.keys()):
        routes += [(route, f"through {name}, which the query names")
                   for route in sorted(calls.types[name], key=_order)]
    for function in sorted(called & calls.function_types.keys()):
        routes += [(route, f"through the arguments or result of {function}")
                   for route in sorted(calls.function_types[function], key=_order)]
    if calls.any_cast and (expression.find(exp.Cast) is not None
                           or any(t.token_type == TokenType.DCOLON for t in tokens)):
        routes += [(route, "through a cast in the query") for route in calls.any_cast]
    routes += [(route, "which the database may apply in any query")
               for route in calls.every_query]
    for route, through in routes:
        if not {route.function, route.function.rpartition(".")[2]} & allowed:
            raise refusal(route, through, db_id)


def refuse_relation(name: str, calls: ImplicitCalls, allowed: frozenset[str], *,
                    db_id: str) -> None:
    """Refuse reading the relation ``name`` (bare or ``schema.name``, lower case) when its rows
    hold a type whose values can reach a user function ``allowed`` does not list."""
    for route in sorted(calls.types.get(name, ()), key=_order):
        if not {route.function, route.function.rpartition(".")[2]} & allowed:
            raise refusal(route, f"through {name}, whose rows hold such a value", db_id)


def operators_in(sql: str, tokens: list[Token]) -> set[str]:
    """The operator names PostgreSQL's lexer reads in ``sql`` (``tokens``: sqlglot's reading,
    which says where strings, quoted names, numbers and comments are)."""
    masked = [" "] * len(sql)
    for token in tokens:
        span = sql[token.start:token.end + 1]
        if token.token_type in _VALUES and (token.token_type != TokenType.NUMBER
                                            or _PLAIN_NUMBER.match(span)):
            span = "x" * len(span)
        masked[token.start:token.end + 1] = span
    text = "".join(masked)
    names: set[str] = set()
    at = 0
    while at < len(text):
        if text[at] not in OPERATOR_CHARS:
            at += 1
            continue
        end = at
        while end < len(text) and text[end] in OPERATOR_CHARS:
            end += 1
        length = _operator_length(text[at:end])
        name = text[at:at + length]
        names.add("<>" if name == "!=" else name)
        at += length
    return names


def implied_operators(expression: exp.Expr) -> set[str]:
    """Operators PostgreSQL calls for constructs that do not spell them."""
    names: set[str] = set()
    for node in expression.walk():
        names.update(_IMPLIED.get(type(node), ()))
        if isinstance(node, exp.Case) and node.args.get("this") is not None:
            names.add("=")  # CASE x WHEN v
        elif isinstance(node, exp.Join) and (node.args.get("using")
                                             or node.method.upper() == "NATURAL"):
            names.add("=")
    return names


def refusal(route: Route, through: str | None, db_id: str) -> QueryRejectedError:
    via = f", {through}" if through else ""
    calls = ("" if route.function in route.what
             else f", which calls the user-defined function {route.function}")
    return QueryRejectedError(
        f"The query can reach {route.what}{via}{calls}; user-defined code can change data or "
        f"read files as its owner, so the query is not run: write it without that. If you "
        f"vouch for {route.function}, list it under allowed_functions for database '{db_id}' "
        f"in dbs.yaml.", db_id=db_id)


def _operator_length(run: str) -> int:
    """How much of a run of operator characters PostgreSQL reads as one operator (scan.l):
    up to a comment start, and without trailing ``+``/``-`` unless it holds a character that
    is not one of SQL's own operators."""
    length = len(run)
    for comment in ("/*", "--"):
        found = run.find(comment)
        if 0 < found < length:
            length = found
    if length > 1 and run[length - 1] in "+-" \
            and not _NON_SQL_OPERATOR_CHARS.intersection(run[:length - 1]):
        while length > 1 and run[length - 1] in "+-":
            length -= 1
    return length


def _order(route: Route) -> tuple[str, str]:
    return route.function, route.what
