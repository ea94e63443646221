"""A metric query compiled to one read-only SELECT in the database's dialect, deterministically
(the same query and semantic model give the same SQL, byte for byte).

The measures the metrics need are grouped into parts (one table, the same filters: one
aggregating SELECT each, ``parts.py``). One part and nothing cumulative or offset: that SELECT
is the query, the metrics computed over its aggregates. Otherwise each part is a CTE, their
rows are combined on the group-bys (the union of their keys, each part LEFT JOINed on it with
NULL-safe equality: no FULL OUTER JOIN, which MySQL lacks), and on top:
- ratio: ``CAST(numerator AS DOUBLE) / NULLIF(denominator, 0)``;
- derived: its expression over the inputs (``/`` dividing as a ratio does, whatever the
  backend's integer division); an input with ``offset_window`` is compiled on its
  own and joined on the period ``offset`` earlier, one with ``offset_to_grain`` per day, joined
  on the day the grain (the month) holding each period began (MetricFlow's reading);
- cumulative: a running total over the time group-by (restarting every ``grain_to_date``), or
  with a ``window`` the sum of the periods within it (a self-join of its part): each period's
  value at its end; a dbt metric's ``period_agg: first`` (dbt's default) by a grain coarser
  than a day takes each period's first day instead (the part's rows per day joined to the
  periods, up to each one's first day);
- conversion: the base events (each with the group-bys' values) joined to the conversion
  events of the same entity on their day or after, before the window has passed (a 7-day
  window: up to 6 days after, as MetricFlow joins them), each conversion event kept once,
  for the latest base event before it, as MetricFlow matches them; the conversions per group
  (0 where none came) over the base measure's value.
Filters apply to rows, before aggregation; periods without rows are not listed, but with a
metric's ``join_to_timespine`` every period from the first to the last is (its value
``fill_nulls_with``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlglot import exp

from nl2sql.errors import MetricQueryError
from nl2sql.semantic.model import GRAINS, Metric, MetricInput, NonAdditive, SemanticModel, Window
from nl2sql.semantic.names import GroupBy, metric_named, parse_order, resolve
from nl2sql.semantic.parts import (METRIC_VALUE, Part, PartBuilder, Ref, condition_names,
                                   parse_condition)
from nl2sql.semantic.sources import Sources, ordered, parse_expression, true_division
from nl2sql.semantic.conversion import CONVERSIONS, conversions, counted
from nl2sql.semantic.metric_sql import MetricSql, whole_multiple
from nl2sql.semantic.time_spine import filled

#: A metric's value, given how to reach a measure of a part.
Value = Callable[[Ref], exp.Expression]
_RUNNING = {"sum": exp.Sum, "count": exp.Sum, "min": exp.Min, "max": exp.Max}


@dataclass(frozen=True)
class MetricQuery:
    metrics: tuple[str, ...]
    group_by: tuple[str, ...] = ()
    where: tuple[str, ...] = ()
    order_by: tuple[str, ...] = ()
    limit: int | None = None


@dataclass(frozen=True)
class CompiledQuery:
    sql: str
    metrics: tuple[str, ...]
    columns: tuple[str, ...]
    tables: tuple[str, ...]  # the semantic models (tables) it reads


def compile_query(model: SemanticModel, query: MetricQuery, *, dialect: str,
                  metric_sql: MetricSql, sources: Sources) -> CompiledQuery:
    if not query.metrics:
        raise MetricQueryError("Name at least one metric (metrics_list shows them).")
    metrics = [metric_named(model, name) for name in dict.fromkeys(query.metrics)]
    group_bys = [resolve(model, name) for name in dict.fromkeys(query.group_by)]
    defaults = {m.time_granularity for m in metrics if m.time_granularity}
    if len(defaults) == 1:  # dbt's time_granularity: the grain of a bare metric_time
        grain = defaults.pop()
        group_bys = [replace(gb, grain=grain) if gb.is_time and gb.grain is None else gb
                     for gb in group_bys]
    for text in query.where:
        for name in condition_names(parse_condition(text, dialect)):
            resolve(model, name)  # an unknown name fails before any SQL is built
    compiler = _Compiler(model, sources, metric_sql)
    select = compiler.select([(m.name, m, ()) for m in metrics], group_bys, list(query.where))
    columns = [gb.name for gb in group_bys] + [m.name for m in metrics]
    orders = [parse_order(item, columns) for item in query.order_by] or \
        [(gb.name, False) for gb in group_bys]
    for name, descending in orders:
        select = select.order_by(ordered(exp.column(sources.identifier(name)), dialect,
                                         descending), copy=False)
    if query.limit is not None:
        if query.limit < 0:
            raise MetricQueryError("limit must be 0 or more.")
        select = select.limit(query.limit, copy=False)
    for name, cte in compiler.ctes:
        select = select.with_(sources.identifier(name), as_=cte, copy=False)
    return CompiledQuery(select.sql(dialect=dialect, pretty=True), tuple(m.name for m in metrics),
                         tuple(columns), tuple(sorted(compiler.tables)))


class _Compiler:
    def __init__(self, model: SemanticModel, sources: Sources, metric_sql: MetricSql) -> None:
        self.model = model
        self.sources = sources
        self.metric_sql = metric_sql
        self.builder = PartBuilder(sources, metric_sql, self._metric_values)
        self.ctes: list[tuple[str, exp.Query]] = []
        self.tables: set[str] = set()
        self._filtering: set[str] = set()  # the metrics of the metric filters being compiled

    def _metric_values(self, name: str, entity: GroupBy) -> exp.Select:
        """Metric ``name`` per ``entity``, for a metric filter (``MetricValues``)."""
        if name in self._filtering:
            raise MetricQueryError(f"Metric '{name}' is filtered on its own value "
                                   f"(Metric('{name}', ...) in its filter); filter on another "
                                   f"metric.")
        self._filtering.add(name)
        try:
            return self.select([(METRIC_VALUE, metric_named(self.model, name), ())], [entity],
                               [])
        finally:
            self._filtering.discard(name)

    def cte(self, prefix: str, query: exp.Query) -> str:
        """Add a CTE named ``prefix`` (``prefix_2``... when taken); its name. Prefixes are
        words no backend reserves (PostgreSQL rejects an unquoted ``window`` or ``offset``)."""
        taken = {name for name, _ in self.ctes}
        name, n = prefix, 1
        while name in taken:
            n += 1
            name = f"{prefix}_{n}"
        self.ctes.append((name, query))
        return name

    def select(self, outputs: list[tuple[str, Metric, tuple[str, ...]]],
               group_bys: list[GroupBy], where: list[str]) -> exp.Select:
        """Group-bys plus one column per output (name, metric, inherited filters)."""
        plan = _Plan(self, group_bys, where)
        values = {name: plan.value(metric, filters) for name, metric, filters in outputs}
        if len(plan.parts) == 1 and not plan.combined:
            return self.builder.select(next(iter(plan.parts.values())), group_bys, where, values)
        return plan.combine(values)


@dataclass
class _Windowed:
    """A cumulative value per period: the running aggregate, up to each period (``a``), of
    the rows (``b``) within ``window`` or since the ``grain_to_date`` began (neither: since
    the start). ``anchored``: dbt's ``period_agg: first``, the value as of each period's first
    day, from the part's rows per day (its own grain) instead of per period."""

    part: Part
    column: str
    time: GroupBy
    window: Window | None
    running: type[exp.Func]
    grain_to_date: str | None = None
    anchored: bool = False
    days: str = ""  # anchored: the CTE of the part's rows per day
    name: str = ""  # its CTE, once made


@dataclass(frozen=True)
class _Offset:
    """An input read at another time: its CTE (the metric per ``column``, the time group-by or
    its day), joined where ``column`` is ``looked_up`` of the combined rows' ``time``."""

    cte: str
    time: GroupBy
    column: str
    looked_up: Callable[[exp.Expression], exp.Expression]


@dataclass
class _Converted:
    """A conversion metric's conversions per group, its CTE once made (``name``); ``filters``:
    the base events' (the metric's own and those a derived metric over it passes down; the
    query's ``where`` applies to them too)."""

    metric: Metric
    filters: tuple[str, ...]
    name: str = ""


class _Plan:
    """The parts, offsets and windows one SELECT needs, and how to combine them."""

    def __init__(self, compiler: _Compiler, group_bys: list[GroupBy], where: list[str]) -> None:
        self.compiler = compiler
        self.sources = compiler.sources
        self.group_bys = group_bys
        self.where = where
        self.parts: dict[tuple[str, tuple[str, ...], str | None, NonAdditive | None],
                         Part] = {}
        self.offsets: list[_Offset] = []
        self.windows: list[_Windowed] = []
        self.conversions: list[_Converted] = []
        self.spine = False  # a metric joins to the time spine: every period is listed
        self.combined = False  # cumulative, offset or window: the combined form
        self.base = ""  # the combined rows' CTE

    def key(self, gb: GroupBy) -> exp.Column:
        """A group-by's value in the combined rows."""
        return exp.column(self.sources.identifier(gb.name), self.base)

    # -- metric values -------------------------------------------------------------------------
    def value(self, metric: Metric, filters: tuple[str, ...]) -> Value:
        computed = self._value(metric, filters)
        if metric.join_to_timespine and self._spine_time() is not None:
            self.spine = self.combined = True
        if metric.fill_nulls_with is None:
            return computed
        fill = exp.Literal.number(metric.fill_nulls_with)
        return lambda ref: exp.Coalesce(this=computed(ref), expressions=[fill.copy()])

    def _value(self, metric: Metric, filters: tuple[str, ...]) -> Value:
        filters = tuple(sorted(set(filters) | set(metric.filters)))
        if metric.kind == "conversion":
            return self._conversion(metric, filters)
        if metric.kind in ("simple", "cumulative"):
            assert metric.measure is not None
            part, measure = self._part(metric.measure, filters)
            if metric.kind == "cumulative":
                return self._cumulative(metric, part, measure)
            return lambda ref: ref(part, measure)
        def input_value(item: MetricInput) -> Value:
            return self._input(item.metric, tuple(sorted(set(filters) | set(item.filters))),
                               item.offset, item.offset_to_grain)

        if metric.kind == "ratio":
            # each side on its own: a ratio of one metric filtered over itself names the same
            # metric twice (numerator: {name: orders, filter: ...}, denominator: orders)
            assert metric.numerator is not None and metric.denominator is not None
            numerator = input_value(metric.numerator)
            denominator = input_value(metric.denominator)
            return lambda ref: exp.Div(
                this=exp.cast(numerator(ref), exp.DataType.Type.DOUBLE),
                expression=exp.Nullif(this=denominator(ref), expression=exp.Literal.number(0)))
        inputs = {item.label: input_value(item) for item in metric.input_metrics()}
        template = true_division(parse_expression(
            metric.expr or "", self.sources.dialect,
            f"Metric '{metric.name}': its expr {metric.expr!r}"))

        def derived(ref: Ref) -> exp.Expression:
            tree = template.copy()
            for column in list(tree.find_all(exp.Column)):
                if not column.table and column.name in inputs:
                    value = inputs[column.name](ref)
                    if column is tree:  # the expression is one input alone (``revenue_prior``)
                        return value
                    column.replace(exp.paren(value) if isinstance(value, exp.Binary) else value)
            return tree

        return derived

    def _input(self, name: str, filters: tuple[str, ...], offset: Window | None,
               to_grain: str | None = None) -> Value:
        metric = metric_named(self.compiler.model, name)
        metric_sql = self.compiler.metric_sql
        if offset is not None:
            time = self._time_group_by(f"'{name}' offset by {offset}")
            if not whole_multiple(offset, time.grain or "day"):
                raise MetricQueryError(f"'{name}' offset by {offset}: not a whole number of "
                                       f"{time.grain}s; group by a finer grain.")
            read = time  # the metric per period, joined on the period ``offset`` earlier

            def looked_up(period: exp.Expression) -> exp.Expression:
                return metric_sql.shift(period, offset, -1)
        elif to_grain is not None:
            time = self._time_group_by(f"'{name}' offset to the {to_grain}'s start")
            # as MetricFlow reads it: the metric on the day the period's month (to_grain) began
            read = replace(time, grain=None, name=_day_name(time))

            def looked_up(period: exp.Expression) -> exp.Expression:
                return metric_sql.truncate(period, to_grain)
        else:
            return self.value(metric, filters)
        self.combined = True
        self.value(metric, filters)  # its own periods are the rows (when no input is unshifted)
        group_bys = [read if gb is time else gb for gb in self.group_bys]
        inner = self.compiler.select([("value", metric, filters)], group_bys, self.where)
        cte = self.compiler.cte("shifted", inner)
        self.offsets.append(_Offset(cte, time, read.name, looked_up))
        return lambda ref: exp.column("value", cte)

    def _part(self, ref: tuple[str, str], filters: tuple[str, ...]) -> tuple[Part, str]:
        table, measure = self.compiler.model.measure(ref)
        self.compiler.tables.add(table.name)
        time = measure.time_dimension  # metric_time may be grouped by or filtered on
        key = (table.name, filters, time, measure.non_additive)
        if key not in self.parts:
            self.parts[key] = Part(table, filters, time, non_additive=measure.non_additive)
        part = self.parts[key]
        part.column(measure.name)
        return part, measure.name

    def _conversion(self, metric: Metric, filters: tuple[str, ...]) -> Value:
        assert metric.measure is not None and metric.conversion is not None
        part, base = self._part(metric.measure, filters)
        table, measure = self.compiler.model.measure(metric.conversion.measure)
        self.compiler.tables.add(table.name)
        self.combined = True
        converted = _Converted(metric, filters)
        self.conversions.append(converted)

        def conversions() -> exp.Expression:
            return counted(exp.column(self.sources.identifier(CONVERSIONS), converted.name),
                           measure)

        if metric.conversion.calculation == "conversions":
            return lambda ref: conversions()
        return lambda ref: exp.Div(
            this=exp.cast(conversions(), exp.DataType.Type.DOUBLE),
            expression=exp.Nullif(this=ref(part, base), expression=exp.Literal.number(0)))

    def _spine_time(self) -> GroupBy | None:
        """The one time group-by a time spine lists every period of (None: not one)."""
        times = [gb for gb in self.group_bys if gb.is_time]
        return times[0] if len(times) == 1 else None

    def _time_group_by(self, what: str) -> GroupBy:
        times = [gb for gb in self.group_bys if gb.metric_time and gb.is_time] or \
            [gb for gb in self.group_bys if gb.is_time]
        if len(times) != 1:
            raise MetricQueryError(f"{what} needs one time group-by (metric_time__month...); "
                                   f"add it to the dimensions.")
        return times[0]

    def _cumulative(self, metric: Metric, part: Part, measure: str) -> Value:
        if not any(gb.is_time for gb in self.group_bys) and any(
                gb.date_part or gb.custom_grain for gb in self.group_bys):
            raise MetricQueryError(f"Cumulative metric '{metric.name}' runs over periods: group "
                                   f"by a grain (metric_time__month...), not only a date part "
                                   f"or a custom granularity.")
        if not any(gb.is_time for gb in self.group_bys) and metric.window is None:
            return lambda ref: ref(part, measure)  # no periods: the total of every row
        time = self._time_group_by(f"Cumulative metric '{metric.name}'")
        agg = part.table.measures[measure].agg
        running = _RUNNING.get(agg or "")
        if running is None:
            raise MetricQueryError(f"Cumulative metric '{metric.name}': a running {agg} cannot "
                                   f"be added up from periods (sum, count, min and max can).")
        grain = time.grain or "day"
        self.combined = True
        if grain != GRAINS[0] and metric.period_agg == "average":
            raise MetricQueryError(f"Cumulative metric '{metric.name}': period_agg average is "
                                   f"not compiled; group by metric_time__day, or set "
                                   f"period_agg first or last.")
        if grain != GRAINS[0] and metric.period_agg == "first":
            # dbt computes every day's value and keeps each period's first (its default)
            windowed = _Windowed(part, part.column(measure), time, metric.window, running,
                                 metric.grain_to_date, anchored=True)
            self.windows.append(windowed)
            return lambda ref: exp.column(self.sources.identifier(windowed.column),
                                          windowed.name)
        if metric.window is not None:
            if not whole_multiple(metric.window, grain):
                raise MetricQueryError(f"Cumulative metric '{metric.name}': its window "
                                       f"({metric.window}) is not a whole number of "
                                       f"{grain}s; group by a finer grain.")
            windowed = _Windowed(part, part.column(measure), time, metric.window, running)
            self.windows.append(windowed)
            return lambda ref: exp.column(self.sources.identifier(windowed.column),
                                          windowed.name)
        gtd = metric.grain_to_date
        if gtd and GRAINS.index(gtd) < GRAINS.index(grain):
            raise MetricQueryError(f"Cumulative metric '{metric.name}' restarts every {gtd}: "
                                   f"group by that grain or a finer one.")
        others = [gb for gb in self.group_bys if gb is not time]

        def total(ref: Ref) -> exp.Expression:
            partition = [self.key(gb) for gb in others]
            if gtd:
                partition.append(self.compiler.metric_sql.truncate(self.key(time), gtd))
            return exp.Window(
                this=running(this=ref(part, measure)), partition_by=partition or None,
                order=exp.Order(expressions=[ordered(self.key(time), self.sources.dialect)]),
                spec=exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING",
                                    end="CURRENT ROW"))

        return total

    # -- combining -----------------------------------------------------------------------------
    def combine(self, values: dict[str, Value]) -> exp.Select:
        parts = list(self.parts.values())
        if not parts:
            raise MetricQueryError("A derived metric needs at least one input without an "
                                   "offset_window.")
        for part in parts:
            part.name = self.compiler.cte("part", self.compiler.builder.select(
                part, self.group_bys, self.where))
        names = [self.sources.identifier(gb.name) for gb in self.group_bys]
        if len(parts) == 1 or not names:
            self.base = parts[0].name
        else:
            self.base = self.compiler.cte("keys", exp.union(
                *[exp.select(*[exp.column(n.copy()) for n in names]).from_(part.name, copy=False)
                  for part in parts], distinct=True))
        time = self._spine_time() if self.spine else None
        if time is not None:
            self.base = filled(self.base, time, self.group_bys, self.where, self.sources,
                               self.compiler.metric_sql, self.compiler.cte)
        select = exp.select().from_(self.base, copy=False)
        for part in parts:
            if part.name != self.base:
                select = self._join(select, part.name, self.group_bys) if names else \
                    select.join(exp.to_table(part.name), join_type="CROSS", copy=False)
        days: dict[int, str] = {}  # a part's rows per day: one CTE for its anchored metrics
        for windowed in self.windows:
            if windowed.anchored:
                if id(windowed.part) not in days:
                    by_day = [replace(gb, grain=None, name=_day_name(gb))  # its own grain
                              if gb is windowed.time else gb for gb in self.group_bys]
                    days[id(windowed.part)] = self.compiler.cte(
                        "days", self.compiler.builder.select(windowed.part, by_day, self.where))
                windowed.days = days[id(windowed.part)]
            windowed.name = self.compiler.cte("windowed", self._window(windowed))
            select = self._join(select, windowed.name, self.group_bys)
        for converted in self.conversions:
            converted.name = self.compiler.cte("converted", conversions(
                converted.metric, converted.filters, self.group_bys, self.where,
                self.compiler.model, self.compiler.builder))
            select = self._join(select, converted.name, self.group_bys) if names else \
                select.join(exp.to_table(converted.name), join_type="CROSS", copy=False)
        for offset in self.offsets:
            others = [gb for gb in self.group_bys if gb is not offset.time]
            shifted = exp.EQ(this=exp.column(self.sources.identifier(offset.column), offset.cte),
                             expression=offset.looked_up(self.key(offset.time)))
            select = self._join(select, offset.cte, others, shifted)

        def ref(part: Part, measure: str) -> exp.Expression:
            return exp.column(self.sources.identifier(part.columns[measure]), part.name)

        outputs = [exp.alias_(self.key(gb), name.copy())
                   for gb, name in zip(self.group_bys, names)]
        outputs += [exp.alias_(value(ref), self.sources.identifier(name))
                    for name, value in values.items()]
        return select.select(*outputs, copy=False)

    def _join(self, select: exp.Select, cte: str, group_bys: list[GroupBy],
              *more: exp.Expression) -> exp.Select:
        """LEFT JOIN ``cte`` on equal (NULL-safe) ``group_bys`` and ``more``."""
        on = [exp.NullSafeEQ(this=exp.column(self.sources.identifier(gb.name), cte),
                             expression=self.key(gb)) for gb in group_bys]
        return select.join(exp.to_table(cte), on=exp.and_(*on, *more), join_type="LEFT",
                           copy=False)

    def _window(self, windowed: _Windowed) -> exp.Select:
        """Each period's total over the rows within the window up to it: the part joined to
        itself, or to its rows per day when anchored (``a`` the period, ``b`` the periods or
        days it adds up, up to and including the period, or its first day)."""

        def col(alias: str, gb: GroupBy) -> exp.Column:
            return exp.column(self.sources.identifier(gb.name), alias)

        time, metric_sql = windowed.time, self.compiler.metric_sql
        on: list[exp.Expression] = [exp.NullSafeEQ(this=col("b", gb), expression=col("a", gb))
                                    for gb in self.group_bys if gb is not time]
        added = exp.column(self.sources.identifier(_day_name(time) if windowed.days
                                                   else time.name), "b")
        on.append(exp.LTE(this=added, expression=col("a", time)))
        if windowed.window is not None:
            on.append(exp.GT(this=added.copy(),
                             expression=metric_sql.shift(col("a", time), windowed.window, -1)))
        if windowed.grain_to_date is not None:
            on.append(exp.GTE(this=added.copy(),
                              expression=metric_sql.truncate(col("a", time),
                                                           windowed.grain_to_date)))
        column = self.sources.identifier(windowed.column)
        table = windowed.part.name
        return exp.select(
            *[exp.alias_(col("a", gb), self.sources.identifier(gb.name))
              for gb in self.group_bys],
            exp.alias_(windowed.running(this=exp.column(column.copy(), "b")), column.copy()),
        ).from_(exp.alias_(exp.to_table(table), "a", table=True), copy=False).join(
            exp.alias_(exp.to_table(windowed.days or table), "b", table=True),
            on=exp.and_(*on), copy=False,
        ).group_by(*[col("a", gb) for gb in self.group_bys], copy=False)


def _day_name(time: GroupBy) -> str:
    """The column of an anchored cumulative's rows per day: ``metric_time__month`` ->
    ``metric_time__day`` (the query has no other time group-by of that name)."""
    stem = time.name[:-len(time.grain) - 2] if time.grain and \
        time.name.endswith(f"__{time.grain}") else time.name
    return f"{stem}__{GRAINS[0]}"
