"""Cube data models (``cubes:`` YAML): cubes, their dimensions, measures and joins.

A cube is a ``Table`` (``sql_table`` or ``sql``); each measure is a metric named
``cube.measure``: count, count_distinct(_approx), sum, avg, min and max are simple,
``rolling_window`` (or the older ``running_total``) cumulative, and ``number`` a derived metric
over the measures it references (``{revenue} / NULLIF({count}, 0)``) or an aggregate expression
of its own; a multi-stage one with a ``time_shift`` reads its measures a year (its interval)
earlier or later. Joins are links: ``many_to_one`` (``belongs_to``) from the cube, ``one_to_many``
(``has_many``) from the other cube back to it, ``one_to_one`` both ways. ``{CUBE}``,
``{CUBE.column}`` and ``{dimension}`` in SQL are resolved here or by the compiler; Jinja
templates are not read (JavaScript models are, turned into this form by ``cube_js``).
Properties and types may be spelled in camelCase, as Cube allows in YAML (``sqlTable``,
``rollingWindow``, ``countDistinct``). A view (``views:``) exposes members under its own
name: a measure as the same metric named ``view.member``, a dimension joined along the view's
``join_path`` (``SemanticModel.dimension_aliases``); so is a proxy dimension, whose SQL is
another cube's member alone (``{users.city}``). Segments are true/false dimensions; ``extends``
merges the parent cube's members in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from nl2sql.semantic.dbt import _reason, window
from nl2sql.semantic.model import (GRAINS, Dimension, DimensionAlias, Link, Measure, Metric,
                                  MetricInput, Problem, Proxy, SemanticModel, Table, Window)

#: The start of a ``case`` label's placeholder in a dimension's SQL (``_label_sql``).
LABEL = "nl2sql_label_"
#: ``{name}`` and ``{cube.name}`` references in Cube SQL.
REFERENCE = re.compile(r"\{\s*([A-Za-z_][\w]*)(?:\.([A-Za-z_][\w]*))?\s*\}")
_AGGREGATIONS = {"count": "count", "count_distinct": "count_distinct",
                 "count_distinct_approx": "count_distinct", "sum": "sum", "avg": "average",
                 "min": "min", "max": "max", "running_total": "sum"}
#: Measure types whose SQL is an expression: over other measures, or an aggregate itself.
_EXPRESSIONS = {"number", "number_agg", "string", "time", "boolean"}
_MANY_TO_ONE = {"many_to_one", "belongs_to", "belongsto", "manytoone"}
_ONE_TO_MANY = {"one_to_many", "has_many", "hasmany", "onetomany"}
_ONE_TO_ONE = {"one_to_one", "has_one", "hasone", "onetoone"}
#: Where a camelCase word ends (``sqlTable``, ``countDistinctApprox``).
_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _snake(name: str) -> str:
    """A property or type in the snake_case this reader uses: Cube reads YAML in either
    spelling, ``sqlTable`` and ``sql_table``, ``countDistinct`` and ``count_distinct``."""
    return _CAMEL_HUMP.sub("_", name).lower()


def _snake_keys(value: Any) -> Any:
    """``value`` with every mapping's keys in snake_case (names are values, never keys)."""
    if isinstance(value, dict):
        return {_snake(k) if isinstance(k, str) else k: _snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snake_keys(item) for item in value]
    return value


class _Visible(BaseModel):
    """``public: false`` (``shown: false`` before Cube 0.31): not offered to data consumers;
    anything but ``false`` (``COMPILE_CONTEXT...``) counts as public."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    public: Any = None  # None: not said (public, except a primary key)
    shown: Any = None

    @property
    def hidden(self) -> bool:
        return self.public is False or self.shown is False


class _Member(_Visible):

    name: str = Field(min_length=1)
    sql: Any = None
    type: str = "string"
    title: str | None = None
    description: str | None = None
    multi_stage: bool = False  # Cube's multi-stage calculations: not compiled (``_staged``)

    @field_validator("type")
    @classmethod
    def _snake_type(cls, value: str) -> str:
        return _snake(value)


class _Dimension(_Member):
    case: dict[str, Any] | None = None
    primary_key: bool = False
    sub_query: bool = False  # its SQL is a measure, read per row (``PartBuilder._measured``)
    granularities: list[Any] = Field(default_factory=list)

    @property
    def hidden(self) -> bool:
        """Cube's rule: a primary key is private unless it says ``public: true`` (or the older
        ``shown: true``)."""
        return super().hidden or (self.primary_key and True not in (self.public, self.shown))

    def read(self, expr: str, **more: Any) -> Dimension:
        """The dimension as the model keeps it: SQL ``expr`` (or ``more``'s metric), shown
        with its title and description, listed unless private."""
        return Dimension(self.name, expr, label=self.title or "",
                         description=self.description or "", listed=not self.hidden, **more)


class _Measure(_Member):
    filters: list[dict[str, Any]] = Field(default_factory=list)
    rolling_window: dict[str, Any] | None = None
    time_shift: Any = None
    group_by: Any = None
    reduce_by: Any = None
    add_group_by: Any = None


def _staged(member: _Member) -> None:
    """Refuse what a multi-stage calculation changes (a ``reduce_by``, a ``group_by``): read as
    a plain member it would answer another figure under its name. A ``time_shift`` alone is
    compiled (``_time_shift``). (A ``sub_query`` dimension names a measure: read as that
    measure per row where its SQL is read.)"""
    staged = [key for key in ("multi_stage", "time_shift", "group_by", "reduce_by",
                              "add_group_by") if getattr(member, key, None)]
    if isinstance(member, _Measure) and member.time_shift and \
            set(staged) <= {"multi_stage", "time_shift"}:
        return
    if staged:
        raise ValueError(f"{', '.join(staged)}: multi-stage calculations are not compiled by "
                         f"nl2sql")


class _Join(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    name: str = Field(min_length=1)
    relationship: str
    sql: str


class _Cube(_Visible):

    name: str = Field(min_length=1)
    sql_table: str | None = None
    sql: str | None = None
    title: str | None = None
    description: str | None = None
    joins: list[_Join] = Field(default_factory=list)
    dimensions: list[_Dimension] = Field(default_factory=list)
    measures: list[_Measure] = Field(default_factory=list)
    #: Named conditions: read as dimensions of a true/false value (a filter, or a group-by).
    segments: list[_Dimension] = Field(default_factory=list)


@dataclass
class CubeFiles:
    """What a model's Cube files hold: each cube as a table and its measures as metrics, what
    cannot be used, each cube's declared joins (links are made once every table is known) and
    the views (read last: a view may name any cube)."""

    tables: list[Table] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    joins: dict[str, list[_Join]] = field(default_factory=dict)
    views: list[tuple[Path, Any]] = field(default_factory=list)


def read_cubes(documents: list[tuple[Path, dict[str, Any]]]) -> CubeFiles:
    """The cubes and views of every Cube file (path, parsed document) of a model; a cube may
    extend one of another file."""
    sources = {raw["name"]: raw for _, document in documents for raw in _cubes(document)
               if isinstance(raw, dict) and isinstance(raw.get("name"), str)}
    read = CubeFiles()
    for path, document in documents:
        read.views += [(path, raw) for raw in _snake_keys(document.get("views") or [])]
        for number, raw in enumerate(_cubes(document), 1):
            _read_cube(raw, number, path, sources, read)
    return read


def _read_cube(raw: Any, number: int, path: Path, sources: dict[str, dict[str, Any]],
               read: CubeFiles) -> None:
    """One cube (with what it ``extends`` of ``sources``) and a metric per measure."""
    name = str(raw.get("name") or f"#{number}") if isinstance(raw, dict) else f"#{number}"
    broken: dict[tuple[str, str], str] = {}  # (kind, member) -> why it cannot be used
    try:
        cube = _Cube.model_validate(_extended(raw, sources))
        table = _table(cube, path, broken)
    except (ValidationError, ValueError) as exc:
        read.problems.append(Problem(path, "cube", name, _reason(exc)))
        return
    read.tables.append(table)
    read.joins[cube.name] = cube.joins
    read.problems += [Problem(path, "cube", name, f"dimension '{member}': {why}")
                      for (kind, member), why in broken.items() if kind == "dimension"]
    for measure in cube.measures:
        try:
            if ("measure", measure.name) in broken:
                raise ValueError(broken["measure", measure.name])
            read.metrics.append(_metric(cube, measure, table))
        except ValueError as exc:
            read.problems.append(Problem(path, "metric", f"{cube.name}.{measure.name}",
                                         str(exc)))


def _cubes(document: dict[str, Any]) -> list[Any]:
    """The document's cubes, their properties in snake_case."""
    return _snake_keys(document.get("cubes") or [])


def _extended(raw: Any, sources: dict[str, dict[str, Any]],
              seen: tuple[str, ...] = ()) -> Any:
    """A cube with what it ``extends``: the parent's dimensions, measures, segments and joins
    that it does not define again, and the parent's other properties where it has none (not
    ``public``: a private base cube is the usual parent of public ones)."""
    if not isinstance(raw, dict) or not raw.get("extends"):
        return raw
    parent_name, chain = str(raw["extends"]), (*seen, str(raw.get("name")))
    if parent_name not in sources:
        raise ValueError(f"extends unknown cube '{parent_name}'")
    if parent_name in chain:
        raise ValueError(f"extends itself: {' -> '.join((*chain, parent_name))}")
    parent = _extended(sources[parent_name], sources, chain)
    merged = {key: value for key, value in parent.items()
              if key not in ("name", "public", "shown", "title", "description")}
    if "sql" in raw or "sql_table" in raw:  # the child's own source replaces the parent's
        merged.pop("sql", None)
        merged.pop("sql_table", None)
    merged.update({key: value for key, value in raw.items() if key != "extends"})
    for key in ("dimensions", "measures", "segments", "joins"):
        own = [m for m in raw.get(key) or [] if isinstance(m, dict)]
        names = {m.get("name") for m in own}
        merged[key] = [m for m in parent.get(key) or []
                       if isinstance(m, dict) and m.get("name") not in names] + own
    return merged


def _table(cube: _Cube, path: Path, broken: dict[tuple[str, str], str]) -> Table:
    """The cube as a table; a dimension or measure whose SQL cannot be read is left out and
    goes into ``broken`` with the reason (the cube's other members stay usable)."""
    if not cube.sql_table and not cube.sql:
        raise ValueError("a cube needs sql_table or sql")
    table = Table(name=cube.name, file=path, relation=cube.sql_table,
                  sql=None if cube.sql_table else cube.sql, naming="cube",
                  description=cube.description or "")
    sql_of: dict[str, str] = {}
    members = [*cube.dimensions, *cube.segments]
    measure_names = {m.name for m in cube.measures}
    for dim in members:
        try:
            _staged(dim)
            sql_of[dim.name] = _dimension_sql(dim)
            for match in REFERENCE.finditer(sql_of[dim.name]):
                if _member(match) in measure_names:  # a measure, not a column: a sub_query
                    sql = sql_of.pop(dim.name)
                    if not dim.sub_query:
                        raise ValueError(_SUB_QUERY.format(measure=match.group(0)))
                    if not REFERENCE.fullmatch(sql.strip()):
                        raise ValueError(f"{match.group(0)} is a measure within an expression "
                                         f"(a sub_query dimension is read as one measure, "
                                         f"{{orders.count}})")
                    table.dimensions[dim.name] = dim.read(
                        "", metric=f"{cube.name}.{_member(match)}")
                    break
        except ValueError as exc:
            broken["dimension", dim.name] = str(exc)
        # a proxy: its whole SQL another cube's member
        if (proxy := REFERENCE.fullmatch(sql_of.get(dim.name, "").strip())) and \
                proxy.group(2) and proxy.group(1) not in ("CUBE", cube.name):
            table.proxies[dim.name] = Proxy(proxy.group(1), proxy.group(2), dim.read(""),
                                            dim.sub_query)
            del sql_of[dim.name]
    for dim in (dim for dim in members if dim.name in sql_of):
        try:
            table.dimensions[dim.name] = dim.read(
                _own_sql(sql_of[dim.name], sql_of, set()), is_time=dim.type.lower() == "time",
                granularities=tuple(_granularity(g) for g in dim.granularities))
        except ValueError as exc:
            broken["dimension", dim.name] = str(exc)
    table.primary_key = tuple(d.name for d in cube.dimensions
                              if d.primary_key and d.name in table.dimensions)
    measures = {m.name for m in cube.measures}
    for measure in cube.measures:
        agg = _AGGREGATIONS.get(measure.type.lower())
        try:
            _staged(measure)
            filters = tuple(_own_sql(sql, sql_of, set()) for sql in _filters(measure)
                            if not _crosses(sql))
            if agg is not None or not _references(measure, measures):
                expr = _own_sql(str(measure.sql), sql_of, set()) \
                    if measure.sql is not None else None
                table.measures[measure.name] = Measure(measure.name, agg, expr, filters=filters)
        except ValueError as exc:
            broken["measure", measure.name] = str(exc)
    return table


#: A Cube interval or offset: ``1 year``, ``-1 day``, ``3 months``.
_INTERVAL = re.compile(r"^\s*(-?\d+)\s+([a-z]+?)s?\s*$", re.IGNORECASE)


def _granularity(raw: Any) -> tuple[str, str, Window]:
    """A custom granularity ``{name: fiscal_year, interval: 1 year, offset: 1 month}``: one of a
    grain, starting ``offset`` later (no offset: the grain itself)."""
    if not isinstance(raw, dict) or not raw.get("name") or not raw.get("interval"):
        raise ValueError("each of its granularities needs a name and an interval")
    name = str(raw["name"])
    interval = _INTERVAL.match(str(raw["interval"]))
    if interval is None or interval.group(2).lower() not in GRAINS or interval.group(1) != "1":
        raise ValueError(f"granularity '{name}': interval {raw['interval']!r} is not one "
                         f"{'/'.join(GRAINS)} (other intervals and an origin are not compiled)")
    if raw.get("origin"):
        raise ValueError(f"granularity '{name}': an origin is not compiled (an offset is)")
    offset = _INTERVAL.match(str(raw.get("offset") or "0 day"))
    if offset is None or offset.group(2).lower() not in GRAINS:
        raise ValueError(f"granularity '{name}': offset {raw.get('offset')!r} is not a number "
                         f"of {'/'.join(GRAINS)}s")
    return name, interval.group(2).lower(), Window(int(offset.group(1)), offset.group(2).lower())


def _dimension_sql(dim: _Dimension) -> str:
    """A dimension's SQL: its ``sql``, or its ``case`` (``when`` conditions with labels, an
    ``else`` label; a label is text or ``{sql: ...}``) as a CASE expression."""
    if dim.sql is not None:
        return str(dim.sql)
    if not dim.case:
        raise ValueError("it has no sql")
    whens = dim.case.get("when")
    if not isinstance(whens, list) or not whens:
        raise ValueError("its case has no 'when' list")
    parts = ["CASE"]
    for when in whens:
        if not isinstance(when, dict) or when.get("sql") is None or "label" not in when:
            raise ValueError("each 'when' of its case needs sql and label")
        parts.append(f"WHEN ({when['sql']}) THEN {_label_sql(when['label'])}")
    otherwise = dim.case.get("else")
    if isinstance(otherwise, dict) and "label" in otherwise:
        parts.append(f"ELSE {_label_sql(otherwise['label'])}")
    return " ".join([*parts, "END"])


def _label_sql(label: Any) -> str:
    """A ``case`` label as SQL: ``{sql: ...}`` as the expression, text as ``LABEL`` and its
    UTF-8 bytes in hex (an identifier every dialect reads alike), made the string literal of
    the database's dialect when the SQL is parsed: a quote is written ``''`` in most, ``\'``
    in Spark SQL, where ``'a''b'`` is two strings run together."""
    if isinstance(label, dict):
        if label.get("sql") is None:
            raise ValueError("a label of its case is a mapping without sql")
        return f"({label['sql']})"
    return LABEL + str(label).encode().hex()


def _filters(measure: _Measure) -> list[str]:
    return [str(f["sql"]) for f in measure.filters if f.get("sql")]


def _crosses(sql: str) -> bool:
    """Whether Cube SQL names another cube's member (``{users.city}``)."""
    return any(cube != "CUBE" and member for cube, member in REFERENCE.findall(sql))


def _condition(sql: str, cube: str) -> str:
    """A measure filter naming other cubes' members as a condition over group-by names
    (``{users.city} = 'Paris' AND {status} = 'paid'`` -> ``users.city = 'Paris' AND
    orders.status = 'paid'``), which the metric applies to its rows like a dbt filter."""

    def name(match: re.Match[str]) -> str:
        owner, member = match.groups()
        if member is None and (owner == "CUBE" or sql[match.end():].startswith(".")):
            raise ValueError(f"its filter {sql!r} names another cube and a column of its own "
                             f"({{CUBE}}.column); write {{CUBE.dimension}} or {{dimension}}")
        return f"{cube}.{owner}" if member is None else \
            f"{cube if owner == 'CUBE' else owner}.{member}"

    return REFERENCE.sub(name, sql)


def _member(match: re.Match[str]) -> str | None:
    """The member a ``{x}`` or ``{CUBE.x}`` reference names (None: ``{CUBE}`` itself or
    another cube's member)."""
    cube, member = match.groups()
    if cube == "CUBE":
        return member
    return cube if member is None else None


def _references(measure: _Measure, measures: set[str]) -> list[str]:
    """The cube's measures that a ``number`` measure's SQL names."""
    found = []
    for match in REFERENCE.finditer(str(measure.sql or "")):
        name = _member(match)
        if name in measures and name not in found:
            found.append(name)
    return found


def _own_sql(sql: str, dimensions: dict[str, str], seen: set[str]) -> str:
    """Cube SQL over the cube's own table: ``{CUBE.x}`` and ``{x}`` become the dimension x's
    SQL (or column x of ``{CUBE}``); other cubes are not reachable from here."""

    def replace(match: re.Match[str]) -> str:
        if match.group(0).replace(" ", "") == "{CUBE}":
            return "{CUBE}"
        name = _member(match)
        if name is None:
            raise ValueError(f"{match.group(0)} refers to another cube; nl2sql reads SQL over "
                             f"the cube's own table only")
        if name in dimensions and name not in seen:
            return f"({_own_sql(dimensions[name], dimensions, seen | {name})})"
        return "{CUBE}." + name

    if "{{" in sql or "{%" in sql:
        raise ValueError(f"templated SQL ({sql!r}) is not read")
    return REFERENCE.sub(replace, sql)


def _metric(cube: _Cube, measure: _Measure, table: Table) -> Metric:
    metric = Metric(name=f"{cube.name}.{measure.name}", kind="simple", file=table.file,
                    naming="cube", label=measure.title or "",
                    description=measure.description or "",
                    listed=not (measure.hidden or cube.hidden))
    kind = measure.type.lower()
    if kind not in _AGGREGATIONS and kind not in _EXPRESSIONS:
        raise ValueError(f"measure type '{measure.type}' is not compiled by nl2sql")
    _staged(measure)
    if measure.name in table.measures:
        metric.measure = (cube.name, measure.name)
        metric.filters = tuple(_condition(sql, cube.name) for sql in _filters(measure)
                               if _crosses(sql))
        rolling = measure.rolling_window or ({"trailing": "unbounded"}
                                             if kind == "running_total" else None)
        if rolling:
            metric.kind = "cumulative"
            trailing = rolling.get("trailing")
            metric.window = None if trailing in (None, "unbounded") else window(trailing)
            if rolling.get("leading") or rolling.get("offset") not in (None, "end"):
                raise ValueError("rolling_window with leading or offset is not compiled")
        return metric
    names = _references(measure, {m.name for m in cube.measures})
    metric.kind = "derived"
    offset = _time_shift(measure)
    metric.inputs = tuple(MetricInput(f"{cube.name}.{name}", alias=name, offset=offset)
                          for name in names)
    metric.expr = REFERENCE.sub(lambda m: m.group(0) if _member(m) not in names else _member(m),
                                str(measure.sql))
    if "{" in metric.expr:
        raise ValueError(f"sql {measure.sql!r} mixes measures with other references")
    return metric


def _time_shift(measure: _Measure) -> Window | None:
    """A multi-stage measure's ``time_shift`` (``[{interval: 1 year, type: prior}]``, one
    shift; its ``time_dimension`` is the query's one time dimension): how much earlier its
    measures are read (``next``: a negative window, later); None without one."""
    if not measure.time_shift:
        return None
    shifts = measure.time_shift if isinstance(measure.time_shift, list) else [measure.time_shift]
    if len(shifts) != 1 or not isinstance(shifts[0], dict):
        raise ValueError("time_shift: one {interval, type} entry is compiled by nl2sql")
    shift = {_snake(str(key)): value for key, value in shifts[0].items()}
    if shift.get("name") or not shift.get("interval"):
        raise ValueError("time_shift: a named shift (a calendar's) is not compiled by nl2sql; "
                         "give interval and type")
    moved = window(shift["interval"])
    kind = str(shift.get("type") or "prior").lower()
    if moved is None or moved.count is None or kind not in ("prior", "next"):
        raise ValueError(f"time_shift: interval {shift['interval']!r} with type {kind!r} (prior "
                         f"or next)")
    return moved if kind == "prior" else Window(-moved.count, moved.grain)


class _ViewCube(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    join_path: str = Field(min_length=1)
    includes: str | list[str | dict[str, Any]] = Field(default_factory=list)
    excludes: list[str] = Field(default_factory=list)
    prefix: bool = False
    alias: str | None = None


class _View(_Visible):
    name: str = Field(min_length=1)
    cubes: list[_ViewCube] = Field(default_factory=list)


def add_views(model: SemanticModel, views: list[tuple[Path, Any]]) -> None:
    """Each view's members as names of their own: a measure as a metric ``view.member`` (the
    cube's metric under another name), a dimension as a group-by joined along the view's join
    path. A member that cannot be exposed is a problem of the view; the others stay usable."""
    for number, (path, raw) in enumerate(views, 1):
        name = str(raw.get("name") or f"#{number}") if isinstance(raw, dict) else f"#{number}"
        try:
            view = _View.model_validate(raw)
            if name in model.tables:
                raise ValueError(f"a cube is named '{name}' too")
            for item in view.cubes:
                _expose(model, view, item)
        except (ValidationError, ValueError) as exc:
            model.problems.append(Problem(path, "view", name, _reason(exc)))


def _expose(model: SemanticModel, view: _View, item: _ViewCube) -> None:
    via = tuple(item.join_path.split("."))
    unknown = [cube for cube in via if cube not in model.tables]
    if unknown:
        raise ValueError(f"join_path '{item.join_path}' names unknown cube '{unknown[0]}'")
    cube = model.tables[via[-1]]
    members = list(dict.fromkeys([*cube.dimensions, *cube.proxies, *cube.measures]))
    if item.includes == "*":
        wanted: list[str | dict[str, Any]] = [m for m in members if m not in item.excludes]
    elif isinstance(item.includes, str):
        raise ValueError(f"includes is '{item.includes}': give \"*\" or a list of members")
    else:
        wanted = item.includes
    prefix = f"{item.alias or cube.name}_" if item.prefix else ""
    for entry in wanted:
        member = entry if isinstance(entry, str) else str(entry.get("name") or "")
        spec = entry if isinstance(entry, dict) else {}
        exposed = f"{view.name}.{prefix}{spec.get('alias') or member}"
        if member in cube.dimensions:
            model.dimension_aliases[exposed] = DimensionAlias(cube.name, member, via)
        elif f"{cube.name}.{member}" in model.dimension_aliases:  # a proxy: its own path
            model.dimension_aliases[exposed] = model.dimension_aliases[f"{cube.name}.{member}"]
        elif f"{cube.name}.{member}" in model.metrics:
            metric = model.metrics[f"{cube.name}.{member}"]
            model.metrics[exposed] = replace(
                metric, name=exposed, label=spec.get("title") or metric.label,
                description=spec.get("description") or metric.description, view=view.name,
                listed=not view.hidden)
        elif item.includes != "*":  # "*" leaves out what the cube's own problems name
            why = model.broken(f"{cube.name}.{member}")
            raise ValueError(f"member '{member}' of '{cube.name}' "
                             + (f"cannot be used: {why.reason}" if why else "is unknown"))


def add_proxies(model: SemanticModel, tables: list[Table]) -> None:
    """Each proxy dimension as a name for the member it names (joined by the shortest path),
    or with ``sub_query`` as that measure per row; one naming an unknown cube or member, or a
    measure per row of a cube without one primary key, is a problem of its cube."""
    for table in tables:
        for name, proxy in table.proxies.items():
            cube, member = proxy.cube, proxy.member
            target = model.tables.get(cube)
            if target is not None and (member in target.measures or  # or a number over them
                                       f"{cube}.{member}" in model.metrics):
                if proxy.sub_query:
                    table.dimensions[name] = replace(proxy.shown, metric=f"{cube}.{member}")
                else:
                    model.problems.append(Problem(table.file, "cube", table.name,
                                                  f"dimension '{name}': " + _SUB_QUERY.format(
                                                      measure=f"{{{cube}.{member}}}")))
                continue
            if target is None or member not in target.dimensions:
                model.problems.append(Problem(table.file, "cube", table.name,
                                              f"dimension '{name}': {{{cube}.{member}}} is not "
                                              f"a dimension or measure of a cube"))
                continue
            model.dimension_aliases[f"{table.name}.{name}"] = DimensionAlias(cube, member, ())
        measured = [d for d in table.dimensions.values() if d.metric is not None]
        for dimension in measured if len(table.primary_key) != 1 else []:
            del table.dimensions[dimension.name]
            model.problems.append(Problem(table.file, "cube", table.name, (
                f"dimension '{dimension.name}': {{{dimension.metric}}} per row needs the "
                f"cube's primary key (one dimension with primary_key: true)")))


#: A dimension naming a measure without ``sub_query: true`` (Cube refuses it too).
_SUB_QUERY = "{measure} is a measure: a dimension reads it per row with sub_query: true"


def cube_links(tables: list[Table], document_joins: dict[str, list[_Join]]) -> list[Problem]:
    """The links of every cube's ``joins`` (read after all cubes, which may be in other
    files); a join to an unknown cube or of an unknown relationship is a problem."""
    problems = []
    by_name = {t.name: t for t in tables}
    for table in tables:
        for join in document_joins.get(table.name, []):
            relationship = join.relationship.replace(" ", "").lower()
            target = by_name.get(join.name)
            if target is None or relationship not in _MANY_TO_ONE | _ONE_TO_MANY | _ONE_TO_ONE:
                why = (f"joins unknown cube '{join.name}'" if target is None else
                       f"join to '{join.name}' has an unknown relationship '{join.relationship}'")
                problems.append(Problem(table.file, "cube", table.name, why))
                continue
            if relationship in _MANY_TO_ONE | _ONE_TO_ONE:
                table.links.append(Link(target.name, condition=join.sql, owner=table.name))
            if relationship in _ONE_TO_MANY | _ONE_TO_ONE:
                target.links.append(Link(table.name, condition=join.sql, owner=table.name))
    return problems



