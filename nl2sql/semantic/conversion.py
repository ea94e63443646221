"""A dbt conversion metric's conversions ("visits followed by a purchase within 7 days"), as
MetricFlow counts them.

Each base event (a visit, with the query's group-bys: its own dimensions, a joined table's,
``metric_time`` at its time) is joined to the conversion events (purchases) of the same entity
(and equal constant properties) on its day or after, before the window has passed (a 7-day
window: up to the 6th day after, MetricFlow's join); each conversion event counts once, for the
latest base event before it (ties: the first group). The conversion measure is aggregated over
those events per group; the compiler divides it by the base measure for ``conversion_rate``.
"""

from __future__ import annotations

from sqlglot import exp

from nl2sql.semantic.model import Measure, Metric, SemanticModel, Table
from nl2sql.semantic.names import GroupBy
from nl2sql.semantic.parts import Part, PartBuilder, aggregate
from nl2sql.semantic.sources import ordered

#: The column of the conversions per group.
CONVERSIONS = "nl2sql_conversions"
#: The columns of the events.
_TIME, _ENTITY, _PROPERTY, _VALUE = "nl2sql_time", "nl2sql_entity", "nl2sql_property_", \
    "nl2sql_value"
_EVENT, _RANK = "nl2sql_event", "nl2sql_rank"
#: Aggregations whose value over no rows is 0 (a group without conversions has 0 of them).
_ZERO_WHEN_EMPTY = ("count", "count_distinct", "sum", "sum_boolean")


def counted(conversions: exp.Expression, measure: Measure) -> exp.Expression:
    """A group's conversions from the joined ``CONVERSIONS`` column: 0 where none came, for a
    count or a sum (MetricFlow leaves it NULL unless the measure's ``fill_nulls_with`` says
    0)."""
    if measure.agg in _ZERO_WHEN_EMPTY:
        return exp.Coalesce(this=conversions, expressions=[exp.Literal.number(0)])
    return conversions


def conversions(metric: Metric, filters: tuple[str, ...], group_bys: list[GroupBy],
                where: list[str], model: SemanticModel, builder: PartBuilder) -> exp.Select:
    """The conversions of conversion metric ``metric`` per group (the column
    ``CONVERSIONS``), its base events under ``where`` and ``filters``: the base events
    (``b``, with the group-bys' values) joined to the conversion events (``c``, numbered)
    of the same entity (and equal constant properties); each conversion event kept with
    its latest base event (``nl2sql_rank`` 1), then aggregated by the conversion
    measure."""
    conversion, metric_sql, sources = metric.conversion, builder.metric_sql, builder.sources
    assert conversion is not None and metric.measure is not None
    names = [gb.name for gb in group_bys]
    base_table, base = model.measure(metric.measure)
    table, measure = model.measure(conversion.measure)

    def columns(of: Table, properties: list[str]) -> dict[str, str]:
        found = {_ENTITY: of.entities[conversion.entity][1]}
        for i, name in enumerate(properties):
            dimension = of.dimensions.get(name)
            found[f"{_PROPERTY}{i}"] = dimension.expr if dimension else of.entities[name][1]
        return found

    time = GroupBy(_TIME, metric_time=True)
    pairs = conversion.constant_properties
    events = columns(table, [p for _, p in pairs])
    if measure.expr is not None:
        events[_VALUE] = measure.expr
    base_rows = builder.rows(Part(base_table, filters, base.time_dimension),
                             [*group_bys, time], where,
                             columns(base_table, [p for p, _ in pairs]))
    event_rows = builder.rows(Part(table, conversion.filters, measure.time_dimension),
                              [time], [], events)

    def col(name: str, alias: str) -> exp.Column:
        return exp.column(sources.identifier(name), alias)

    numbered = exp.select(exp.Column(this=exp.Star(), table=sources.identifier("e")),
                          exp.alias_(exp.Window(this=exp.RowNumber(), order=exp.Order(
                              expressions=[ordered(col(_ENTITY, "e"), sources.dialect),
                                           ordered(col(_TIME, "e"), sources.dialect)])),
                              sources.identifier(_EVENT))
                          ).from_(exp.Subquery(this=event_rows, alias=exp.TableAlias(
                              this=sources.identifier("e"))), copy=False)
    day_b, day_c = (metric_sql.truncate(col(_TIME, alias), "day") for alias in "bc")
    on: list[exp.Expression] = [exp.EQ(this=col(_ENTITY, "c"), expression=col(_ENTITY, "b")),
                                exp.GTE(this=day_c, expression=day_b)]
    if conversion.window is not None:  # within 7 days: before the 7th day after (MetricFlow)
        on.append(exp.LT(this=day_c.copy(),
                         expression=metric_sql.shift(day_b, conversion.window)))
    on += [exp.EQ(this=col(f"{_PROPERTY}{i}", "c"), expression=col(f"{_PROPERTY}{i}", "b"))
           for i in range(len(pairs))]
    latest = [ordered(col(_TIME, "b"), sources.dialect, descending=True),
              *[ordered(col(name, "b"), sources.dialect) for name in names]]
    matched = exp.select(
        *[exp.alias_(col(name, "b"), sources.identifier(name)) for name in names],
        *([exp.alias_(col(_VALUE, "c"), sources.identifier(_VALUE))]
          if measure.expr is not None else []),
        exp.alias_(exp.Window(this=exp.RowNumber(),
                              partition_by=[col(_EVENT, "c")],
                              order=exp.Order(expressions=latest)),
                   sources.identifier(_RANK)),
    ).from_(exp.Subquery(this=base_rows, alias=exp.TableAlias(
        this=sources.identifier("b"))), copy=False).join(
        exp.Subquery(this=numbered, alias=exp.TableAlias(this=sources.identifier("c"))),
        on=exp.and_(*on), copy=False)
    value = None if measure.expr is None else col(_VALUE, "m")
    keys = [col(name, "m") for name in names]
    select = exp.select(
        *[exp.alias_(key, sources.identifier(name)) for key, name in zip(keys, names)],
        exp.alias_(aggregate(measure, value, [], metric_sql),
                   sources.identifier(CONVERSIONS)),
    ).from_(exp.Subquery(this=matched, alias=exp.TableAlias(this=sources.identifier("m"))),
            copy=False).where(exp.EQ(this=col(_RANK, "m"), expression=exp.Literal.number(1)),
                              copy=False)
    return select.group_by(*[key.copy() for key in keys], copy=False) if keys else select
