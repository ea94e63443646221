"""The user-defined functions one MySQL/MariaDB call can reach, looked up by exact name in the
call's own transaction (no catalogue-wide read, nothing kept between calls).

What a call reaches: the functions it calls and the relations it reads; a relation that is a
view reaches what its definition calls and reads, views over views recursively. Only these are
looked up, each by an exact ``schema`` + ``name`` equality, all of one level in one statement
(``UNION ALL``): ``information_schema`` then opens only the objects named (0.1-0.3 ms each on
MariaDB, where a scan of ``VIEWS`` opens every view). A view's definition is read in the same
round trip as the view; a view read by a view costs one more round trip per level, only when
there is one.

What needs no lookup:
- a qualified call ``db.f()`` is a stored function whatever the catalogue says (built-ins are
  never qualified): ``UserFunctions.qualified_calls_are_user``;
- in a view definition the server prints a stored function qualified, or, in the view's own
  schema, as a backtick-quoted bare name (`` `f`(...) ``; built-ins and loadable functions
  unquoted), so the definition alone names the view's stored functions.

What is looked up: the query's bare calls (a stored function of the connection's database when
the name is no built-in of this server: ``format_bytes`` is MySQL's, not MariaDB's), the
relations read, and the loadable functions (``mysql.func``, a few rows; only when the login
may read it). Hand-written catalogue SQL: no library looks views and routines up by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sqlglot
import sqlglot.errors
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from nl2sql.errors import QueryRejectedError
from nl2sql.sql_guard.user_functions import UserFunctions, called_functions

#: Views of these schemas are the server's own (MySQL's ``sys`` calls ``sys`` functions).
SYSTEM_SCHEMAS = frozenset({"mysql", "sys", "information_schema", "performance_schema"})
_VIEW = ("SELECT 'v', TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS "
         "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s")
_FUNCTION = ("SELECT 'f', ROUTINE_SCHEMA, ROUTINE_NAME, NULL FROM information_schema.ROUTINES "
             "WHERE ROUTINE_SCHEMA = %s AND ROUTINE_NAME = %s AND ROUTINE_TYPE = 'FUNCTION'")
_LOADABLE = "SELECT 'l', '', name, NULL FROM mysql.func"
#: `a`.`b` in a definition sqlglot cannot parse: maybe a relation (or a call when "(" follows).
_QUOTED_PAIR = re.compile(r"`((?:[^`]|``)+)`\.`((?:[^`]|``)+)`")

#: Runs one statement with ``%s`` parameters on the call's connection; answers its rows.
Run = Callable[[str, tuple[Any, ...]], Sequence[Sequence[Any]]]


def query_reach(expression: exp.Expr, allowed: Iterable[str], *,
                written: Iterable[tuple[str | None, str]] = ()
                ) -> tuple[frozenset[str], frozenset[tuple[str | None, str]]]:
    """The bare names ``expression`` calls (and its text, as ``written``) that ``allowed`` does
    not list (to look up), and the ``(schema or None, name)`` relations it reads."""
    allowed = frozenset(a.lower() for a in allowed)
    bare = frozenset(name for qualifier, name in called_functions(expression, written)
                     if qualifier is None and name not in allowed)
    relations = frozenset((t.db or None, t.name) for t in expression.find_all(exp.Table)
                          if isinstance(t.this, exp.Identifier))
    return bare, relations


def reached_functions(run: Run, database: str | None, bare_calls: Iterable[str],
                      relations: Iterable[tuple[str | None, str]], *,
                      loadable: bool, db_id: str) -> UserFunctions:
    """The user functions a call reaches, looked up with ``run`` (the call's transaction):
    stored functions of ``database`` named like ``bare_calls``, the loadable functions when
    ``loadable``, and the views among ``relations`` (bare: of ``database``) with the functions
    they reach. An empty call (no bare call, no relation) runs nothing. A view whose
    definition the login may not read (no SHOW VIEW: the server shows it empty) is refused:
    it runs as its definer, whatever it calls."""
    functions: list[tuple[str, str]] = []
    view_calls: list[tuple[str, str, str, str]] = []
    view_reads: list[tuple[str, str, str, str]] = []
    parts: list[str] = []
    params: list[Any] = []
    bare_calls, pending = sorted(set(bare_calls)), list(relations)
    if database:
        for name in bare_calls:
            parts.append(_FUNCTION)
            params += [database, name]
    if loadable and (bare_calls or pending):
        parts.append(_LOADABLE)
    seen: set[tuple[str, str]] = set()
    while True:
        for schema, name in pending:
            schema = schema or database
            if not schema or schema.lower() in SYSTEM_SCHEMAS or (schema, name) in seen:
                continue
            seen.add((schema, name))
            parts.append(_VIEW)
            params += [schema, name]
        if not parts:
            break
        rows = run(" UNION ALL ".join(parts), tuple(params))
        parts, params, pending = [], [], []
        for kind, schema, name, definition in rows:
            if kind != "v":
                functions.append((str(schema), str(name)))
                continue
            if not definition:
                raise QueryRejectedError(
                    f"The view {name} runs as its definer and the login of database '{db_id}' "
                    f"may not read its definition, so nl2sql cannot check what it calls: grant "
                    f"the login SHOW VIEW on {schema}, or read its tables instead.", db_id=db_id)
            calls, reads = view_reach(str(schema), str(definition))
            view_calls += [(schema, name, q, f) for q, f in calls]
            view_reads += [(schema, name, s, r) for s, r in reads]
            pending += reads
    return UserFunctions.from_catalogue(functions, view_calls, view_reads,
                                        qualified_calls_are_user=True, dialect="mysql")


def view_reach(schema: str, definition: str
               ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(qualifier or "", function)`` calls and ``(schema, relation)`` reads of a view of
    ``schema`` defined as ``definition`` (as the server prints it). A backtick-quoted bare call
    is a stored function of ``schema``. A definition sqlglot cannot parse reads every quoted
    ``a.b`` pair it names (a lookup of what is no view finds nothing)."""
    try:
        tokens = Dialect.get_or_raise("mysql").tokenize(definition)
    except sqlglot.errors.SqlglotError:  # never for a server's own text: refuse, not guess
        return [(schema, "(unreadable view definition)")], []
    calls = [(schema, tokens[i].text) for i in range(len(tokens) - 1)
             if tokens[i].token_type == TokenType.IDENTIFIER
             and tokens[i + 1].token_type == TokenType.L_PAREN
             and (i == 0 or tokens[i - 1].token_type != TokenType.DOT)]
    try:
        tree = sqlglot.parse_one(definition, read="mysql")
    except sqlglot.errors.SqlglotError:
        pairs = [(m.group(1).replace("``", "`"), m.group(2).replace("``", "`"), m.end())
                 for m in _QUOTED_PAIR.finditer(definition)]
        calls += [(s, f) for s, f, end in pairs if definition[end:end + 1] == "("]
        calls += [("", t.text) for i, t in enumerate(tokens[:-1])
                  if t.token_type == TokenType.VAR
                  and tokens[i + 1].token_type == TokenType.L_PAREN]
        return calls, [(s, r) for s, r, _end in pairs]
    calls += [(q or "", f) for q, f in called_functions(tree)]
    reads = [(t.db or schema, t.name) for t in tree.find_all(exp.Table)
             if isinstance(t.this, exp.Identifier)]
    return calls, reads
