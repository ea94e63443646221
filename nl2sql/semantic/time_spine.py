"""A metric query's time spine (dbt's ``join_to_timespine``): every period of the one time
group-by listed, a period without rows too, as MetricFlow lists them, with no spine table in
the warehouse.

The periods run from the combined rows' first to their last, widened to the dates a filter on
that time group-by alone names and kept to the periods it asks for ("every day of December"
lists the days after the last sale). They are counted by a cross join of digits, up to 10,000
periods from the first: no recursive CTE, which MySQL caps at 1,000 rows and Spark lacks. No row
of the combined rows is ever dropped; a missing period is one row whose other group-bys are
NULL.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from nl2sql.semantic.metric_sql import MetricSql
from nl2sql.semantic.names import GroupBy
from nl2sql.semantic.parts import condition_names, parse_condition
from nl2sql.semantic.sources import Sources

#: A text literal that is a date (a time filter's bound widens the spine to it).
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
#: The digit tables whose cross join counts the periods (10 ** 4 of them).
_PLACES = ("ones", "tens", "hundreds", "thousands")


def filled(keys: str, time: GroupBy, group_bys: list[GroupBy], where: list[str],
           sources: Sources, metric_sql: MetricSql, cte: Callable[[str, exp.Query], str]) -> str:
    """The CTE (made with ``cte``) of the combined rows (the CTE ``keys``, one column per
    group-by) and a row for each period of ``time`` they lack."""
    column, grain = sources.identifier(time.name), time.grain or "day"
    digits = cte("digits", exp.union(*[exp.select(exp.alias_(exp.Literal.number(i), "d"))
                                       for i in range(10)], distinct=False))
    spanned = [tree for tree in (parse_condition(text, sources.dialect) for text in where)
               if condition_names(tree) == [time.name]]
    ends: exp.Query = exp.select(exp.alias_(exp.column(column.copy(), keys), "period")
                                 ).from_(keys, copy=False)
    for tree in spanned:  # a filter's dates widen the span: the periods it asks for
        for literal in tree.find_all(exp.Literal):
            if literal.is_string and _DATE.match(literal.this):
                ends = exp.union(ends, exp.select(exp.alias_(
                    metric_sql.truncate(literal.copy(), grain), "period")), distinct=False)
    bounds = cte("bounds", exp.select(
        exp.alias_(exp.Min(this=exp.column("period", "ends")), "first_period"),
        exp.alias_(exp.Max(this=exp.column("period", "ends")), "last_period"),
    ).from_(exp.Subquery(this=ends, alias=exp.TableAlias(this=exp.to_identifier("ends"))),
            copy=False))
    count: exp.Expression = exp.column("d", _PLACES[0])
    for i, place in enumerate(_PLACES[1:], 1):
        count = exp.Add(this=count, expression=exp.Mul(this=exp.column("d", place),
                                                       expression=exp.Literal.number(10 ** i)))
    period = metric_sql.shift_by(exp.column("first_period", bounds), count, grain)
    numbered = exp.select(exp.alias_(period, column.copy())).from_(bounds, copy=False)
    for place in _PLACES:
        numbered = numbered.join(exp.alias_(exp.to_table(digits), place, table=True),
                                 join_type="CROSS", copy=False)
    periods = cte("periods", numbered.where(
        exp.LTE(this=period.copy(), expression=exp.column("last_period", bounds)), copy=False))
    for tree in spanned:  # and choose among them
        for name in list(tree.find_all(exp.Column)):
            name.replace(exp.column(column.copy(), periods))
    held = exp.select(exp.Literal.number(1)).from_(
        exp.alias_(exp.to_table(keys), "held", table=True), copy=False).where(
        exp.EQ(this=exp.column(column.copy(), "held"),
               expression=exp.column(column.copy(), periods)), copy=False)
    missing = exp.select(*[exp.alias_(exp.column(column.copy(), periods) if gb is time
                                      else exp.Null(), sources.identifier(gb.name))
                           for gb in group_bys]).from_(periods, copy=False).where(
        exp.and_(exp.not_(exp.Exists(this=held)), *spanned), copy=False)
    present = exp.select(*[exp.column(sources.identifier(gb.name), keys)
                           for gb in group_bys]).from_(keys, copy=False)
    return cte("filled", exp.union(present, missing, distinct=False))
