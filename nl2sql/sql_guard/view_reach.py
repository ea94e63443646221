"""Views that reach what the guard refuses in a query: a denied or unlisted function, a
credential table.

The guard sees the query, not the definitions of the views it reads. A view the database
holds (defined in the DuckDB file, the Spark catalogue, by a MariaDB root or a PostgreSQL
owner) may call ``json_execute_serialized_sql``, ``reflect`` or ``sleep``, or read
``pg_subscription`` or ``mysql.servers``; reading it runs that. So the catalogue read that
lists user functions (``user_functions.py``) also judges each view's calls and reads by the
backend's guard profile, views over views included, and a query or row lookup that reads such
a view is refused like one that calls or reads the thing itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.tokens import Token

from nl2sql.errors import QueryRejectedError
from nl2sql.sql_guard.allowlist import problems
from nl2sql.sql_guard.profiles import profile_for


@dataclass(frozen=True)
class Reach:
    """What makes a view refused: it ``calls`` a function or ``reads`` a relation ``name``."""

    verb: str  # "calls" or "reads"
    name: str
    why: str
    #: Functions only missing from the allowlist (``name`` among them): allowed_functions
    #: listing all of them admits the view.
    liftable: frozenset[str] = frozenset()


def refused_reach(dialect: str, view_calls: Iterable[tuple[str, str, str, str]],
                  view_reads: Iterable[tuple[str, str, str, str]],
                  unadmitted: Mapping[str, Reach] | None = None) -> dict[str, Reach]:
    """``schema.view`` (lower case) -> what it reaches that the guard refuses in a query,
    from ``(view schema, view, schema, function)`` calls (denied functions), ``(view schema,
    view, schema, relation)`` reads (credential tables) and ``unadmitted`` (views whose text
    calls what the backend's allowlist does not admit: ``allowlist_reach``); a view reaches
    what the views it reads reach."""
    profile = profile_for(dialect)
    found: dict[str, Reach] = dict(unadmitted or {})
    for view_schema, view, _schema, function in view_calls:
        name = function.lower()
        key = _key(view_schema, view)
        if (key not in found or found[key].liftable) and profile.is_denied_function(name):
            found[key] = Reach("calls", name, "a function on the deny list")
    reads: dict[str, set[str]] = {}
    for view_schema, view, schema, relation in view_reads:
        key = _key(view_schema, view)
        reads.setdefault(key, set()).add(_key(schema, relation))
        if key not in found and profile.is_denied_table(relation, schema or None):
            found[key] = Reach("reads", f"{schema}.{relation}" if schema else relation,
                               "credentials or other sessions' SQL")
    changed = True
    while changed:  # views over views
        changed = False
        for view, relations in reads.items():
            if view in found:
                continue
            for relation in relations:
                reach = found.get(relation) or next(
                    (r for v, r in found.items() if v.rpartition(".")[2] == relation), None)
                if reach is not None:
                    found[view] = reach
                    changed = True
                    break
    return {**{view.rpartition(".")[2]: reach for view, reach in found.items()}, **found}


def allowlist_reach(dialect: str, root: exp.Expr, tokens: Sequence[Token], text: str
                    ) -> Reach | None:
    """What a view defined as ``text`` (its query; ``root`` its tree, ``tokens`` the query's
    tokens) calls that the backend's allowlist does not admit (None: all admitted, or the
    backend has no allowlist)."""
    allowlist = profile_for(dialect).allowlist
    found = list(problems(allowlist, root, tokens, text, frozenset())) if allowlist else []
    if not found:
        return None
    if any(name is None for name, _message in found):  # an argument no list admits (an option)
        message = next(message for name, message in found if name is None)
        return Reach("calls", "a function", message.rstrip("."))
    names = [name for name, _message in found if name is not None]
    return Reach("calls", names[0], f"not on {allowlist.engine}'s reviewed list",
                 liftable=frozenset(names))


def refuse_reaching_view(name: str, schema: str | None, refused: Mapping[str, Reach],
                         allowed: frozenset[str], *, db_id: str) -> None:
    """Refuse reading the view ``[schema.]name`` when ``refused`` says it reaches what a query
    may not (a function ``allowed`` lists is admitted, never a denied one or a table)."""
    reach = refused.get(_key(schema, name))
    if reach is None:
        return
    listed = allowed | {a.rpartition(".")[2] for a in allowed}
    missing = sorted(reach.liftable - listed)
    if reach.liftable and not missing:
        return
    called = missing[0] if missing else reach.name
    hint = (f", or list {', '.join(missing)} under allowed_functions for database '{db_id}' in "
            f"dbs.yaml if you vouch for it" if missing else "")
    raise QueryRejectedError(
        f"The view {name} {reach.verb} {called} ({reach.why}), which a query may not, so it is "
        f"not read: query the tables it reads instead{hint}.", db_id=db_id)


def _key(schema: str | None, name: str) -> str:
    return f"{schema}.{name}".lower() if schema else name.lower()
