"""Each backend's SQL for metric queries where dialects differ: truncating a timestamp to the
first day of its week (ISO: Monday), month, quarter or year, a part of the date (the year, the
ISO weekday...), shifting such a date by a window, and an exact percentile aggregate.

A backend's entry names its class (``Backend.metric_sql``), as it names its guard profile.
``MetricSql`` is standard SQL (PostgreSQL, DuckDB, Spark: ``DATE_TRUNC``, ``EXTRACT``,
``PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x)``); SQLite has none of them and MySQL/MariaDB
no ``DATE_TRUNC`` (sqlglot writes ``TIMESTAMP_TRUNC`` for SQLite, which it does not know), so
they override the templates, and neither has a percentile aggregate. Shifting a date is
sqlglot's date arithmetic in every dialect. Every grain is a DATE (SQLite: ISO text), so
results group and join the same way on every backend.
"""

from __future__ import annotations

from typing import ClassVar

import sqlglot
from sqlglot import exp

from nl2sql.semantic.model import Window

#: The column name that stands for the value in a template.
_VALUE = "nl2sql_value"
#: Grains as a number of days or months (a window or offset must be a whole number of them).
DAYS = {"day": 1, "week": 7}
MONTHS = {"month": 1, "quarter": 3, "year": 12}


class MetricSql:
    """Standard SQL: ``CAST(DATE_TRUNC('month', CAST(x AS TIMESTAMP)) AS DATE)`` (the inner cast
    reads dates kept as ISO text too); shifts with sqlglot's ``DateAdd`` in the dialect."""

    #: grain -> SQL over ``nl2sql_value``, in the backend's dialect.
    TRUNCATE: ClassVar[dict[str, str]] = {
        "day": f"CAST(CAST({_VALUE} AS TIMESTAMP) AS DATE)",
        **{grain: f"CAST(DATE_TRUNC('{grain}', CAST({_VALUE} AS TIMESTAMP)) AS DATE)"
           for grain in ("week", "month", "quarter", "year")},
    }

    #: date part -> SQL over ``nl2sql_value``, an integer (``dow``: 1 Monday to 7 Sunday).
    DATE_PART: ClassVar[dict[str, str]] = {
        part: f"CAST(EXTRACT({field} FROM CAST({_VALUE} AS TIMESTAMP)) AS INTEGER)"
        for part, field in (("year", "YEAR"), ("quarter", "QUARTER"), ("month", "MONTH"),
                            ("day", "DAY"), ("dow", "ISODOW"), ("doy", "DOY"))}

    #: Whether the engine has an exact percentile aggregate (``percentile``).
    HAS_PERCENTILE: ClassVar[bool] = True

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect

    def truncate(self, value: exp.Expression, grain: str) -> exp.Expression:
        return self._fill(self.TRUNCATE[grain], value)

    def date_part(self, value: exp.Expression, part: str) -> exp.Expression:
        return self._fill(self.DATE_PART[part], value)

    def shift(self, value: exp.Expression, window: Window, sign: int = 1) -> exp.Expression:
        """``value`` moved by ``window`` (earlier with ``sign`` -1), as a DATE."""
        unit, size = _unit(window.grain)
        return self._moved(value, exp.Literal.number(sign * (window.count or 0) * size), unit)

    def shift_by(self, value: exp.Expression, count: exp.Expression,
                 grain: str) -> exp.Expression:
        """``value`` (a period's first day) moved ``count`` (an expression) periods of
        ``grain`` later, as a DATE."""
        unit, size = _unit(grain)
        return self._moved(value, count if size == 1 else exp.Mul(
            this=exp.paren(count), expression=exp.Literal.number(size)), unit)

    def _moved(self, value: exp.Expression, count: exp.Expression, unit: str) -> exp.Expression:
        """``value`` plus ``count`` days or months, as a DATE: sqlglot writes each dialect's
        date arithmetic (``DATE(x, '-12 MONTH')`` on SQLite, ``ADD_MONTHS`` on Spark). Days
        and months only (a week is 7 days, a quarter 3 months); shifted values are a period's
        first day, so a month never overflows ('2021-03-31' less a month is '2021-03-03')."""
        moved = exp.DateAdd(this=value.copy(), expression=count, unit=exp.var(unit))
        return exp.cast(moved, exp.DataType.Type.DATE)

    def percentile(self, value: exp.Expression, fraction: float,
                   discrete: bool) -> exp.Expression | None:
        """The exact ``fraction`` percentile of ``value`` (``discrete``: a value of the rows,
        else interpolated), ``f(fraction) WITHIN GROUP (ORDER BY value)``; None where the
        engine has no such aggregate."""
        if not self.HAS_PERCENTILE:
            return None
        return exp.WithinGroup(this=self._percentile_function(fraction, discrete),
                               expression=exp.Order(expressions=[exp.Ordered(this=value)]))

    def _percentile_function(self, fraction: float, discrete: bool) -> exp.Expression:
        return (exp.PercentileDisc if discrete else exp.PercentileCont)(
            this=exp.Literal.number(fraction))

    def _fill(self, template: str, value: exp.Expression) -> exp.Expression:
        tree = sqlglot.parse_one(template, read=self.dialect)
        for column in list(tree.find_all(exp.Column)):
            if column.name == _VALUE:
                column.replace(value.copy())
        return tree


class SparkMetricSql(MetricSql):
    """Spark: the standard, but its exact percentiles by name (sqlglot writes Spark's
    ``PERCENTILE_CONT`` as the approximate ``PERCENTILE_APPROX``) and its ISO weekday field."""

    DATE_PART: ClassVar[dict[str, str]] = {
        **MetricSql.DATE_PART,
        "dow": f"CAST(EXTRACT(DOW_ISO FROM CAST({_VALUE} AS TIMESTAMP)) AS INTEGER)"}

    def _percentile_function(self, fraction: float, discrete: bool) -> exp.Expression:
        return exp.Anonymous(this="percentile_disc" if discrete else "percentile_cont",
                             expressions=[exp.Literal.number(fraction)])


class SqliteMetricSql(MetricSql):
    """SQLite's date functions: ``DATE(x, 'start of month')``, ``STRFTIME('%m', x)``; no
    percentile aggregate."""

    HAS_PERCENTILE = False
    TRUNCATE: ClassVar[dict[str, str]] = {
        "day": f"DATE({_VALUE})",
        "week": f"DATE({_VALUE}, '-6 days', 'weekday 1')",
        "month": f"DATE({_VALUE}, 'start of month')",
        "quarter": (f"DATE({_VALUE}, 'start of month', '-' || "
                    f"((CAST(STRFTIME('%m', {_VALUE}) AS INTEGER) - 1) % 3) || ' months')"),
        "year": f"DATE({_VALUE}, 'start of year')",
    }

    DATE_PART: ClassVar[dict[str, str]] = {
        **{part: f"CAST(STRFTIME('{code}', {_VALUE}) AS INTEGER)"
           for part, code in (("year", "%Y"), ("month", "%m"), ("day", "%d"), ("doy", "%j"))},
        "quarter": f"(CAST(STRFTIME('%m', {_VALUE}) AS INTEGER) + 2) / 3",
        "dow": f"(CAST(STRFTIME('%w', {_VALUE}) AS INTEGER) + 6) % 7 + 1",
    }


class MysqlMetricSql(MetricSql):
    """MySQL/MariaDB: ``MAKEDATE(YEAR(x), 1) + INTERVAL (MONTH(x) - 1) MONTH`` (a DATE); no
    percentile aggregate (MariaDB's ``PERCENTILE_CONT`` is a window function only)."""

    HAS_PERCENTILE = False
    TRUNCATE: ClassVar[dict[str, str]] = {
        "day": f"DATE({_VALUE})",
        "week": f"DATE_SUB(DATE({_VALUE}), INTERVAL WEEKDAY({_VALUE}) DAY)",
        "month": f"DATE_ADD(MAKEDATE(YEAR({_VALUE}), 1), INTERVAL (MONTH({_VALUE}) - 1) MONTH)",
        "quarter": (f"DATE_ADD(MAKEDATE(YEAR({_VALUE}), 1), "
                    f"INTERVAL (QUARTER({_VALUE}) - 1) QUARTER)"),
        "year": f"MAKEDATE(YEAR({_VALUE}), 1)",
    }
    DATE_PART: ClassVar[dict[str, str]] = {
        "year": f"YEAR({_VALUE})", "quarter": f"QUARTER({_VALUE})", "month": f"MONTH({_VALUE})",
        "day": f"DAYOFMONTH({_VALUE})", "dow": f"WEEKDAY({_VALUE}) + 1",
        "doy": f"DAYOFYEAR({_VALUE})",
    }


def _unit(grain: str) -> tuple[str, int]:
    """The unit a grain is counted in (``DAY`` or ``MONTH``) and how many make one."""
    return ("DAY", DAYS[grain]) if grain in DAYS else ("MONTH", MONTHS[grain])


def whole_multiple(window: Window, grain: str) -> bool:
    """A window (or offset) is a whole number of ``grain`` periods: then shifting a period's
    first day by it lands on another period's first day."""
    if grain == "day":
        return True
    if window.grain in MONTHS and grain in MONTHS:
        return (window.count or 0) * MONTHS[window.grain] % MONTHS[grain] == 0
    if window.grain in DAYS and grain in DAYS:
        return (window.count or 0) * DAYS[window.grain] % DAYS[grain] == 0
    return False
