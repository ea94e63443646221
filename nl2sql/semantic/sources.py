"""The SQL of a semantic model's tables in one dialect: relations, expressions over a table's
columns, and the many-to-one join paths between tables.

Expressions are the source's SQL parsed with sqlglot in the database's dialect: unqualified
columns are qualified with the table's alias (``{CUBE}`` is the alias too), and, when the schema
cache is known, table and column names are matched to the database's own spelling (so
``ref('invoice')`` reads table ``Invoice``, and a mixed-case name is quoted where the backend
folds unquoted names). A name the cache does not have is an error naming it.
"""

from __future__ import annotations

import re
from collections import deque
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError

from nl2sql.errors import MetricQueryError
from nl2sql.semantic.cube import LABEL, REFERENCE
from nl2sql.semantic.model import MAX_HOPS, Link, SemanticModel, Table
from nl2sql.schema.models import DbInfo, TableInfo

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PLACEHOLDER = "nl2sql_ref_"


def _label(name: str) -> str | None:
    """The text of a Cube ``case`` label's placeholder (``cube._label_sql``); None for any
    other name."""
    if not name.startswith(LABEL):
        return None
    try:
        return bytes.fromhex(name[len(LABEL):]).decode()
    except ValueError:  # a column that merely starts so
        return None


def parse_expression(text: str, dialect: str, what: str) -> exp.Expression:
    """One SQL expression (not a statement, not several), a tree of its own; ``MetricQueryError``
    naming ``what`` otherwise."""
    try:
        trees = _parsed(text, dialect)
    except ParseError as exc:
        raise MetricQueryError(f"{what} does not parse in this database's dialect "
                               f"({str(exc).splitlines()[0]}).") from None
    if len(trees) != 1 or isinstance(trees[0], exp.Query) \
            or not isinstance(trees[0], (exp.Condition, exp.Func)):
        raise MetricQueryError(f"{what} does not parse as one expression (a value or a "
                               f"condition, not a statement).")
    return trees[0].copy()


def true_division(tree: exp.Expression) -> exp.Expression:
    """``tree`` with its divisions dividing alike on every backend: the dividend cast to
    DOUBLE, as a ratio metric's is. Otherwise a share of two counts is 0 on SQLite and
    PostgreSQL (an integer divided by an integer), 0.2551 on MariaDB (four decimals) and
    0.25511 on DuckDB."""
    for division in list(tree.find_all(exp.Div)):
        division.set("this", exp.cast(division.this, exp.DataType.Type.DOUBLE))
        division.set("typed", False)
    return tree



def ordered(value: exp.Expression, dialect: str, descending: bool = False) -> exp.Ordered:
    """``value`` [DESC] with the dialect's own place for NULLs (sqlglot would otherwise spell
    out another dialect's, e.g. a ``CASE`` for MySQL)."""
    nulls = Dialect.get_or_raise(dialect).NULL_ORDERING
    first = nulls == ("nulls_are_large" if descending else "nulls_are_small")
    return exp.Ordered(this=value, desc=descending, nulls_first=first)


@lru_cache(maxsize=4096)  # a semantic model's expressions, parsed once (callers get copies)
def _parsed(text: str, dialect: str) -> tuple[exp.Expression, ...]:
    return tuple(tree for tree in sqlglot.parse(text, read=dialect) if tree is not None)


class Sources:
    def __init__(self, model: SemanticModel, dialect: str, catalog: DbInfo | None = None,
                 folds_case: bool = False) -> None:
        self.model = model
        self.dialect = dialect
        self.catalog = catalog if catalog is not None and catalog.tables else None
        self.folds_case = folds_case

    # -- names -------------------------------------------------------------------------------
    def identifier(self, name: str, quoted: bool = False) -> exp.Identifier:
        """``name`` as an identifier, quoted when it must be (not a plain name, or mixed case
        on a backend that folds unquoted names)."""
        must = quoted or not _PLAIN.match(name) or (self.folds_case and name != name.lower())
        return exp.to_identifier(name, quoted=must)

    def _table_info(self, table: Table) -> TableInfo | None:
        if self.catalog is None or table.relation is None:
            return None
        info = self.catalog.table(table.relation)
        if info is None:
            raise MetricQueryError(
                f"Semantic model '{table.name}' reads table '{table.relation}', which is not "
                f"in the database (or its schema cache); fix the semantic model, or run "
                f"annotate-schema if the table is new.")
        return info

    def relation(self, table: Table, alias: str) -> exp.Expression:
        """``table``'s relation (or SELECT) as ``alias``."""
        if table.sql is not None:
            try:
                query = sqlglot.parse_one(table.sql, read=self.dialect)
            except ParseError as exc:
                raise MetricQueryError(f"Cube '{table.name}' ({table.file}): its sql does not "
                                       f"parse ({str(exc).splitlines()[0]}).") from None
            return exp.Subquery(this=query, alias=exp.TableAlias(this=self.identifier(alias)))
        info = self._table_info(table)
        parts = [info.schema_name, info.relation_name] if info is not None and info.table_name \
            else [info.name] if info is not None else str(table.relation).split(".")
        names = [self.identifier(part) for part in parts if part]
        node = exp.Table(this=names[-1], db=names[-2] if len(names) > 1 else None,
                         catalog=names[-3] if len(names) > 2 else None)
        return exp.alias_(node, self.identifier(alias), table=True)

    # -- expressions -------------------------------------------------------------------------
    def expr(self, sql: str, owners: dict[str, tuple[str, Table]], default: str | None,
             where: str) -> exp.Expression:
        """``sql`` parsed: ``{name}`` is the table ``owners[name]`` (alias, table), ``{CUBE}``
        included; an unqualified column belongs to ``owners[default]``."""
        text = REFERENCE.sub(lambda m: _PLACEHOLDER + m.group(1) + (
            f".{m.group(2)}" if m.group(2) else ""), self._members(sql, owners, where))
        tree = parse_expression(text, self.dialect, f"{where}: the SQL {sql!r}")
        for column in list(tree.find_all(exp.Column)):
            if column.find_ancestor(exp.Query) is not None:
                continue  # a subquery's own columns
            if not column.table and (text := _label(column.name)) is not None:  # a case label
                label = exp.Literal.string(text)
                if column is tree:
                    tree = label
                else:
                    column.replace(label)
                continue
            if column.table.startswith(_PLACEHOLDER):
                owner = column.table.removeprefix(_PLACEHOLDER)
                if owner not in owners:
                    raise MetricQueryError(f"{where}: {sql!r} refers to '{{{owner}}}', which "
                                           f"is not a table of this expression.")
            elif column.table or default not in owners:
                continue  # qualified by the source itself
            else:
                owner = default
            alias, table = owners[owner]
            column.set("table", self.identifier(alias))
            column.set("db", None)
            column.set("this", self._column(table, column.this, where))
        return tree

    def _members(self, sql: str, owners: dict[str, tuple[str, Table]], where: str) -> str:
        """Cube's ``{cube.dimension}`` (in a join): the dimension's own SQL over that cube."""

        def replace(match: re.Match[str]) -> str:
            cube, member = match.groups()
            alias, table = owners.get(cube, ("", None))
            if member is None or table is None or table.naming != "cube" \
                    or member not in table.dimensions:
                return match.group(0)
            value = self.table_expr(table, table.dimensions[member].expr, alias, where)
            return f"({value.sql(dialect=self.dialect)})"

        return REFERENCE.sub(replace, sql)

    def _column(self, table: Table, name: exp.Identifier, where: str) -> exp.Identifier:
        info = self._table_info(table)
        if info is None:
            return name
        column = info.column(name.name)
        if column is None:
            raise MetricQueryError(f"{where}: column '{name.name}' is not in table "
                                   f"'{info.name}'; fix the semantic model (or run "
                                   f"annotate-schema if the column is new).")
        return self.identifier(column.name, quoted=name.quoted and column.name != name.name)

    def table_expr(self, table: Table, sql: str, alias: str, where: str) -> exp.Expression:
        return self.expr(sql, {"CUBE": (alias, table), "": (alias, table)}, "", where)

    def join_condition(self, source: Table, source_alias: str, link: Link,
                       target_alias: str) -> exp.Expression:
        target = self.model.tables[link.target]
        where = f"join of '{source.name}' to '{target.name}'"
        if link.condition is None:
            pairs = [exp.EQ(this=self.table_expr(source, left, source_alias, where),
                            expression=self.table_expr(target, right, target_alias, where))
                     for left, right in link.keys]
            return exp.and_(*pairs)
        owners = {source.name: (source_alias, source), target.name: (target_alias, target)}
        owners["CUBE"] = owners[link.owner or source.name]
        return self.expr(link.condition, owners, None, where)

    # -- joins -------------------------------------------------------------------------------
    def path(self, start: str, target: str, entities: tuple[str, ...] = (),
             via: tuple[str, ...] = (), fanning: bool = False) -> list[Link] | None:
        """The links from ``start`` to ``target`` (many-to-one only): through ``entities`` in
        order when more than one is named (a dbt multi-hop name), along a Cube view's join
        path ``via`` when ``start`` is on it before ``target``, else the shortest path (the
        first declared wins a tie). ``fanning``: Cube joins may also be walked back, from the
        one side to the many (each such step a link to the table that holds the join). None
        when there is none."""
        if start == target:
            return []
        if start in via and target in via[via.index(start) + 1:]:
            links = []
            for here, there in zip(via[via.index(start):], via[via.index(start) + 1:]):
                link = next((l for l in self._links(here, fanning) if l.target == there), None)
                if link is None:
                    return None
                links.append(link)
                if there == target:
                    return links
        if len(entities) > 1:
            links, here = [], start
            for entity in entities:
                link = next((l for l in self.model.tables[here].links if l.entity == entity),
                            None)
                if link is None:
                    return None
                links.append(link)
                here = link.target
            return links if here == target else None
        queue: deque[tuple[str, list[Link]]] = deque([(start, [])])
        seen = {start}
        while queue:
            here, links = queue.popleft()
            if len(links) >= MAX_HOPS:
                continue
            for link in self._links(here, fanning):
                if link.target in seen:
                    continue
                if link.target == target:
                    return [*links, link]
                seen.add(link.target)
                queue.append((link.target, [*links, link]))
        return None

    def _links(self, table: str, fanning: bool) -> list[Link]:
        """``table``'s many-to-one links; ``fanning``: also each Cube join to it walked back."""
        links = self.model.tables[table].links
        return [*links, *self.model.joins_back(table)] if fanning else links

