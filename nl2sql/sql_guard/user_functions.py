"""User-defined functions: refused unless dbs.yaml vouches for them (``allowed_functions``).

A read-only transaction cannot stop a function that writes as its owner: a PostgreSQL
``SECURITY DEFINER`` function (through ``dblink``, or reading a server file), a MariaDB stored
function that runs ``SET GLOBAL``. The parser guard cannot know them either: they are names in
one database's catalogue. So each backend reads its catalogue (``DbConnection.user_functions``:
its functions, and the views that reach one, directly or through other views) and every query
is checked against it here, after the guard and before the engine runs it: a call of such a
function, or a reference to such a view, is refused unless every function it reaches is listed
in the database's ``allowed_functions``. Built-in functions (and, on PostgreSQL, functions of
installed extensions, which the deny list covers) are not user-defined. On PostgreSQL a query can
also reach one without naming it, through an operator, a cast, a domain's check or a type;
``implicit_calls`` checks those.

Names are compared in lower case, qualified (``schema.name``) and bare: a bare call is allowed
when the bare name is listed or every user function of that name is listed qualified. On
backends where a built-in can never be schema-qualified (MySQL/MariaDB, Spark), any qualified
call is a user function even when the catalogue did not list it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import sqlglot
import sqlglot.errors
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

from nl2sql.errors import QueryRejectedError
from nl2sql.sql_guard.calls import calls as _calls
from nl2sql.sql_guard.implicit_calls import (NO_IMPLICIT_CALLS, ImplicitCalls,
                                             check_implicit_calls, refuse_relation)
from nl2sql.sql_guard.profiles import profile_for
from nl2sql.sql_guard.view_reach import (Reach, allowlist_reach, refuse_reaching_view,
                                         refused_reach)

@dataclass(frozen=True)
class UserFunctions:
    """One database's user-defined functions, as its catalogue lists them."""

    #: ``schema.name`` of every user-defined function, lower case.
    functions: frozenset[str] = frozenset()
    #: View (``schema.name`` and bare name, lower case) -> the user functions it reaches.
    views: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: True where built-ins are never schema-qualified: ``x.f()`` always calls a user function.
    qualified_calls_are_user: bool = False
    #: Operators, casts and types that call a user function without naming it (PostgreSQL).
    implicit: ImplicitCalls = NO_IMPLICIT_CALLS
    #: ``schema.name`` of the user functions a query can call written as a column: PostgreSQL's
    #: functional notation, ``t.f`` or ``(t).f`` for ``f(t)``.
    attribute_functions: frozenset[str] = frozenset()
    #: View (``schema.name`` and bare name) -> the denied or unlisted function it calls or the
    #: credential table it reads (``view_reach.py``).
    refused_views: Mapping[str, Reach] = field(default_factory=dict)
    #: Tables (``schema.name`` and bare name) whose row-level security policy is what reaches
    #: (PostgreSQL): a refusal names the policy, not a view.
    policy_tables: frozenset[str] = frozenset()

    @classmethod
    def from_catalogue(cls, functions: Iterable[tuple[str, str]],
                       view_calls: Iterable[tuple[str, str, str, str]],
                       view_reads: Iterable[tuple[str, str, str, str]] = (),
                       *, qualified_calls_are_user: bool = False,
                       implicit: ImplicitCalls = NO_IMPLICIT_CALLS,
                       attribute_functions: Iterable[tuple[str, str]] = (),
                       dialect: str | None = None,
                       unadmitted: Mapping[str, Reach] | None = None,
                       policies: Iterable[tuple[str, str]] = ()) -> UserFunctions:
        """From ``(schema, function)`` rows, ``(view schema, view, schema, function)`` calls
        (of any function) and ``(view schema, view, schema, relation)`` reads; a view reaches
        what the views it reads reach. With the backend's sqlglot ``dialect``, views are also
        judged by its guard profile (``view_reach.py``; ``unadmitted``: the views whose text
        calls what its allowlist does not admit). ``policies``: the ``(schema, table)`` whose
        calls and reads are those of a row-level security policy."""
        view_calls, view_reads = list(view_calls), list(view_reads)
        names = frozenset(_qualified(s, f) for s, f in functions)
        reached: dict[str, set[str]] = {}
        for view_schema, view, schema, function in view_calls:
            if schema:
                called = _qualified(schema, function)
                calls = {called} if called in names or qualified_calls_are_user else set()
            else:
                calls = {f for f in names if _bare(f) == function.lower()}
            if calls:
                reached.setdefault(_qualified(view_schema, view), set()).update(calls)
        reads: dict[str, set[str]] = {}
        for view_schema, view, schema, relation in view_reads:
            reads.setdefault(_qualified(view_schema, view), set()).add(
                _qualified(schema, relation))
        changed = True
        while changed:  # views over views: what a view reads, it reaches
            changed = False
            for view, relations in reads.items():
                for relation in relations:
                    more = set().union(*(calls for other, calls in list(reached.items())
                                         if relation in (other, _bare(other))))
                    if more - reached.get(view, set()):
                        reached.setdefault(view, set()).update(more)
                        changed = True
        views: dict[str, frozenset[str]] = {}
        for view, calls in reached.items():
            views[view] = frozenset(calls)
            views[_bare(view)] = views.get(_bare(view), frozenset()) | calls
        return cls(names, views, qualified_calls_are_user, implicit,
                   frozenset(_qualified(s, f) for s, f in attribute_functions),
                   refused_reach(dialect, view_calls, view_reads, unadmitted)
                   if dialect else {},
                   frozenset(name for s, t in policies for name in (_qualified(s, t), t.lower())))


NO_USER_FUNCTIONS = UserFunctions()
#: A view whose definition nl2sql cannot parse: what it calls is unknown.
UNREADABLE = Reach("calls", "functions", "a definition nl2sql cannot read")


def from_view_definitions(functions: Iterable[tuple[str, str]],
                          views: Iterable[tuple[str, str, str]], dialect: str, *,
                          qualified_calls_are_user: bool = False,
                          implicit: ImplicitCalls = NO_IMPLICIT_CALLS) -> UserFunctions:
    """``UserFunctions`` from ``(schema, view, definition)`` rows: each definition is parsed
    for the functions it calls and the relations it reads (a backend whose catalogue keeps no
    dependencies), and judged by the backend's allowlist (``view_reach.py``). A definition
    that does not parse counts as calling every user function whose name it contains, and its
    calls are judged from its tokens alone."""
    functions = list(functions)
    calls: list[tuple[str, str, str, str]] = []
    reads: list[tuple[str, str, str, str]] = []
    unadmitted: dict[str, Reach] = {}
    engine = Dialect.get_or_raise(dialect)
    for schema, view, definition in views:
        key = _qualified(schema, view)
        try:
            tree = sqlglot.parse_one(definition, read=dialect)
        except sqlglot.errors.SqlglotError:
            text = definition.lower()
            calls += [(schema, view, s, f) for s, f in functions if f.lower() in text]
            try:  # its calls judged from its tokens alone (no name counts as declared)
                reach = allowlist_reach(dialect, exp.Select(), engine.tokenize(
                    _view_body(definition, dialect)), _view_body(definition, dialect))
            except sqlglot.errors.SqlglotError:
                reach = UNREADABLE if profile_for(dialect).allowlist is not None else None
            if reach is not None:
                unadmitted[key] = reach
            continue
        body = _view_body(definition, dialect)
        tokens = engine.tokenize(body)
        calls += [(schema, view, q or "", name)
                  for q, name in called_functions(tree, written_calls(tokens))]
        reads += [(schema, view, t.db or schema, t.name) for t in tree.find_all(exp.Table)
                  if isinstance(t.this, exp.Identifier)]
        reach = allowlist_reach(dialect, tree, tokens, body)
        if reach is not None:
            unadmitted[key] = reach
    return UserFunctions.from_catalogue(functions, calls, reads,
                                        qualified_calls_are_user=qualified_calls_are_user,
                                        implicit=implicit, dialect=dialect,
                                        unadmitted=unadmitted)


def check_user_functions(expression: exp.Expr, catalogue: UserFunctions,
                         allowed: Iterable[str], *, db_id: str, sql: str | None = None,
                         dialect: str = "postgres",
                         written: Iterable[tuple[str | None, str]] = ()) -> None:
    """Refuse a query that calls a user-defined function, or reads a view that reaches one,
    unless ``allowed`` lists it (``QueryRejectedError``, which the model can act on); with its
    text ``sql`` (in ``dialect``), also one that reaches one through an operator, a cast or a
    type (``implicit_calls``). ``written``: the calls as the text writes them
    (``written_calls``)."""
    allowed = frozenset(name.lower() for name in allowed)
    called: set[str] = set()
    for qualifier, name in called_functions(expression, written):
        if qualifier is not None:
            qualified = f"{qualifier}.{name}"
            user = qualified in catalogue.functions or catalogue.qualified_calls_are_user
            if user and not {qualified, name} & allowed:
                raise _refusal(qualified, None, db_id)
            called.add(qualified)
            continue
        same_name = {f for f in catalogue.functions if _bare(f) == name}
        if same_name and name not in allowed and not same_name <= allowed:
            raise _refusal(min(same_name - allowed), None, db_id)
        called |= same_name
    for name in attribute_names(expression) if catalogue.attribute_functions else ():
        same_name = {f for f in catalogue.attribute_functions if _bare(f) == name}
        if same_name and name not in allowed and not same_name <= allowed:
            raise _refusal(min(same_name - allowed), None, db_id, as_column=name)
        called |= same_name
    for table in expression.find_all(exp.Table):
        if isinstance(table.this, exp.Identifier):
            refuse_view(table.name, table.db or None, catalogue, allowed, db_id=db_id)
    if sql is not None:
        check_implicit_calls(sql, expression, catalogue.implicit, allowed, called,
                             dialect=dialect, db_id=db_id)


def refuse_view(name: str, schema: str | None, catalogue: UserFunctions,
                allowed: Iterable[str], *, db_id: str) -> None:
    """Refuse reading the relation ``[schema.]name`` when it is a view reaching a user
    function that ``allowed`` does not list, or its rows hold a type whose values can reach
    one, or a view reaching what a query may not call or read (``view_reach.py``): samples,
    row lookups and queries alike."""
    calls = catalogue.views.get(_qualified(schema, name), frozenset())
    allowed = frozenset(a.lower() for a in allowed)
    policy = _qualified(schema, name) in catalogue.policy_tables
    for function in sorted(calls):
        if not {function, _bare(function)} & allowed:
            raise _refusal(function, name, db_id, policy=policy)
    refuse_relation(_qualified(schema, name), catalogue.implicit, allowed, db_id=db_id)
    refuse_reaching_view(name, schema, catalogue.refused_views, allowed, db_id=db_id)


def called_functions(expression: exp.Expr, written: Iterable[tuple[str | None, str]] = ()
                     ) -> Iterator[tuple[str | None, str]]:
    """``(qualifier or None, name)`` of every function call in the tree, lower case; a known
    function is named by each of its SQL names (``LCASE`` and ``LOWER``); and the calls
    ``written`` in the text the tree was parsed from (``written_calls``)."""
    yield from _tree_calls(expression)
    yield from written


def _view_body(definition: str, dialect: str) -> str:
    """The query of a view's definition: what follows ``AS`` in ``CREATE VIEW v (a, b) AS
    SELECT ...`` (the column list is no call), or the whole text when it is only the query."""
    tokens = Dialect.get_or_raise(dialect).tokenize(definition)
    if not tokens or tokens[0].token_type != TokenType.CREATE:
        return definition
    for token, after in zip(tokens, tokens[1:]):
        if token.token_type == TokenType.ALIAS and after.token_type in (
                TokenType.SELECT, TokenType.WITH, TokenType.FROM, TokenType.VALUES,
                TokenType.L_PAREN):
            return definition[after.start:]
    return definition


def written_calls(tokens: Sequence[Token]) -> frozenset[tuple[str | None, str]]:
    """``(qualifier or None, name)`` of every name followed by ``(`` in a text's ``tokens``,
    lower case. sqlglot renames functions it knows (``date_trunc`` is ``TIMESTAMP_TRUNC``,
    MySQL's ``date_format`` ``TIME_TO_STR``), so the tree alone would miss a user function of a
    built-in's name that the engine calls (PostgreSQL picks a user ``date_trunc(text, date)``
    over the built-in for a ``date`` column). The guard keeps a query's
    (``ValidatedQuery.written_calls``)."""
    return frozenset((call.qualifier, call.name) for call in _calls(tokens))


def _tree_calls(expression: exp.Expr) -> Iterator[tuple[str | None, str]]:
    for node in expression.find_all(exp.Func):
        parent = node.parent
        qualifier = None
        if isinstance(parent, exp.Dot) and parent.expression is node:
            qualifier = parent.this.name.lower() or "?"  # a.b.f(): the schema b
        elif isinstance(parent, exp.Table) and parent.this is node and parent.db:
            qualifier = parent.db.lower()
        if isinstance(node, exp.Anonymous):
            yield qualifier, node.name.lower()
        else:
            for name in node.sql_names():
                yield qualifier, name.lower()


def attribute_names(expression: exp.Expr) -> Iterator[str]:
    """The last name of every qualified column (``t.f``, ``s.t.f``) and field selection
    (``(t).f``), lower case: where PostgreSQL may call a function ``f(t)`` instead."""
    for node in expression.find_all(exp.Column, exp.Dot):
        if isinstance(node, exp.Column):
            if node.table and isinstance(node.this, exp.Identifier):
                yield node.name.lower()
        elif isinstance(node.expression, exp.Identifier):
            yield node.expression.name.lower()


def _refusal(function: str, view: str | None, db_id: str, *,
             as_column: str | None = None, policy: bool = False) -> QueryRejectedError:
    through = f" (through the view {view})" if view else ""
    if view and policy:
        through = f" (through the row-level security policy of the table {view})"
    if as_column:
        through = f" (written as the column {as_column}, which PostgreSQL reads as a call)"
    return QueryRejectedError(
        f"The query calls the user-defined function {function}{through}, which can change data "
        f"or read files as its owner, so it is not run: use built-in functions and tables. "
        f"If you vouch for it, list it under allowed_functions for database '{db_id}' in "
        f"dbs.yaml.", db_id=db_id)


def _qualified(schema: str | None, name: str) -> str:
    return f"{schema}.{name}".lower() if schema else name.lower()


def _bare(name: str) -> str:
    return name.rpartition(".")[2]
