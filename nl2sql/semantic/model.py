"""The semantic model metric queries compile from, whatever format it was read from.

A dbt semantic model and a Cube cube are both a ``Table``: a relation (or a SELECT) with
dimensions, measures and many-to-one ``Link``s to other tables (dbt: a foreign entity meeting
a primary one; Cube: a declared join). A ``Metric`` is simple (one measure), ratio, derived
(an expression over other metrics, each optionally shifted by an offset window), cumulative or
conversion (dbt: how many base events an entity followed by a conversion event).
Expressions are kept as the source wrote them (SQL over the table's own columns; Cube's
``{CUBE}`` marks the table itself); the compiler parses them in the database's dialect.

Names are the source format's own (``naming``): dbt group-bys are ``entity__dimension`` and
``metric_time__month``, Cube's ``cube.dimension`` and ``cube.time_dimension.month``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

#: Time grains a time dimension is truncated to, finest first.
GRAINS = ("day", "week", "month", "quarter", "year")
#: Parts of a date a dbt group-by extracts (``metric_time__extract_dow``: 1 Monday to 7 Sunday),
#: each with the finest grain its time dimension must hold.
DATE_PARTS = {"year": "year", "quarter": "quarter", "month": "month", "day": "day",
              "dow": "day", "doy": "day"}
#: Aggregations a measure may use (dbt's names; Cube's are mapped to these).
AGGREGATIONS = ("sum", "count", "count_distinct", "average", "min", "max", "sum_boolean",
                "percentile", "median")
#: Longest join path followed from a measure's table to a dimension's.
MAX_HOPS = 4
Naming = Literal["dbt", "cube"]
MetricKind = Literal["simple", "ratio", "derived", "cumulative", "conversion"]


@dataclass(frozen=True)
class Window:
    """A span of time: ``3 month``; ``count`` None means unbounded."""

    count: int | None
    grain: str

    def __str__(self) -> str:
        return "unbounded" if self.count is None else f"{self.count} {self.grain}"


@dataclass(frozen=True)
class Dimension:
    name: str
    expr: str  # SQL over the table's own columns
    is_time: bool = False
    grain: str | None = None  # the finest grain it holds (dbt time_granularity); None: raw
    label: str = ""
    description: str = ""
    listed: bool = True  # False: Cube's public: false (a group-by by name, never offered)
    #: Cube's ``sub_query`` dimension: the value of this metric (a measure) per row of its
    #: cube (by the cube's primary key), not SQL of the row (``expr`` is empty).
    metric: str | None = None
    #: Cube's custom granularities of a time dimension: (name, grain, offset), periods of the
    #: grain starting the offset later (``fiscal_year``: a year from 1 February).
    granularities: tuple[tuple[str, str, Window], ...] = ()

    def granularity(self, name: str) -> tuple[str, Window] | None:
        """The (grain, offset) of custom granularity ``name``, if it has one."""
        return next(((grain, offset) for own, grain, offset in self.granularities
                     if own == name), None)


@dataclass(frozen=True)
class NonAdditive:
    """dbt's ``non_additive_dimension``: a measure (a balance, a subscription's value) read
    only from the rows at the first (``min``) or last (``max``) value of a time dimension
    within each period of the query (and each ``groupings`` entity's own), never added up
    over that dimension."""

    dimension: str
    choice: str  # "min" or "max"
    groupings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Measure:
    name: str
    #: One of ``AGGREGATIONS``; None when ``expr`` is an aggregate already (Cube ``number``).
    agg: str | None
    expr: str | None  # None with count: every row
    time_dimension: str | None = None  # the dimension ``metric_time`` means for it
    filters: tuple[str, ...] = ()  # SQL over the table's own columns (Cube measure filters)
    #: ``percentile``: which (0 to 1; dbt's ``agg_params: {percentile: 0.9}``), and whether
    #: it is a value of the rows (``use_discrete_percentile``) rather than interpolated.
    percentile: float | None = None
    discrete: bool = False
    non_additive: NonAdditive | None = None


@dataclass(frozen=True)
class Proxy:
    """A Cube dimension whose SQL is another cube's member alone (``{users.city}``): that
    dimension under this name, or with ``sub_query`` that measure per row (``{orders.count}``);
    ``shown``: its title, description and ``public``."""

    cube: str
    member: str
    shown: Dimension
    sub_query: bool = False


@dataclass(frozen=True)
class Link:
    """A many-to-one (or one-to-one) step from a table to ``target``: dbt joins on entity
    keys (``keys``: pairs of the source's and the target's expressions), Cube on a condition
    (``condition``: SQL where ``{name}`` is a cube's table and ``{CUBE}`` the cube ``owner``,
    which declared the join)."""

    target: str
    entity: str | None = None
    keys: tuple[tuple[str, str], ...] = ()
    condition: str | None = None
    owner: str | None = None


@dataclass
class Table:
    name: str
    file: Path
    relation: str | None = None  # a table (or view) name, maybe schema-qualified
    sql: str | None = None  # or a SELECT (Cube's ``sql:``)
    naming: Naming = "dbt"
    primary_entity: str | None = None
    #: entity name -> (type, expression): dbt's primary/unique/natural/foreign entities.
    entities: dict[str, tuple[str, str]] = field(default_factory=dict)
    dimensions: dict[str, Dimension] = field(default_factory=dict)
    measures: dict[str, Measure] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    description: str = ""
    time_dimension: str | None = None  # dbt's agg_time_dimension for its measures
    #: Cube proxy dimensions: name -> the member its SQL names alone.
    proxies: dict[str, Proxy] = field(default_factory=dict)
    #: Cube: the dimensions with ``primary_key: true`` (what tells its rows apart).
    primary_key: tuple[str, ...] = ()
    #: dbt's slowly changing dimension (``validity_params``): the expressions of the time
    #: dimensions where each row's validity starts and ends (an open end: NULL).
    validity: tuple[str, str] | None = None

    def key_of(self, entity: str) -> str | None:
        """The expression of ``entity`` when this table is its one row (primary, unique or
        natural), else None."""
        kind, expr = self.entities.get(entity, ("", ""))
        return expr if kind in ("primary", "unique", "natural") else None


@dataclass(frozen=True)
class MetricInput:
    """A metric used by a ratio or derived metric, with its own filters and time offset."""

    metric: str
    alias: str | None = None
    filters: tuple[str, ...] = ()  # conditions over group-by names
    offset: Window | None = None  # the value of ``offset`` earlier (derived metrics)
    #: dbt's ``offset_to_grain``: the value of the first period of the grain (the month)
    #: holding each period, e.g. each day's month-start value.
    offset_to_grain: str | None = None

    @property
    def label(self) -> str:
        return self.alias or self.metric


@dataclass
class Conversion:
    """dbt's conversion metric: the base events (``Metric.measure``'s rows, e.g. visits) an
    ``entity`` (a user) followed by a conversion event (``measure``'s rows, a purchase) within
    ``window`` (None: any time after), each conversion counted once, for the entity's latest
    base event before it. ``calculation``: ``conversion_rate`` (conversions / base) or
    ``conversions``. ``constant_properties``: (base, conversion) dimensions or entities that
    must be equal (the same product viewed and bought)."""

    measure: tuple[str, str]  # (table, measure) of the conversion events
    entity: str
    calculation: str = "conversion_rate"
    window: Window | None = None
    constant_properties: tuple[tuple[str, str], ...] = ()
    filters: tuple[str, ...] = ()  # the conversion measure input's filter
    #: dbt's latest spec: the simple metrics (base, conversion) named instead of measures.
    metrics: tuple[MetricInput, MetricInput] | None = None


@dataclass
class Metric:
    name: str
    kind: MetricKind
    file: Path
    naming: Naming = "dbt"
    label: str = ""
    description: str = ""
    #: simple and cumulative: (table, measure); conversion: the base events' measure.
    measure: tuple[str, str] | None = None
    filters: tuple[str, ...] = ()  # conditions over group-by names (dbt ``filter``)
    numerator: MetricInput | None = None
    denominator: MetricInput | None = None
    expr: str | None = None  # derived: SQL over the inputs' names or aliases
    inputs: tuple[MetricInput, ...] = ()
    #: cumulative (dbt's latest spec): the simple metric it adds up, instead of a measure.
    input_metric: MetricInput | None = None
    window: Window | None = None  # cumulative: trailing window (None: since the start)
    grain_to_date: str | None = None  # cumulative: restart every grain (month-to-date)
    fill_nulls_with: int | float | None = None  # dbt: its value where no row adds up
    #: dbt's ``join_to_timespine``: grouped by time, every period from the first to the last
    #: is listed, one without rows with ``fill_nulls_with`` (or NULL).
    join_to_timespine: bool = False
    #: cumulative, dbt: by a grain coarser than a day, each period's ``first`` day's value (dbt's
    #: default), its ``last`` or ``average``; None (Cube): the value at the period's end.
    period_agg: str | None = None
    #: dbt's ``time_granularity``: the grain of ``metric_time`` named without one.
    time_granularity: str | None = None
    conversion: Conversion | None = None
    view: str | None = None  # Cube: the view exposing it (its group-bys are the view's)
    listed: bool = True  # False: Cube's public: false (queried by name, never offered)

    def input_metrics(self) -> list[MetricInput]:
        if self.input_metric is not None:
            return [self.input_metric]
        if self.conversion is not None and self.conversion.metrics is not None:
            return list(self.conversion.metrics)
        if self.kind == "ratio":
            return [i for i in (self.numerator, self.denominator) if i is not None]
        return list(self.inputs) if self.kind == "derived" else []


@dataclass(frozen=True)
class Problem:
    """A part of the semantic model that cannot be used, and why (the rest stays usable)."""

    file: Path
    kind: str  # "metric", "semantic model", "cube", "saved query", "file"
    name: str
    reason: str

    def line(self) -> str:
        what = f"{self.kind} '{self.name}'" if self.name else self.kind
        return f"{self.file}: {what}: {self.reason}"


@dataclass(frozen=True)
class DbtSavedQuery:
    """A metric query a team saved by name (dbt's ``saved_queries:``), in the names a metric
    query takes: group-bys ``entity__dimension`` and ``metric_time__month``, filters over
    them, ``-revenue`` for a descending order."""

    name: str
    file: Path
    metrics: tuple[str, ...]
    group_by: tuple[str, ...] = ()
    where: tuple[str, ...] = ()
    order_by: tuple[str, ...] = ()
    limit: int | None = None
    label: str = ""
    description: str = ""


@dataclass(frozen=True)
class DimensionAlias:
    """A name standing for ``dimension`` of cube ``table``: a view's member (``view.name``,
    joined along ``via``: the view's join path, cube names from its root) or a proxy dimension
    (``orders.city`` with ``sql: "{users.city}"``, joined by the shortest path)."""

    table: str
    dimension: str
    via: tuple[str, ...]


@dataclass(frozen=True)
class TimeSpine:
    """dbt's time spine model (``time_spine:`` on a model, dbt 1.9): a table of days
    (``table``, its ``day`` column) whose other columns are custom granularities, a fiscal
    quarter say (``grains``: name -> column), grouped by as ``metric_time__fiscal_quarter``."""

    table: Table
    day: str
    grains: dict[str, str]


@dataclass
class SemanticModel:
    """Every table and metric read from a database's ``semantic_model:`` path, and what could
    not be read (``problems``; broken metrics are left out of ``metrics``)."""

    path: Path
    tables: dict[str, Table] = field(default_factory=dict)
    metrics: dict[str, Metric] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    #: dbt's saved queries whose metrics and group-bys are the model's (the others are
    #: ``problems``).
    saved_metric_queries: dict[str, DbtSavedQuery] = field(default_factory=dict)
    #: Cube views' dimensions by their ``view.name`` (their measures are ``metrics``), and
    #: proxy dimensions by their ``cube.name``.
    dimension_aliases: dict[str, DimensionAlias] = field(default_factory=dict)
    #: dbt's time spines with custom granularities (the first naming a grain is read).
    time_spines: list[TimeSpine] = field(default_factory=list)

    def custom_grain(self, name: str) -> TimeSpine | None:
        """The time spine holding custom granularity ``name`` (``fiscal_quarter``), if any."""
        return next((s for s in self.time_spines if name in s.grains), None)

    def joins_back(self, table: str) -> list[Link]:
        """The Cube joins to ``table`` walked back, from the one side to the many: a link to
        each table holding one (its rows meet several of ``table``'s)."""
        return [Link(name, condition=link.condition, owner=link.owner)
                for name, other in self.tables.items() for link in other.links
                if link.target == table and link.condition is not None]

    def broken(self, name: str) -> Problem | None:
        """Why metric ``name`` was left out, if it was."""
        return next((p for p in self.problems if p.kind == "metric" and p.name == name), None)

    def measure(self, ref: tuple[str, str]) -> tuple[Table, Measure]:
        table = self.tables[ref[0]]
        return table, table.measures[ref[1]]
