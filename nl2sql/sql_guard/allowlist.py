"""Only reviewed functions, on engines that cannot enforce read-only themselves (DuckDB, Spark).

A deny list names what is known to be dangerous; an engine version adds functions nobody named
(DuckDB's ``json_execute_serialized_sql`` runs SQL the guard never parsed, Spark's ``from_xml``
fetches a URL given as an option). So on DuckDB and Spark the guard admits a call only when its
name is on the backend's reviewed list (``duckdb_functions.py``, ``spark_functions.py``: the
engine's own catalogue at a pinned version, each function admitted or refused with a reason;
``scripts/function_catalogue.py`` dumps a new version's catalogue for review) or in the
database's ``allowed_functions`` (dbs.yaml). The deny lists still apply to every call.

A call is any name written before ``(`` (``calls.py``: quoted, qualified, in any case; the
engine looks functions up by that name), except the grammar's own words that take parentheses
(``IN (...)``, ``OVER (...)``, ``DECIMAL(10, 2)``), which the engine's catalogue does not list,
and names the query itself declares with a column list (``WITH x(a) AS``, ``AS t(a, b)``).

Some admitted functions are checked argument by argument:
- options: Spark's ``from_json``/``from_xml``/``from_csv``/``schema_of_*``/``to_*`` take an
  options map; it must be written ``map('key', 'value', ...)`` with every key on the function's
  reviewed list (no XSD, schema file, path or URL option), else the call is refused;
- a function named in a string (DuckDB's ``list_aggregate(l, 'sum')``): the string must be a
  literal naming an admitted function. In the method form ``l.list_aggregate('sum')`` the
  engine passes ``l`` as argument 1, so the name is the first argument written; after a name
  (``col.f(...)``, ``main.f(...)``) the call may be either form, and both must name one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from nl2sql.errors import QueryRejectedError
from nl2sql.sql_guard import messages
from nl2sql.sql_guard.calls import Call, arguments, calls, string_value

#: Tokens that may stand as an option's value in ``map('key', value, ...)``.
_LITERALS = {TokenType.STRING, TokenType.NUMBER, TokenType.TRUE, TokenType.FALSE}
#: Tokens that end a value, never a schema's name: ``[1, 2].f(...)`` is only a method call.
_VALUE_ENDS = {TokenType.R_BRACKET, TokenType.R_PAREN, TokenType.R_BRACE, TokenType.STRING,
               TokenType.NUMBER}


@dataclass(frozen=True)
class Options:
    """A function's options argument (``position``, 0-based) and the keys it may hold."""

    position: int
    keys: frozenset[str]  # lower case


@dataclass(frozen=True)
class Allowlist:
    """One engine's reviewed functions."""

    engine: str  # "DuckDB 2.0.1": the catalogue the review read
    admitted: frozenset[str]
    #: Refused names and why (a phrase: "it runs SQL text the guard never parsed").
    refused: Mapping[str, str]
    #: Words of the grammar that take parentheses and are no function in the catalogue.
    syntax: frozenset[str]
    options: Mapping[str, Options] = field(default_factory=dict)
    #: Functions taking another function's name as a string, by that argument's position.
    named_functions: Mapping[str, int] = field(default_factory=dict)
    #: Admitted names whose table function (a call in FROM) is another function, refused, and
    #: why (DuckDB's histogram aggregate, and its table macro that queries a table named by a
    #: string).
    table_refused: Mapping[str, str] = field(default_factory=dict)

    def admits(self, name: str, allowed: frozenset[str] = frozenset()) -> bool:
        return name in self.admitted or name in allowed


def names(text: str) -> frozenset[str]:
    """The lower-case names of a blank-separated list (the data modules' notation)."""
    return frozenset(text.lower().split())


def check(allowlist: Allowlist, root: exp.Expr, tokens: Sequence[Token], text: str,
          allowed: frozenset[str]) -> None:
    """Refuse the first call in ``tokens`` that ``allowlist`` (or ``allowed``, the database's
    ``allowed_functions``) does not admit, or whose checked arguments it does not."""
    found = next(problems(allowlist, root, tokens, text, allowed), None)
    if found is not None:
        raise messages.reject(found[1])


def problems(allowlist: Allowlist, root: exp.Expr, tokens: Sequence[Token], text: str,
             allowed: frozenset[str]) -> Iterator[tuple[str | None, str]]:
    """``(name, message)`` for each call ``allowlist`` does not admit, in text order: ``name``
    is the function it does not admit, or None when it admits the function but not one of its
    arguments (an option)."""
    declared = _declared_names(root)
    in_from = _table_functions(root) if allowlist.table_refused else set()
    for call in calls(tokens):
        name = call.name
        if not call.quoted and name in allowlist.syntax:
            continue
        if declared.get(name, 0) > 0:  # one declaration covers one "name("
            declared[name] -= 1
            continue
        if not allowlist.admits(name, allowed):
            yield name, _refusal(allowlist, name)
            continue
        if name in allowlist.table_refused and name not in allowed and (
                name in in_from or _after_from(tokens, call)):
            yield name, (f"The table function {name}() is not allowed on {allowlist.engine} "
                         f"({allowlist.table_refused[name]}); use {name}() as an aggregate, "
                         f"or query the table itself.")
            continue
        try:
            if name in allowlist.options:
                _check_options(allowlist, call, tokens, text)
            if name in allowlist.named_functions:
                _check_named_function(allowlist, call, tokens, text, allowed)
        except QueryRejectedError as error:
            yield None, error.message


def _table_functions(root: exp.Expr) -> set[str]:
    """The names of the functions the tree calls as tables (in FROM, JOIN, LATERAL)."""
    names: set[str] = set()
    for node in root.find_all(exp.Table, exp.Lateral):
        function = node.this
        if isinstance(function, exp.Anonymous):
            names.add(function.name.lower())
        elif isinstance(function, exp.Func):
            names.update(n.lower() for n in (function.sql_name(), *type(function).sql_names()))
    return names


def _after_from(tokens: Sequence[Token], call: Call) -> bool:
    """Whether ``call`` is written right after FROM, JOIN or LATERAL (qualified or not)."""
    i = call.index
    while i >= 2 and tokens[i - 1].token_type == TokenType.DOT:
        i -= 2
    return i > 0 and tokens[i - 1].text.upper() in ("FROM", "JOIN", "LATERAL")


def _declared_names(root: exp.Expr) -> dict[str, int]:
    """How many times the query declares each name with a column list (CTEs, aliases)."""
    declared: dict[str, int] = {}
    for alias in root.find_all(exp.TableAlias):
        if alias.columns and alias.name:
            declared[alias.name.lower()] = declared.get(alias.name.lower(), 0) + 1
    return declared


def _refusal(allowlist: Allowlist, name: str) -> str:
    why = allowlist.refused.get(name)
    if why:
        return (f"Function {name} is not allowed on {allowlist.engine} ({why}); remove it.")
    return (f"Function {name} is not a {allowlist.engine} built-in that nl2sql admits (a "
            f"user-defined function, or one not reviewed as read-only); use a built-in "
            f"function, or list it under allowed_functions for this database in dbs.yaml if "
            f"you vouch for it.")


def _check_options(allowlist: Allowlist, call: Call, tokens: Sequence[Token],
                   text: str) -> None:
    rule = allowlist.options[call.name]
    args = arguments(tokens, call)
    if any(t.token_type == TokenType.FARROW for arg in args for t in arg[:2]):
        raise messages.reject(
            f"Named arguments (=>) are not allowed in {call.name}(); pass its options "
            f"positionally as map('key', 'value', ...).")
    if len(args) <= rule.position:
        return
    if len(args) > rule.position + 1:
        raise messages.reject(f"{call.name}() takes its options as one map('key', 'value', "
                              f"...) argument; remove the arguments after it.")
    keys = _map_keys(args[rule.position], text)
    if keys is None:
        raise messages.reject(
            f"The options of {call.name}() must be written map('key', 'value', ...) with "
            f"literal keys and values, so the guard can check each key; write them so.")
    for key in keys:
        if key.lower() not in rule.keys:
            raise messages.reject(
                f"Option {key!r} of {call.name}() is not allowed (only options that shape the "
                f"parsing are, none that names a file, URL or schema); remove it.")


def _map_keys(argument: list[Token], text: str) -> list[str] | None:
    """The keys of ``map('k', v, ...)`` with literal keys and values, else None."""
    if len(argument) < 2 or argument[0].text.lower() != "map" \
            or argument[1].token_type != TokenType.L_PAREN \
            or argument[-1].token_type != TokenType.R_PAREN:
        return None
    inner = argument[2:-1]
    if not inner:
        return []
    if len(inner) % 4 != 3:  # k , v (, k , v)*
        return None
    keys = []
    for i in range(0, len(inner), 4):
        key, comma, value = inner[i:i + 3]
        separator = inner[i + 3] if i + 3 < len(inner) else None
        name = string_value([key], text)
        if name is None or not name.isascii() or comma.token_type != TokenType.COMMA \
                or value.token_type not in _LITERALS \
                or (separator is not None and separator.token_type != TokenType.COMMA):
            return None
        keys.append(name)
    return keys


def _check_named_function(allowlist: Allowlist, call: Call, tokens: Sequence[Token],
                          text: str, allowed: frozenset[str]) -> None:
    position = allowlist.named_functions[call.name]
    args = arguments(tokens, call)
    # x.f(a) is DuckDB's method form f(x, a): the name is one argument earlier. After a name
    # (col.f(a), main.f(a)) it may also be a schema-qualified f(a): both readings are checked.
    if call.index < 2 or tokens[call.index - 1].token_type != TokenType.DOT:
        positions = [position]
    elif tokens[call.index - 2].token_type in _VALUE_ENDS:
        positions = [position - 1]
    else:
        positions = [position - 1, position]
    for at in positions:
        if at < 0:  # the receiver itself would be the name: never a checked literal
            named = None
        elif at >= len(args):
            continue  # no name: the engine calls nothing (its error names the missing argument)
        else:
            named = string_value(args[at], text)
        if named is None or not allowlist.admits(named.lower(), allowed):
            raise messages.reject(
                f"{call.name}() calls the function its string argument names, which must be a "
                f"literal naming an admitted function; write it as {call.name}(list, 'sum').")
