"""One aggregating SELECT of a metric query: the rows of one table, many-to-one joins to the
tables its group-bys and filters need (LEFT JOIN: a row without a dimension row stays, grouped
under NULL), the query's and the metrics' filters, grouped by the group-bys, with one aggregate
per measure. Many-to-one joins never repeat a row, so a measure is never counted twice; a Cube
join walked back (one row meeting many) makes the rows distinct first, by the table's primary
key (``PartBuilder._fanned``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from sqlglot import exp

from nl2sql.errors import MetricQueryError
from nl2sql.semantic.model import (DATE_PARTS, GRAINS, Dimension, Link, Measure, NonAdditive,
                                   Table, TimeSpine, Window)
from nl2sql.semantic.names import GroupBy, read_templates, resolve
from nl2sql.semantic.sources import Sources, parse_expression, true_division
from nl2sql.semantic.metric_sql import MONTHS, MetricSql


#: How a metric's value reaches a measure of a part: (part, measure) -> expression.
Ref = Callable[["Part", str], exp.Expression]


@dataclass
class Part:
    """The measures of one table read under the same filters (and, with ``metric_time``
    grouped, the same time dimension): one SELECT."""

    table: Table
    filters: tuple[str, ...]
    time_dimension: str | None
    columns: dict[str, str] = field(default_factory=dict)  # measure -> column name
    name: str = ""  # its CTE's name, when it is one
    #: Its measures' ``non_additive_dimension`` (measures with another are parts of their own).
    non_additive: NonAdditive | None = None

    def column(self, measure: str) -> str:
        if measure not in self.columns:
            taken = set(self.columns.values())
            name, n = measure, 2
            while name in taken:
                name, n = f"{measure}_{n}", n + 1
            self.columns[measure] = name
        return self.columns[measure]


class Joins:
    """The FROM clause of one part: its table and the tables joined to it, one alias per
    path."""

    def __init__(self, sources: Sources, table: Table, time: str | None = None) -> None:
        self.sources = sources
        self.table = table
        self.alias = table.name
        #: The rows' time dimension (the measures' ``agg_time_dimension``): a slowly
        #: changing dimension's table is joined on the version valid at it.
        self.time = time
        self.clauses: list[exp.Join] = []
        self._aliases: dict[tuple[tuple[str, str, str | None, str | None], ...], str] = {}
        self._taken = {table.name}
        #: A join walked back (one row of the table meets many): see ``PartBuilder._fanned``.
        self.fanned = False
        self._metric_filters: dict[tuple[str, str], str] = {}  # (metric, by) -> alias
        self._spines: dict[tuple[str, str], str] = {}  # (spine, the day's SQL) -> alias

    def time_spine(self, spine: TimeSpine, day: exp.Expression) -> str:
        """The alias of ``spine``'s table LEFT JOINed on its day column equal to ``day`` (the
        rows' day), once per spine and day."""
        key = (spine.table.name, day.sql())
        found = self._spines.get(key)
        if found is None:
            found = self._spines[key] = self._fresh("time_spine")
            own = self.sources.table_expr(spine.table, spine.day, found,
                                          f"the time spine '{spine.table.name}'")
            self.clauses.append(exp.Join(this=self.sources.relation(spine.table, found),
                                         on=exp.EQ(this=own, expression=day), side="LEFT"))
        return found

    def metric_filter(self, metric: str, by: GroupBy, key: exp.Expression,
                      values: Callable[[], exp.Select]) -> str:
        """The alias of ``values`` (``metric`` per ``by``, an entity or a cube's primary key,
        from ``MetricValues``) LEFT JOINed on its ``by`` column equal to ``key`` (the row's),
        once per metric and ``by``."""
        found = self._metric_filters.get((metric, by.name))
        if found is None:
            found = self._metric_filters[metric, by.name] = self._fresh("metric_filter")
            entity = exp.column(self.sources.identifier(by.name), found)
            self.clauses.append(exp.Join(
                this=exp.Subquery(this=values(), alias=exp.TableAlias(
                    this=self.sources.identifier(found))),
                on=exp.EQ(this=entity, expression=key), side="LEFT"))
        return found

    def _fresh(self, name: str) -> str:
        """``name`` as a new alias of this FROM clause (``name_2``... when taken)."""
        alias, n = name, 2
        while alias in self._taken:
            alias, n = f"{name}_{n}", n + 1
        self._taken.add(alias)
        return alias

    def alias_for(self, links: list[Link]) -> str:
        key: tuple[tuple[str, str, str | None, str | None], ...] = ()
        source, source_alias = self.table, self.alias
        for link in links:
            key = (*key, (source.name, link.target, link.entity, link.condition))
            target = self.sources.model.tables[link.target]
            if key not in self._aliases:
                alias = self._aliases[key] = self._fresh(target.name)
                condition = self.sources.join_condition(source, source_alias, link, alias)
                if target.validity is not None:
                    condition = exp.and_(condition, self._valid_at(target, alias))
                self.clauses.append(exp.Join(this=self.sources.relation(target, alias),
                                             on=condition, side="LEFT"))
            source, source_alias = target, self._aliases[key]
        return source_alias

    def _valid_at(self, target: Table, alias: str) -> exp.Expression:
        """The version of a slowly changing dimension's row valid at the rows' time: ``start
        <= time`` and ``time < end`` (or no end), as dbt's MetricFlow joins it."""
        where = f"the validity window of '{target.name}'"
        if self.time is None:
            raise MetricQueryError(f"'{target.name}' keeps versions of its rows "
                                   f"(validity_params): joining it needs the time of the rows "
                                   f"of '{self.table.name}' (agg_time_dimension).")
        dimension = self.table.dimensions.get(self.time)
        if dimension is None:
            raise MetricQueryError(f"{where}: '{self.time}' is not a dimension of "
                                   f"'{self.table.name}'.")
        time = self.sources.table_expr(self.table, dimension.expr, self.alias, where)
        start, end = (self.sources.table_expr(target, sql, alias, where)
                      for sql in target.validity or ())
        return exp.and_(exp.LTE(this=start, expression=time),
                        exp.or_(exp.GT(this=end, expression=time.copy()),
                                exp.Is(this=end.copy(), expression=exp.Null())))


def parse_condition(text: str, dialect: str) -> exp.Expression:
    """A ``where`` condition over group-by names (dbt's templates read as names)."""
    tree = parse_expression(read_templates(text), dialect, f"The filter {text!r}")
    if tree.find(exp.Query, exp.AggFunc, exp.Window, exp.Star):
        raise MetricQueryError(f"The filter {text!r} must be a condition on group-by names "
                               f"(customer__country = 'US'), without subqueries or aggregates.")
    return tree


def condition_names(tree: exp.Expression) -> list[str]:
    """The group-by names a parsed filter uses."""
    return list(dict.fromkeys(".".join(p.name for p in column.parts)
                              for column in tree.find_all(exp.Column)))


#: A metric's value per entity for a metric filter: (metric, the entity's group-by) -> a
#: SELECT of the entity (named as the group-by) and ``METRIC_VALUE``.
MetricValues = Callable[[str, GroupBy], exp.Select]
#: The column of a metric filter's value.
METRIC_VALUE = "nl2sql_metric_value"


class PartBuilder:
    def __init__(self, sources: Sources, metric_sql: MetricSql,
                 metric_values: MetricValues | None = None) -> None:
        self.sources = sources
        self.metric_sql = metric_sql
        self.metric_values = metric_values

    def select(self, part: Part, group_bys: list[GroupBy], where: list[str],
               values: dict[str, Callable[[Ref], exp.Expression]] | None = None) -> exp.Select:
        """The part's SELECT: group-bys, then ``values`` (output name -> its expression over
        the part's aggregates, when the query is this one part) or one column per measure."""
        joins = Joins(self.sources, part.table, part.time_dimension)
        keys = [self.group_by(part, gb, joins) for gb in group_bys]
        conditions = [self.condition(part, text, joins) for text in [*where, *part.filters]]
        if joins.fanned:
            return self._fanned(part, group_bys, keys, conditions, joins, values)
        outputs = [exp.alias_(key, self.sources.identifier(gb.name))
                   for key, gb in zip(keys, group_bys)]
        if values is None:
            outputs += [exp.alias_(self.aggregate(part, measure, joins),
                                   self.sources.identifier(column))
                        for measure, column in part.columns.items()]
        else:
            def ref(of: Part, measure: str) -> exp.Expression:
                return self.aggregate(of, measure, joins)

            outputs += [exp.alias_(value(ref), self.sources.identifier(name))
                        for name, value in values.items()]
        select = self._from(part, joins, outputs, conditions, group_bys)
        return select.group_by(*[key.copy() for key in keys], copy=False) if keys else select

    def rows(self, part: Part, group_bys: list[GroupBy], where: list[str],
             columns: dict[str, str]) -> exp.Select:
        """The part's rows, not aggregated (a conversion metric's events): each group-by's
        value and each of ``columns`` (output name -> SQL over the table's own columns), under
        ``where`` and the part's filters."""
        joins = Joins(self.sources, part.table, part.time_dimension)
        keys = [self.group_by(part, gb, joins) for gb in group_bys]
        conditions = [self.condition(part, text, joins) for text in [*where, *part.filters]]
        outputs = [exp.alias_(key, self.sources.identifier(gb.name))
                   for key, gb in zip(keys, group_bys)]
        outputs += [exp.alias_(self.sources.table_expr(part.table, sql, joins.alias,
                                                       f"'{part.table.name}'"),
                               self.sources.identifier(name)) for name, sql in columns.items()]
        return self._from(part, joins, outputs, conditions, group_bys)

    def _from(self, part: Part, joins: Joins, outputs: list[exp.Expression],
              conditions: list[exp.Expression], group_bys: list[GroupBy]) -> exp.Select:
        relation = self.sources.relation(part.table, joins.alias)
        if part.non_additive is not None:
            relation, condition = self._non_additive(part, part.non_additive, joins.alias,
                                                     relation, group_bys)
            conditions = [condition, *conditions]
        select = exp.select(*outputs).from_(relation, copy=False)
        for clause in joins.clauses:
            select = select.join(clause, copy=False)
        return select.where(exp.and_(*conditions), copy=False) if conditions else select

    def _fanned(self, part: Part, group_bys: list[GroupBy], keys: list[exp.Expression],
                conditions: list[exp.Expression], joins: Joins,
                values: dict[str, Callable[[Ref], exp.Expression]] | None) -> exp.Select:
        """The part's SELECT when a group-by or filter is reached through a Cube join walked
        back (one row of the table meets many): Cube's rule, each row counted once per
        group. The rows are made distinct first (the group-bys, the table's primary key and
        each measure's value), then aggregated."""
        table = part.table
        if not table.primary_key:
            raise MetricQueryError(
                f"'{table.name}' meets several rows of a joined cube for one of its own: "
                f"counting its measures once per group needs its primary key (a dimension "
                f"with primary_key: true).")
        where = f"the primary key of '{table.name}'"
        inner = [exp.alias_(key, self.sources.identifier(f"g{i}")) for i, key in enumerate(keys)]
        inner += [exp.alias_(self.sources.table_expr(table, table.dimensions[name].expr,
                                                     joins.alias, where),
                             self.sources.identifier(f"k{i}"))
                  for i, name in enumerate(table.primary_key)]
        rows: dict[str, Measure] = {}
        for measure in part.columns:  # every measure ``values`` reads is one of them
            rows[measure] = self._row_measure(part, measure, joins, inner)
        distinct = self._from(part, joins, inner, conditions, group_bys).distinct(copy=False)
        fanned = exp.Subquery(this=distinct, alias=exp.TableAlias(this=self.sources.identifier(
            "fanned")))
        outer_keys = [exp.column(self.sources.identifier(f"g{i}"), "fanned")
                      for i in range(len(keys))]
        outputs = [exp.alias_(key, self.sources.identifier(gb.name))
                   for key, gb in zip(outer_keys, group_bys)]

        def ref(of: Part, name: str) -> exp.Expression:
            measure = rows[name]
            value = None if measure.expr is None else exp.column(
                self.sources.identifier(measure.expr), "fanned")
            return aggregate(measure, value, [], self.metric_sql)

        if values is None:
            outputs += [exp.alias_(ref(part, name), self.sources.identifier(column))
                        for name, column in part.columns.items()]
        else:
            outputs += [exp.alias_(value(ref), self.sources.identifier(name))
                        for name, value in values.items()]
        select = exp.select(*outputs).from_(fanned, copy=False)
        return select.group_by(*[key.copy() for key in outer_keys], copy=False) \
            if keys else select

    def _non_additive(self, part: Part, rule: NonAdditive, alias: str, relation: exp.Expression,
                      group_bys: list[GroupBy]) -> tuple[exp.Expression, exp.Expression]:
        """The part's table with each row's window value (the first or last value of the
        non-additive time dimension within the query's period and the rule's entities, as
        dbt's MetricFlow reads it), under the same alias, and the condition keeping only the
        rows at it."""
        table = part.table
        where = f"the non_additive_dimension of '{table.name}'"
        dimension = table.dimensions[rule.dimension]
        value = self.sources.table_expr(table, dimension.expr, alias, where)
        partition: list[exp.Expression] = []
        for gb in group_bys:
            if gb.date_part is not None or gb.custom_grain is not None:
                raise MetricQueryError(f"'{gb.name}': {where} is read per period; group by a "
                                       f"grain (metric_time__month...) instead.")
            if gb.metric_time:
                own = table.dimensions.get(part.time_dimension or "")
                if own is None:
                    raise MetricQueryError(f"'{gb.name}': {where} needs the measure's time "
                                           f"dimension in '{table.name}' itself.")
            elif gb.table == table.name and gb.grain is not None and not gb.path[:-1]:
                own = table.dimensions[gb.dimension or ""]
            else:
                continue
            period = self.sources.table_expr(table, own.expr, alias, where)
            partition.append(self.metric_sql.truncate(period, gb.grain or own.grain or "day"))
        partition += [self.sources.table_expr(table, table.entities[name][1], alias, where)
                      for name in rule.groupings]
        chosen = (exp.Max if rule.choice == "max" else exp.Min)(this=value.copy())
        window = exp.Window(this=chosen, partition_by=partition or None)
        marker = self.sources.identifier(_WINDOW_VALUE)
        inner = exp.select(exp.Column(this=exp.Star(), table=self.sources.identifier(alias)),
                           exp.alias_(window, marker)).from_(relation, copy=False)
        derived = exp.Subquery(this=inner,
                               alias=exp.TableAlias(this=self.sources.identifier(alias)))
        return derived, exp.EQ(this=value, expression=exp.column(marker.copy(), alias))

    def _row_measure(self, part: Part, name: str, joins: Joins,
                     inner: list[exp.Expression]) -> Measure:
        """Measure ``name`` as the aggregate of one column of the distinct rows (added to
        ``inner``): its value on a row, its filters folded in (NULL where they do not hold)."""
        measure = part.table.measures[name]
        where = f"measure '{measure.name}' of '{part.table.name}'"
        if measure.agg is None:
            raise MetricQueryError(f"{where}: an aggregate expression cannot be counted once "
                                   f"per group across a join to several rows; group by "
                                   f"dimensions reached through many-to-one joins.")
        value = None if measure.expr is None else \
            self.sources.table_expr(part.table, measure.expr, joins.alias, where)
        filters = [self.sources.table_expr(part.table, f, joins.alias, where)
                   for f in measure.filters]
        if filters:
            value = exp.Case().when(exp.and_(*filters), value or exp.Literal.number(1))
        if value is None:
            return replace(measure, filters=())
        column = f"v{len(inner)}"
        inner.append(exp.alias_(value, self.sources.identifier(column)))
        return replace(measure, expr=column, filters=())

    def aggregate(self, part: Part, name: str, joins: Joins) -> exp.Expression:
        measure = part.table.measures[name]
        where = f"measure '{measure.name}' of '{part.table.name}'"
        value = None if measure.expr is None else \
            self.sources.table_expr(part.table, measure.expr, joins.alias, where)
        if measure.agg is None:
            if value is None or measure.filters:
                raise MetricQueryError(f"{where}: an aggregate expression needs sql and no "
                                       f"filters.")
            return true_division(value)
        return aggregate(measure, value, [self.sources.table_expr(part.table, f, joins.alias,
                                                                  where)
                                          for f in measure.filters], self.metric_sql)

    def group_by(self, part: Part, gb: GroupBy, joins: Joins) -> exp.Expression:
        if gb.metric is not None:  # a metric filter: the metric for the row's entity
            entity = replace(gb, metric=None, name=gb.entity or "")
            return self._metric_value(gb.metric, entity, self.group_by(part, entity, joins),
                                      joins, gb)
        if gb.metric_time:
            if part.time_dimension is None:
                raise MetricQueryError(
                    f"'{gb.name}': a measure of '{part.table.name}' has no time dimension "
                    f"(agg_time_dimension); group by another dimension or add one.")
            if "__" in part.time_dimension:  # nl2sql's extension: through an entity
                through = resolve(self.sources.model, part.time_dimension)
                return self.group_by(part, replace(
                    through, name=gb.name, date_part=gb.date_part, custom_grain=gb.custom_grain,
                    grain=None if gb.date_part or gb.custom_grain else gb.grain or through.grain),
                    joins)
            table, alias = part.table, joins.alias
            dimension = table.dimensions.get(part.time_dimension)
            if dimension is None:
                raise MetricQueryError(f"'{part.table.name}': agg_time_dimension "
                                       f"'{part.time_dimension}' is not one of its dimensions.")
        else:
            assert gb.table is not None
            links = self.sources.path(part.table.name, gb.table, gb.path, gb.via)
            if links is None and part.table.naming == "cube":  # one row meeting many
                links = self.sources.path(part.table.name, gb.table, via=gb.via, fanning=True)
                joins.fanned = joins.fanned or links is not None
            if links is None:
                raise MetricQueryError(
                    f"'{gb.name}' cannot group a measure of '{part.table.name}': no many-to-one "
                    f"join path leads from it to '{gb.table}' (it would count rows twice).")
            table, alias = self.sources.model.tables[gb.table], joins.alias_for(links)
            if gb.entity is not None:
                return self.sources.table_expr(table, table.key_of(gb.entity) or gb.entity,
                                               alias, f"entity '{gb.entity}'")
            dimension = table.dimensions[gb.dimension or ""]
            if dimension.metric is not None:  # Cube's sub_query: a measure per row of ``table``
                return self._measured(table, alias, dimension.metric, joins, gb)
        value = self.sources.table_expr(table, dimension.expr, alias,
                                        f"dimension '{dimension.name}' of '{table.name}'")
        if gb.custom_grain is not None:  # the time spine's label for the row's day
            spine = self.sources.model.custom_grain(gb.custom_grain)
            assert spine is not None  # resolve() found it
            alias = joins.time_spine(spine, self.metric_sql.truncate(value, "day"))
            return self.sources.table_expr(spine.table, spine.grains[gb.custom_grain], alias,
                                           f"the time spine '{spine.table.name}'")
        if gb.date_part is not None:
            finest = DATE_PARTS[gb.date_part]
            if dimension.grain and GRAINS.index(finest) < GRAINS.index(dimension.grain):
                raise MetricQueryError(f"'{gb.name}': {dimension.name} holds "
                                       f"{dimension.grain}s; its {gb.date_part} is not known.")
            return self.metric_sql.date_part(value, gb.date_part)
        grain = gb.grain or dimension.grain
        if gb.shift is not None and dimension.is_time and grain:  # a fiscal year from February
            return self._shifted(value, grain, gb.shift)
        return self.metric_sql.truncate(value, _checked(grain, dimension, gb)) \
            if dimension.is_time and grain else value

    def _shifted(self, value: exp.Expression, grain: str, offset: Window) -> exp.Expression:
        """The first day of ``value``'s period of ``grain`` starting ``offset`` later (Cube's
        custom granularity): ``truncate(day - offset) + offset``, from the value's month (or
        day) start, so that a month's shift never overflows (31 March less a month)."""
        start = self.metric_sql.truncate(value, "month" if offset.grain in MONTHS else "day")
        moved = self.metric_sql.truncate(self.metric_sql.shift(start, offset, -1), grain)
        return self.metric_sql.shift(moved, offset, 1)

    def _measured(self, table: Table, alias: str, metric: str, joins: Joins,
                  gb: GroupBy) -> exp.Expression:
        """A Cube ``sub_query`` dimension's value on the rows of ``table`` (as ``alias``):
        ``metric`` per the cube's primary key, joined on it."""
        if len(table.primary_key) != 1:
            raise MetricQueryError(f"'{gb.name}' is a measure per row of '{table.name}' (a "
                                   f"sub_query dimension): it needs the cube's primary key, "
                                   f"one dimension with primary_key: true.")
        key = table.primary_key[0]
        by = GroupBy(f"{table.name}.{key}", table=table.name, dimension=key)
        value = self.sources.table_expr(table, table.dimensions[key].expr, alias,
                                        f"the primary key of '{table.name}'")
        return self._metric_value(metric, by, value, joins, gb)

    def _metric_value(self, metric: str, by: GroupBy, key: exp.Expression, joins: Joins,
                      gb: GroupBy) -> exp.Expression:
        """``metric`` per ``by`` for the row whose ``by`` is ``key`` (``MetricValues``)."""
        if self.metric_values is None:
            raise MetricQueryError(f"'{gb.name}' is a metric's value: it is read in a metric "
                                   f"query only.")
        values = self.metric_values
        alias = joins.metric_filter(metric, by, key, lambda: values(metric, by))
        return exp.column(self.sources.identifier(METRIC_VALUE), alias)

    def condition(self, part: Part, text: str, joins: Joins) -> exp.Expression:
        """A filter with each group-by name replaced by its SQL for this part."""
        tree = parse_condition(text, self.sources.dialect)
        for column in list(tree.find_all(exp.Column)):
            gb = resolve(self.sources.model, condition_names(column)[0])
            value = self.group_by(part, gb, joins)
            if column is tree:  # the filter is one true/false name (a Cube segment)
                tree = value
            else:
                column.replace(value)
        return exp.paren(tree) if isinstance(tree, exp.Or) else tree


def _checked(grain: str, dimension: Dimension, gb: GroupBy) -> str:
    if dimension.grain and GRAINS.index(grain) < GRAINS.index(dimension.grain):
        raise MetricQueryError(f"'{gb.name}': {dimension.name} holds {dimension.grain}s; use "
                               f"{dimension.grain} or a coarser grain.")
    return grain


def aggregate(measure: Measure, value: exp.Expression | None,
              filters: list[exp.Expression], metric_sql: MetricSql) -> exp.Expression:
    """``SUM(x)``, ``COUNT(DISTINCT x)``...; a measure's own filters keep only the rows they
    hold (``SUM(CASE WHEN <filter> THEN x END)``)."""
    if measure.agg == "sum_boolean" and value is not None:
        value = exp.Case().when(value, exp.Literal.number(1)).else_(exp.Literal.number(0))
    if filters:
        value = exp.Case().when(exp.and_(*filters), value or exp.Literal.number(1))
    if value is None:
        if measure.agg != "count":
            raise MetricQueryError(f"measure '{measure.name}' ({measure.agg}) needs an expr.")
        return exp.Count(this=exp.Star())
    match measure.agg:
        case "sum" | "sum_boolean":
            return exp.Sum(this=value)
        case "count":
            return exp.Count(this=value)
        case "count_distinct":
            return exp.Count(this=exp.Distinct(expressions=[value]))
        case "average":
            return exp.Avg(this=value)
        case "min":
            return exp.Min(this=value)
        case "percentile" | "median":
            return _percentile(measure, value, metric_sql)
        case _:
            return exp.Max(this=value)


def _percentile(measure: Measure, value: exp.Expression,
                metric_sql: MetricSql) -> exp.Expression:
    """The measure's percentile (``median``: the 50th, interpolated) as the engine computes
    it exactly."""
    fraction = 0.5 if measure.agg == "median" else measure.percentile or 0.0
    found = metric_sql.percentile(value, fraction,
                                  measure.agg == "percentile" and measure.discrete)
    if found is None:
        raise MetricQueryError(f"measure '{measure.name}' ({measure.agg}): this database has no "
                               f"percentile aggregate (PostgreSQL, DuckDB and Spark do); "
                               f"write SQL instead.")
    return found


#: The column of a non-additive measure's window value (``PartBuilder._non_additive``).
_WINDOW_VALUE = "nl2sql_window_value"
