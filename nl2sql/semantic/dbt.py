"""dbt MetricFlow semantic models and metrics, from a project's YAML or ``semantic_manifest.json``.

Read, in the legacy spec (dbt 1.6-1.11): ``semantic_models:`` (``model: ref('X')`` names table
X; the manifest's ``node_relation`` its alias), entities, categorical and time dimensions,
measures (``create_metric: true`` makes a simple metric of the same name),
``defaults.agg_time_dimension``; ``metrics:`` of type simple, ratio, derived (``offset_window``),
cumulative (``window``, ``grain_to_date``) and conversion (``conversion_type_params``: ``entity``,
``base_measure``, ``conversion_measure``, ``window``, ``calculation``, ``constant_properties``),
their parameters under ``type_params``, with their ``filter``s
(``{{ Dimension('customer__country') }} = 'US'``).

In the latest spec (dbt 1.12, Fusion): a ``models:`` entry with ``semantic_model:`` (``true`` or
``{enabled: true, name: ...}``) is a semantic model of that table: its columns' ``entity:`` and
``dimension:`` (a type, or ``{type, name, ...}``; a time column's ``granularity``),
``derived_semantics:`` (dimensions and entities over an ``expr``), ``agg_time_dimension`` and
``primary_entity``; its ``metrics:`` are simple metrics (``agg``, ``expr``: each is its own
measure) and others over them. Metrics take their parameters as keys of their own
(``numerator``, ``input_metrics``, ``input_metric``, ``window``, a conversion's
``base_metric``...). Its manifest writes a simple metric's aggregation inline
(``type_params.metric_aggregation_params``), a cumulative metric's input as
``cumulative_type_params.metric``.

Each entry is read on its own: a mistake in one is a ``Problem`` naming it, and the others stay
usable.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from nl2sql.errors import MetricQueryError
from nl2sql.semantic.model import (GRAINS, Conversion, Dimension, Link, Measure, Metric,
                                  MetricInput, NonAdditive, Problem, DbtSavedQuery, Table,
                                  TimeSpine, Window)
from nl2sql.semantic.names import group_by_name, order_name, read_templates

_REF = re.compile(r"""^\s*ref\(\s*['"]([^'"]+)['"](?:\s*,\s*['"]([^'"]+)['"])?\s*\)\s*$""")
_WINDOW = re.compile(r"^\s*(\d+)\s+([a-z]+?)s?\s*$", re.IGNORECASE)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    name: str = Field(min_length=1)
    label: str | None = None
    description: str | None = None

    @field_validator("name")
    @classmethod
    def _plain(cls, value: str) -> str:
        return value.strip()


def _text(value: Any) -> str | None:
    """An ``expr``: YAML may give a number (``expr: 1``) or a boolean."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value)


class _Entity(_Entry):
    type: str
    expr: Any = None


class _Dimension(_Entry):
    type: str = "categorical"
    expr: Any = None
    type_params: dict[str, Any] | None = None


class _Measure(_Entry):
    agg: str
    expr: Any = None
    agg_params: dict[str, Any] | None = None
    non_additive_dimension: Any = None
    agg_time_dimension: str | None = None
    create_metric: bool = False


class _SemanticModel(_Entry):
    model: str | None = None
    node_relation: dict[str, Any] | None = None
    defaults: dict[str, Any] | None = None
    primary_entity: str | None = None
    entities: list[_Entity] = Field(default_factory=list)
    dimensions: list[_Dimension] = Field(default_factory=list)
    measures: list[_Measure] = Field(default_factory=list)


class _Metric(_Entry):
    model_config = ConfigDict(extra="allow", defer_build=True)

    type: str
    type_params: dict[str, Any] | None = None
    filter: Any = None

    @property
    def params(self) -> dict[str, Any]:
        """``type_params`` (legacy spec), or the metric's own keys (latest spec)."""
        return self.type_params if self.type_params is not None else dict(self.model_extra or {})


class _ColumnEntity(_Entry):
    """A latest-spec column's ``entity:`` block (its name defaults to the column's)."""

    name: str = ""
    type: str


class _ColumnDimension(_Entry):
    name: str = ""
    type: str = "categorical"


class _Column(BaseModel):
    """A latest-spec model column; ``entity: primary`` and ``dimension: categorical`` are
    read as the blocks ``{type: ...}`` they abbreviate."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    name: str = Field(min_length=1)
    description: str | None = None
    granularity: str | None = None
    entity: _ColumnEntity | None = None
    dimension: _ColumnDimension | None = None

    @field_validator("entity", "dimension", mode="before")
    @classmethod
    def _type_alone(cls, value: Any) -> Any:
        return {"type": value} if isinstance(value, str) else value


class _DerivedDimension(_Dimension):
    granularity: str | None = None


class _DerivedSemantics(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    dimensions: list[_DerivedDimension] = Field(default_factory=list)
    entities: list[_Entity] = Field(default_factory=list)


class _ModelSemantics(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    enabled: bool = True
    name: str | None = None


class _Model(_Entry):
    """A ``models:`` entry of the latest spec, with its ``semantic_model:``."""

    semantic_model: bool | _ModelSemantics = False
    agg_time_dimension: str | None = None
    primary_entity: str | None = None
    columns: list[_Column] = Field(default_factory=list)
    derived_semantics: _DerivedSemantics | None = None
    metrics: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def enabled(self) -> bool:
        semantics = self.semantic_model
        return semantics.enabled if isinstance(semantics, _ModelSemantics) else semantics


class _QueryParams(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    metrics: list[str] = Field(min_length=1)
    group_by: list[str] = Field(default_factory=list)
    #: A list of filters (YAML), one filter, or a manifest's ``{where_filters: [{
    #: where_sql_template: ...}]}``.
    where: list[str] | str | dict[str, Any] | None = None
    order_by: list[str] = Field(default_factory=list)
    limit: int | None = Field(default=None, ge=1)


class _SavedQuery(_Entry):
    query_params: _QueryParams


def read_saved_queries(document: dict[str, Any], path: Path) -> tuple[list[DbtSavedQuery],
                                                                      list[Problem]]:
    """The ``saved_queries:`` of one dbt file (YAML or manifest JSON), in a metric query's
    names; one that cannot be read is a problem."""
    found, problems = [], []
    for number, raw in enumerate(_listed(document.get("saved_queries")), 1):
        try:
            entry = _SavedQuery.model_validate(raw)
            params = entry.query_params
            where = params.where
            if isinstance(where, dict):
                where = [f.get("where_sql_template", "") for f in where.get("where_filters") or []
                         if isinstance(f, dict)]
            filters = [where] if isinstance(where, str) else list(where or [])
            found.append(DbtSavedQuery(
                name=entry.name, file=path, label=entry.label or "",
                description=" ".join((entry.description or "").split()),
                metrics=tuple(m.strip() for m in params.metrics),
                group_by=tuple(group_by_name(g) for g in params.group_by),
                where=tuple(read_templates(f) for f in filters if f.strip()),
                order_by=tuple(order_name(o) for o in params.order_by), limit=params.limit))
        except (ValidationError, MetricQueryError) as exc:
            problems.append(Problem(path, "saved query", _name(raw, number), _reason(exc)))
    return found, problems


def has_semantics(document: dict[str, Any]) -> bool:
    """Whether a file holds dbt semantics: ``semantic_models:``, ``metrics:``,
    ``saved_queries:`` or a model with ``semantic_model:`` (a file of plain ``models:`` or
    ``sources:`` holds none)."""
    return any(key in document for key in ("semantic_models", "metrics", "saved_queries")) or any(
        isinstance(m, dict) and (m.get("semantic_model") not in (None, False) or
                                 isinstance(m.get("time_spine"), dict))
        for m in _listed(document.get("models")))


def read_time_spines(document: dict[str, Any], path: Path) -> tuple[list[TimeSpine],
                                                                    list[Problem]]:
    """The file's time spine models with custom granularities (``time_spine:
    {standard_granularity_column: date_day, custom_granularities: [{name: fiscal_quarter,
    column_name: fiscal_qtr}]}``); one without its day column is a problem."""
    spines, problems = [], []
    for number, raw in enumerate(_listed(document.get("models")), 1):
        if not isinstance(raw, dict) or not isinstance(raw.get("time_spine"), dict):
            continue
        spine, name = raw["time_spine"], _name(raw, number)
        day = _text(spine.get("standard_granularity_column"))
        grains = {str(g["name"]).strip().lower(): str(g.get("column_name") or g["name"])
                  for g in spine.get("custom_granularities") or []
                  if isinstance(g, dict) and g.get("name")}
        if not day:
            problems.append(Problem(path, "time spine", name, "its time_spine needs "
                                                              "standard_granularity_column"))
        elif grains:
            spines.append(TimeSpine(Table(name=name, file=path, relation=name), day, grains))
    return spines, problems


def read_dbt(document: dict[str, Any], path: Path) -> tuple[list[Table], list[Metric],
                                                             list[Problem]]:
    """The semantic models and metrics of one dbt file (YAML or manifest JSON)."""
    tables, metrics, problems = [], [], []
    for number, raw in enumerate(_listed(document.get("semantic_models")), 1):
        try:
            entry = _SemanticModel.model_validate(raw)
            table = _table(entry, path)
        except (ValidationError, ValueError) as exc:
            problems.append(Problem(path, "semantic model", _name(raw, number), _reason(exc)))
            continue
        tables.append(table)
        metrics += [Metric(name=m.name, kind="simple", file=path, label=m.label or "",
                           description=m.description or "", measure=("", m.name))
                    for m in entry.measures if m.create_metric]
    for number, raw in enumerate(_listed(document.get("models")), 1):
        if not isinstance(raw, dict) or raw.get("semantic_model") in (None, False):
            continue
        try:
            model = _Model.model_validate(raw)
            if not model.enabled:
                continue
            table = _model_table(model, path)
        except (ValidationError, ValueError) as exc:
            problems.append(Problem(path, "semantic model", _name(raw, number), _reason(exc)))
            continue
        tables.append(table)
        metrics += _read_metrics(model.metrics, path, problems, tables, table)
    metrics += _read_metrics(_listed(document.get("metrics")), path, problems, tables)
    return tables, metrics, problems


def _read_metrics(entries: list[Any], path: Path, problems: list[Problem],
                  tables: list[Table], table: Table | None = None) -> list[Metric]:
    """The metrics of a ``metrics:`` list; a model's (``table``) simple metrics are measures
    of its table too, as are a manifest's simple metrics with ``metric_aggregation_params``
    (dbt 1.12 and Fusion write the latest spec's so) of the file's semantic model they name."""
    metrics = []
    for number, raw in enumerate(entries, 1):
        try:
            entry = _Metric.model_validate(raw)
            params, simple = entry.params, entry.type.strip().lower() == "simple"
            aggregation = params.get("metric_aggregation_params")
            if simple and not params.get("measure") and isinstance(aggregation, dict):
                owner = next((t for t in tables if t.name == aggregation.get("semantic_model")),
                             None)
                if owner is None:
                    raise ValueError(f"metric_aggregation_params names semantic model "
                                     f"{aggregation.get('semantic_model')!r}, which is not in "
                                     f"this file")
                metrics.append(_model_metric(entry, owner, path, {
                    **aggregation, "expr": params.get("expr") or aggregation.get("expr")}))
            elif simple and table is not None and "agg" in params:
                metrics.append(_model_metric(entry, table, path, params))
            else:
                metrics.append(_metric(entry, path))
            metrics[-1].time_granularity = _time_granularity(entry)
        except (ValidationError, ValueError) as exc:
            problems.append(Problem(path, "metric", _name(raw, number), _reason(exc)))
    return metrics


def _time_granularity(entry: _Metric) -> str | None:
    """A metric's ``time_granularity`` (dbt 1.9 on): ``metric_time`` without a grain means it."""
    value = (entry.model_extra or {}).get("time_granularity")
    if value in (None, ""):
        return None
    grain = str(value).strip().lower()
    if grain not in GRAINS:
        raise ValueError(f"time_granularity {value!r} is not one of {', '.join(GRAINS)}")
    return grain


def _listed(value: Any) -> list[Any]:
    """A YAML list, or a manifest's mapping of unique ids to entries."""
    if isinstance(value, dict):
        return list(value.values())
    return value if isinstance(value, list) else []


def _name(raw: Any, number: int) -> str:
    name = raw.get("name") if isinstance(raw, dict) else None
    return str(name) if name else f"#{number}"


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
        problem = "missing" if error["type"] == "missing" else error["msg"].lower()
        return f"field '{where.lstrip('.')}': {problem}"
    return str(exc)


def _relation(entry: _SemanticModel) -> str:
    if entry.model:
        match = _REF.match(entry.model)
        if not match:
            raise ValueError(f"model {entry.model!r} is not ref('table')")
        return match.group(2) or match.group(1)  # ref('package', 'model') names the model last
    alias = (entry.node_relation or {}).get("alias")
    if not alias:
        raise ValueError("neither 'model: ref(...)' nor 'node_relation.alias' names its table")
    return str(alias)


def _table(entry: _SemanticModel, path: Path) -> Table:
    table = Table(name=entry.name, file=path, relation=_relation(entry), naming="dbt",
                  description=entry.description or "")
    _add_entities(table, [(e.type, e.name, _text(e.expr) or e.name) for e in entry.entities],
                  entry.primary_entity)
    for dim in entry.dimensions:
        _add_dimension(table, dim.name, dim.type, _text(dim.expr) or dim.name,
                       (dim.type_params or {}).get("time_granularity"), dim.label,
                       dim.description)
    table.validity = _validity(entry)
    table.time_dimension = (entry.defaults or {}).get("agg_time_dimension")
    for measure in entry.measures:
        table.measures[measure.name] = Measure(
            measure.name, measure.agg.strip().lower(), _text(measure.expr) or measure.name,
            time_dimension=measure.agg_time_dimension or table.time_dimension,
            non_additive=_non_additive(measure.non_additive_dimension),
            **_percentile(measure.agg_params))
    return table


def _non_additive(value: Any) -> NonAdditive | None:
    """``non_additive_dimension: {name, window_choice, window_groupings}`` (checked when
    the model loads: ``loading``)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return NonAdditive("", "")
    groupings = value.get("window_groupings") or []
    return NonAdditive(str(value.get("name") or ""),
                       str(value.get("window_choice") or "").strip().lower(),
                       tuple(str(g) for g in groupings) if isinstance(groupings, list) else ("",))


def _validity(entry: _SemanticModel) -> tuple[str, str] | None:
    """A slowly changing dimension's validity window: the time dimensions with
    ``validity_params: {is_start: true}`` and ``{is_end: true}`` (both, or it is not one)."""
    ends: dict[str, str] = {}
    for dim in entry.dimensions:
        params = (dim.type_params or {}).get("validity_params") or {}
        for end in ("is_start", "is_end"):
            if isinstance(params, dict) and params.get(end):
                ends[end] = _text(dim.expr) or dim.name
    if not ends:
        return None
    if len(ends) != 2:
        raise ValueError("validity_params need a dimension with is_start and one with is_end")
    return ends["is_start"], ends["is_end"]


def _percentile(params: Any) -> dict[str, Any]:
    """A percentile measure's ``agg_params``: ``percentile`` (0 to 1) and
    ``use_discrete_percentile``; ``use_approximate_percentile`` is computed exactly."""
    if not isinstance(params, dict):
        return {}
    value = params.get("percentile")
    return {"percentile": float(value) if isinstance(value, (int, float))
            and not isinstance(value, bool) else None,
            "discrete": bool(params.get("use_discrete_percentile"))}


def _model_table(model: _Model, path: Path) -> Table:
    """A latest-spec model's semantic model: the model's table, entities and dimensions from
    its columns and ``derived_semantics``."""
    semantics = model.semantic_model
    name = semantics.name if isinstance(semantics, _ModelSemantics) and semantics.name \
        else model.name
    table = Table(name=name, file=path, relation=model.name, naming="dbt",
                  description=model.description or "", time_dimension=model.agg_time_dimension)
    derived = model.derived_semantics or _DerivedSemantics()
    _add_entities(table, [(c.entity.type, c.entity.name or c.name, c.name)
                          for c in model.columns if c.entity is not None]
                  + [(e.type, e.name, _text(e.expr) or e.name) for e in derived.entities],
                  model.primary_entity)
    for column in model.columns:
        if (dim := column.dimension) is not None:
            _add_dimension(table, dim.name or column.name, dim.type, column.name,
                           column.granularity, dim.label, dim.description or column.description)
    for extra in derived.dimensions:
        _add_dimension(table, extra.name, extra.type, _text(extra.expr) or extra.name,
                       extra.granularity, extra.label, extra.description)
    return table


def _add_entities(table: Table, entities: list[tuple[str, str, str]],
                  primary: str | None) -> None:
    """``(type, name, expression)`` entities; the primary one, or ``primary_entity``, names
    the table's rows."""
    for kind, name, expr in entities:
        table.entities[name] = (kind.strip().lower(), expr)
        if kind.strip().lower() == "primary":
            table.primary_entity = name
    table.primary_entity = primary or table.primary_entity


def _add_dimension(table: Table, name: str, kind: str, expr: str, granularity: str | None,
                   label: str | None, description: str | None) -> None:
    is_time = kind.strip().lower() == "time"
    grain = str(granularity or "day").lower() if is_time else None
    table.dimensions[name] = Dimension(name, expr, is_time=is_time,
                                       grain=grain if grain in GRAINS else "day" if is_time
                                       else None, label=label or "",
                                       description=description or "")


def _model_metric(entry: _Metric, table: Table, path: Path, params: dict[str, Any]) -> Metric:
    """A latest-spec simple metric: a measure of its model's table (the metric's own name,
    ``agg``, ``expr``, ``agg_time_dimension``) and the metric over it."""
    table.measures[entry.name] = Measure(
        entry.name, str(params.get("agg") or "").strip().lower(),
        _text(params.get("expr")) or entry.name,
        time_dimension=params.get("agg_time_dimension") or table.time_dimension,
        non_additive=_non_additive(params.get("non_additive_dimension")),
        **_percentile(params.get("agg_params")))
    return Metric(name=entry.name, kind="simple", file=path, label=entry.label or "",
                  description=entry.description or "", filters=_filters(entry.filter),
                  measure=(table.name, entry.name), fill_nulls_with=_fill(entry.params, None),
                  join_to_timespine=_spine(entry.params, None))


def _fill(params: dict[str, Any], measure: Any) -> int | float | None:
    """``fill_nulls_with``: on the metric (latest spec, manifest) or its measure input."""
    value = params.get("fill_nulls_with")
    if value is None and isinstance(measure, dict):
        value = measure.get("fill_nulls_with")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"fill_nulls_with {value!r} is not a number")
    return value


def _spine(params: dict[str, Any], measure: Any) -> bool:
    """``join_to_timespine``: on the metric (latest spec, manifest) or its measure input."""
    value = params.get("join_to_timespine")
    if value is None and isinstance(measure, dict):
        value = measure.get("join_to_timespine")
    if value not in (None, True, False):
        raise ValueError(f"join_to_timespine {value!r} is not true or false")
    return bool(value)


def dbt_links(tables: list[Table]) -> None:
    """Each foreign (or unique) entity of a table that is the primary, unique or natural key
    of another table: a many-to-one link to it, on the two entity expressions."""
    for table in tables:
        for entity, (kind, expr) in table.entities.items():
            if kind not in ("foreign", "unique", "primary"):
                continue
            for target in tables:
                key = target.key_of(entity)
                if target is not table and key is not None:
                    table.links.append(Link(target.name, entity=entity, keys=((expr, key),)))


def _filters(value: Any) -> tuple[str, ...]:
    """A metric or input ``filter``: a string, a list of them, or the manifest's
    ``{where_filters: [{where_sql_template: ...}]}``."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    if isinstance(value, dict):
        return tuple(str(f.get("where_sql_template")) for f in value.get("where_filters") or []
                     if isinstance(f, dict) and f.get("where_sql_template"))
    if isinstance(value, list):
        return tuple(f for item in value for f in _filters(item))
    raise ValueError(f"filter {value!r} is not SQL text or a list of it")


def window(value: Any) -> Window | None:
    """``7 days``, ``1 month``, the manifest's ``{count, granularity}``; None when absent."""
    if value in (None, ""):
        return None
    if isinstance(value, dict):
        count, grain = value.get("count"), str(value.get("granularity") or "").lower()
    else:
        match = _WINDOW.match(str(value))
        if not match:
            raise ValueError(f"window {value!r} is not '<number> <grain>' (e.g. '3 months')")
        count, grain = match.group(1), match.group(2).lower()
    if grain not in GRAINS:
        raise ValueError(f"window {value!r}: the grain is one of {', '.join(GRAINS)}")
    return Window(int(count), grain)


def _input(value: Any, what: str) -> MetricInput:
    if isinstance(value, str) and value.strip():
        return MetricInput(value.strip())
    if isinstance(value, dict) and value.get("name"):
        to_grain = str(value.get("offset_to_grain") or "").strip().lower() or None
        if to_grain is not None and to_grain not in GRAINS:
            raise ValueError(f"input {value['name']!r}: offset_to_grain {to_grain!r} is not "
                             f"one of {', '.join(GRAINS)}")
        offset = window(value.get("offset_window"))
        if offset is not None and to_grain is not None:
            raise ValueError(f"input {value['name']!r}: offset_window and offset_to_grain "
                             f"together; use one")
        return MetricInput(str(value["name"]).strip(), alias=value.get("alias") or None,
                           filters=_filters(value.get("filter")), offset=offset,
                           offset_to_grain=to_grain)
    raise ValueError(f"'{what}' must name a metric (a name or {{name: ...}})")


def _metric(entry: _Metric, path: Path) -> Metric:
    params, kind = entry.params, entry.type.strip().lower()
    metric = Metric(name=entry.name, kind="simple", file=path, label=entry.label or "",
                    description=entry.description or "", filters=_filters(entry.filter))
    if kind in ("simple", "cumulative"):
        measure = params.get("measure")
        reference = _input(measure, "type_params.measure") if measure else None
        nested = params.get("cumulative_type_params") or {}
        accumulated = params.get("input_metric") or nested.get("metric")  # YAML, manifest
        if kind == "cumulative" and reference is None and accumulated:
            metric.input_metric = _input(accumulated, "input_metric")
        elif reference is None:
            raise ValueError(f"a {kind} metric needs type_params.measure" + (
                " (or input_metric)" if kind == "cumulative" else
                "; in the latest spec, agg and expr under its model's metrics:"))
        else:
            metric.measure = ("", reference.metric)
            metric.filters += reference.filters
        if kind == "cumulative":
            metric.kind = "cumulative"
            metric.window = window(nested.get("window") or params.get("window"))
            grain = nested.get("grain_to_date") or params.get("grain_to_date")
            metric.grain_to_date = str(grain).lower() if grain else None
            if metric.grain_to_date and metric.grain_to_date not in GRAINS:
                raise ValueError(f"grain_to_date {grain!r} is not one of {', '.join(GRAINS)}")
            metric.period_agg = str(nested.get("period_agg") or params.get("period_agg")
                                    or "first").strip().lower()
            if metric.period_agg not in ("first", "last", "average"):
                raise ValueError(f"period_agg {metric.period_agg!r} is not first, last or "
                                 f"average")
        metric.fill_nulls_with = _fill(params, measure)
        metric.join_to_timespine = _spine(params, measure)
    elif kind == "ratio":
        metric.kind = "ratio"
        metric.numerator = _input(params.get("numerator"), "type_params.numerator")
        metric.denominator = _input(params.get("denominator"), "type_params.denominator")
    elif kind == "derived":
        metric.kind = "derived"
        metric.expr = _text(params.get("expr"))
        key = "input_metrics" if "input_metrics" in params else "metrics"
        metric.inputs = tuple(_input(item, key) for item in params.get(key) or [])
        if not metric.expr or not metric.inputs:
            raise ValueError("a derived metric needs an expr and its input metrics "
                             "(type_params.metrics, or input_metrics)")
    elif kind == "conversion":
        _conversion(metric, params.get("conversion_type_params") or params)
    else:
        raise ValueError(f"metric type '{entry.type}' is not compiled by nl2sql (simple, ratio, "
                         f"derived, cumulative and conversion are)")
    return metric


def _conversion(metric: Metric, params: dict[str, Any]) -> None:
    """A conversion metric's parameters: ``type_params.conversion_type_params`` (legacy spec,
    manifest) or the metric's own keys (latest spec: ``base_metric`` and ``conversion_metric``
    name simple metrics instead of measures)."""
    metric.kind = "conversion"
    entity = _text(params.get("entity"))
    if not entity:
        raise ValueError("a conversion metric needs the entity whose events it follows")
    calculation = str(params.get("calculation") or "conversion_rate").strip().lower()
    if calculation not in ("conversion_rate", "conversions"):
        raise ValueError(f"calculation {calculation!r} is not conversion_rate or conversions")
    properties = []
    for item in params.get("constant_properties") or []:
        if not isinstance(item, dict) or not item.get("base_property") \
                or not item.get("conversion_property"):
            raise ValueError("each constant_properties entry needs base_property and "
                             "conversion_property")
        properties.append((str(item["base_property"]), str(item["conversion_property"])))
    conversion = Conversion(("", ""), entity, calculation, window(params.get("window")),
                            tuple(properties))
    if params.get("base_metric") or params.get("conversion_metric"):
        conversion.metrics = (_input(params.get("base_metric"), "base_metric"),
                              _input(params.get("conversion_metric"), "conversion_metric"))
    else:
        base = _input(params.get("base_measure"), "conversion_type_params.base_measure")
        converted = _input(params.get("conversion_measure"),
                           "conversion_type_params.conversion_measure")
        metric.measure = ("", base.metric)
        metric.filters += base.filters
        conversion.measure, conversion.filters = ("", converted.metric), converted.filters
    metric.conversion = conversion
