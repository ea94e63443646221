"""Cube JavaScript models (``model/cubes/orders.js``) read as the YAML form they mirror.

Each top-level ``cube(`orders`, {...})`` and ``view(`orders_view`, {...})`` call becomes an
entry of ``cubes:`` / ``views:``: its members' objects (``measures: {count: {...}}``) lists of
``{name, ...}``, a template string's ``${CUBE}`` and ``${users.id}`` YAML's ``{CUBE}`` and
``{users.id}``, a bare name (``extends: base_orders``, ``join_path: orders.users``) its text.
The file is parsed (esprima), never run: only literal values are read. A value computed by code
(a function call, ``${FILTER_PARAMS...}``, a variable's value) in a property nl2sql reads makes
its cube a problem; properties it does not read (pre-aggregations, ``meta``...) are skipped.
"""

from __future__ import annotations

from typing import Any

import esprima

#: Properties holding an object of named members, read as a YAML list of ``{name, ...}``.
_NAMED = {"measures", "dimensions", "segments", "joins"}
#: Properties nl2sql never reads: left unparsed (they often hold code).
_SKIPPED = {"preAggregations", "pre_aggregations", "refreshKey", "refresh_key", "meta",
            "drillMembers", "drill_members", "hierarchies", "folders", "accessPolicy",
            "access_policy", "dataSource", "data_source", "sqlAlias", "sql_alias", "format",
            "granularities", "rewriteQueries", "rewrite_queries", "contextMembers"}
#: Properties whose value may be a bare name (``extends: base_orders``, ``orders.users``).
_NAMES = {"extends", "joinPath", "join_path", "includes", "excludes"}
_CALLS = {"cube": "cubes", "view": "views"}


class _Computed(ValueError):
    """A value the file computes with code, which a parse alone cannot know."""


def read_js(text: str) -> tuple[dict[str, list[Any]], list[tuple[str, str, str]]]:
    """The YAML-form document of a JavaScript model, and its problems: ("cube" or "view",
    its name, why).
    ``ValueError`` with the line when the file is not JavaScript."""
    try:
        tree = _parse(text)
    except esprima.Error as exc:  # its message: "Line 3: Unexpected token }"
        raise ValueError(f"line {exc.lineNumber}: not valid JavaScript "
                         f"({str(exc.message).partition(': ')[2] or exc.message})") from None
    document: dict[str, list[Any]] = {"cubes": [], "views": []}
    problems = []
    for statement in tree.body:
        call = statement.expression if statement.type == "ExpressionStatement" else None
        if call is None or call.type != "CallExpression" or call.callee.type != "Identifier" \
                or call.callee.name not in _CALLS or len(call.arguments) != 2:
            continue  # imports, constants, helpers: no cube of their own
        kind, name = call.callee.name, f"line {call.loc.start.line}"
        unread: list[tuple[str, str, str]] = []  # (property, member, why)
        try:
            name = str(_value(call.arguments[0], "name"))
            body = _value(call.arguments[1], "", unread)
            if not isinstance(body, dict):
                raise _Computed(f"line {call.loc.start.line}: its definition is not an object")
        except _Computed as exc:
            problems.append((kind, name, f"{exc}; nl2sql reads literal values only (write it "
                                         f"as text, or the model in YAML)"))
            continue
        document[_CALLS[kind]].append({"name": name, **body})
        # a measure left out is a metric's problem (asked for by name, it says why)
        problems += [("metric", f"{name}.{member}", f"{why}; nl2sql reads literal values only")
                     if key == "measures" else
                     (kind, name, f"{key[:-1]} '{member}': {why}; nl2sql reads literal values "
                                  f"only") for key, member, why in unread]
    return document, problems


def _parse(text: str) -> Any:
    """A script, or a module (a file with ``import``/``export``)."""
    try:
        return esprima.parseScript(text, {"loc": True})
    except esprima.Error as exc:
        try:
            return esprima.parseModule(text, {"loc": True})
        except esprima.Error:
            raise exc from None


def _value(node: Any, key: str, unread: list[tuple[str, str, str]] | None = None) -> Any:
    """A literal node's value (``key``: the property it is the value of); ``_Computed`` for
    code. A member (of ``measures``...) computed by code is left out and named in ``unread``."""
    match node.type:
        case "Literal":
            return node.value
        case "TemplateLiteral":
            texts = [quasi.value.cooked or quasi.value.raw or "" for quasi in node.quasis]
            parts = [texts[0]]
            for expression, text in zip(node.expressions, texts[1:]):
                parts += ["{" + _path(expression) + "}", text]
            return "".join(parts)
        case "Identifier" | "MemberExpression" if key in _NAMES:
            return _path(node)
        case "ArrayExpression":
            return [_value(item, key) for item in node.elements]
        case "UnaryExpression" if node.operator == "-" and node.argument.type == "Literal":
            return -node.argument.value
        case "ObjectExpression":
            entries = {}
            for prop in node.properties:
                if prop.type != "Property" or prop.computed:
                    raise _Computed(f"line {prop.loc.start.line}: a computed property")
                name = prop.key.name if prop.key.type == "Identifier" else str(prop.key.value)
                if name in _SKIPPED:
                    continue
                if key not in _NAMED:
                    entries[name] = _value(prop.value, name, unread)
                    continue
                try:  # one member of a cube: what cannot be read leaves it alone out
                    entries[name] = _value(prop.value, name)
                except _Computed as exc:
                    if unread is None:
                        raise
                    unread.append((key, name, str(exc)))
            if key in _NAMED:
                return [{"name": name, **(value if isinstance(value, dict) else {})}
                        for name, value in entries.items()]
            return entries
    raise _Computed(f"line {node.loc.start.line}: '{key or 'a value'}' is computed by code "
                    f"({node.type})")


def _path(node: Any) -> str:
    """``CUBE``, ``users.id``: a name or a chain of them (``${users.id}``, ``orders.users``)."""
    if node.type == "Identifier":
        return node.name
    if node.type == "MemberExpression" and not node.computed:
        return f"{_path(node.object)}.{node.property.name}"
    raise _Computed(f"line {node.loc.start.line}: a value computed by code ({node.type})")
