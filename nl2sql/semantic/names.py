"""Group-by names, in each format's own spelling, resolved to the dimension they mean.

dbt: ``metric_time`` and ``metric_time__month`` (the measure's aggregation time dimension),
``customer__country`` (dimension ``country`` of the semantic model whose primary entity is
``customer``), ``invoice__customer__country`` (the same, reached through the entity
``invoice``), ``invoice__invoice_date__year`` (a time dimension at a grain) and ``customer``
(an entity's key). Cube: ``invoices.billing_country`` and ``invoices.invoice_date.month``.
dbt's filter templates (``{{ Dimension('customer__country') }}``,
``{{ TimeDimension('metric_time', 'month') }}``, ``{{ Entity('customer') }}``) are read as
the names they stand for.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from nl2sql.errors import MetricQueryError, did_you_mean
from nl2sql.semantic.model import DATE_PARTS, GRAINS, Metric, SemanticModel, Table, Window

METRIC_TIME = "metric_time"
#: A custom granularity's name in a template (``TimeDimension('metric_time', 'fiscal_year')``):
#: the name it makes is checked against the time spines when it is resolved.
_CUSTOM_GRAIN = re.compile(r"^[a-z][a-z0-9_]*$")
_JINJA = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)


@dataclass(frozen=True)
class GroupBy:
    """What one group-by name means: a dimension of ``table`` (at ``grain`` for a time
    dimension), the key of ``entity``, or ``metric_time`` (each measure's own time)."""

    name: str
    table: str | None = None
    dimension: str | None = None
    grain: str | None = None
    path: tuple[str, ...] = ()  # dbt entities to go through, in order (the last: the table's)
    entity: str | None = None
    metric_time: bool = False
    via: tuple[str, ...] = ()  # a Cube view's join path to the table (cube names from its root)
    #: dbt's ``__extract_year``...: a part of the date (one of ``DATE_PARTS``), not a period.
    date_part: str | None = None
    #: A metric filter's metric (``Metric('revenue', group_by=['customer'])``, the name
    #: ``customer__revenue``): its value for the row's ``entity``, not the entity's key.
    metric: str | None = None
    #: A dbt time spine's custom granularity (``metric_time__fiscal_quarter``): the spine's
    #: column for the row's day.
    custom_grain: str | None = None
    #: A Cube custom granularity's offset: periods of ``grain`` starting this much later.
    shift: Window | None = None

    @property
    def is_time(self) -> bool:
        """A period of time (a grain or ``metric_time``); a date part or a custom granularity
        (a label from the time spine) is not one."""
        return (self.metric_time or self.grain is not None) and self.date_part is None \
            and self.custom_grain is None


def read_templates(condition: str) -> str:
    """A dbt filter with its ``{{ Dimension('...') }}`` templates replaced by group-by names.

    Each template is read as the call it is (Python's parser; Jinja's call syntax is the same),
    with MetricFlow's arguments: ``Dimension(name, entity_path)``, ``TimeDimension(name,
    time_granularity_name, entity_path, date_part_name)``, ``Entity(name, entity_path)``,
    ``.grain('month')``, ``.date_part('year')`` (``date_part_name='year'``: the name
    ``metric_time__extract_year``), ``Metric('revenue', group_by=['customer'])`` (the name
    ``customer__revenue``, as MetricFlow names it: the metric's value for the row's customer); an
    ``entity_path`` goes before the name's own entities. What nl2sql cannot honour is an error,
    never dropped."""
    return _JINJA.sub(lambda match: _template_name(match.group(1), condition), condition)


def _unread(condition: str, why: str) -> MetricQueryError:
    return MetricQueryError(f"the filter {condition.strip()!r} {why}; use Dimension('...'), "
                            f"TimeDimension('...', 'grain') or Entity('...'), or plain "
                            f"group-by names.")


def _template_name(source: str, condition: str) -> str:
    """The group-by name one ``{{ ... }}`` template stands for."""
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        raise _unread(condition, "uses a template nl2sql does not read") from None
    methods: list[tuple[str, list[object]]] = []
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        methods.insert(0, (node.func.attr, _literals(node.args, condition)))
        node = node.func.value
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in _CALLS):
        raise _unread(condition, "uses a template nl2sql does not read")
    keywords = {k.arg or "": _literal(k.value, condition) for k in node.keywords}
    call = _CALLS[node.func.id]
    try:
        template = call(*_literals(node.args, condition), **keywords)
        for method, args in methods:
            if method == "grain" and len(args) == 1:
                template = template.at(args[0])
            elif method == "date_part" and len(args) == 1:
                template = template.part(args[0])
            elif method != "descending":
                raise TypeError(f".{method}() is not read")
    except TypeError as error:
        why = str(error).replace(f"{call.__name__}()", f"{node.func.id}()")
        raise _unread(condition, f"cannot be read: {why}") from None
    return template.name


def group_by_name(item: str) -> str:
    """A saved query's group-by (``TimeDimension('metric_time', 'month')``,
    ``Dimension('customer__country')``, or a plain name) as the name it stands for."""
    text = item.strip()
    return _template_name(text, text) if "(" in text else text


def order_name(item: str) -> str:
    """A saved query's order (``Metric('revenue').descending(True)``, a group-by call, or a
    name) as a metric query's: ``-revenue`` when descending."""
    text = item.strip()
    if "(" not in text:
        return text
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise _unread(text, "is not an order nl2sql reads") from None
    descending = False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "descending":
        args = _literals(node.args, text)
        descending, node = bool(args[0]) if args else True, node.func.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("Metric", "metric") and node.args:
        name = _literal(node.args[0], text)
        if not isinstance(name, str):
            raise _unread(text, "passes a template something other than text")
    else:
        name = _template_name(ast.unparse(node), text)
    return f"-{name}" if descending else name


def _literals(nodes: list[ast.expr], condition: str) -> list[object]:
    return [_literal(node, condition) for node in nodes]


def _literal(node: ast.expr, condition: str) -> object:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise _unread(condition, "passes a template something other than text") from None


@dataclass(frozen=True)
class _Template:
    """What a filter template names: entities, the element, and a grain for time."""

    path: tuple[str, ...]
    grain: str | None = None
    date_part: str | None = None

    @property
    def name(self) -> str:
        suffix = (self.grain,) if self.grain else (f"extract_{self.date_part}",) \
            if self.date_part else ()
        return "__".join(self.path + suffix)

    def at(self, grain: object) -> _Template:
        wanted = grain.lower() if isinstance(grain, str) else None
        if wanted not in GRAINS and not (wanted and _CUSTOM_GRAIN.match(wanted)):
            raise TypeError(f"grain {grain!r} is not one of {', '.join(GRAINS)} or a custom "
                            f"granularity's name")
        if self.grain not in (None, wanted):
            raise TypeError(f"two grains ({self.grain} and {wanted})")
        if self.date_part is not None:
            raise TypeError("a grain and a date part")
        return _Template(self.path, wanted)

    def part(self, date_part: object) -> _Template:
        wanted = date_part.lower() if isinstance(date_part, str) else None
        if wanted not in DATE_PARTS:
            raise TypeError(f"date part {date_part!r} is not one of {', '.join(DATE_PARTS)}")
        if self.grain is not None:
            raise TypeError("a grain and a date part")
        return _Template(self.path, None, wanted)


def _named(name: object, entity_path: object) -> _Template:
    if not isinstance(name, str) or not isinstance(entity_path, (list, tuple)) \
            or not all(isinstance(entity, str) for entity in entity_path):
        raise TypeError("it takes a name and a list of entity names")
    parts, grain = _split_grain(name.split("__"))
    date_part = _date_part(parts)
    return _Template((*entity_path, *(parts[:-1] if date_part else parts)), grain, date_part)


def _dimension(dimension_name: object, entity_path: object = (),
               descending: object = None) -> _Template:
    return _named(dimension_name, entity_path)


def _time_dimension(time_dimension_name: object, time_granularity_name: object = None,
                    entity_path: object = (), date_part_name: object = None,
                    descending: object = None, grain: object = None) -> _Template:
    template = _named(time_dimension_name, entity_path)
    for wanted in (time_granularity_name, grain):
        if wanted is not None:
            template = template.at(wanted)
    return template if date_part_name is None else template.part(date_part_name)


@dataclass(frozen=True)
class _MetricTemplate:
    """``Metric('revenue', group_by=['customer'])``: the metric per entity, as a name."""

    metric: str
    by: str

    @property
    def name(self) -> str:
        return f"{self.by}__{self.metric}"


def _metric(metric_name: object, group_by: object = ()) -> _MetricTemplate:
    by = [group_by] if isinstance(group_by, str) else group_by
    if not isinstance(metric_name, str) or not isinstance(by, (list, tuple)) or len(by) != 1 \
            or not isinstance(by[0], str) or "__" in by[0]:
        # "_metric()" reads as the template's own name (``_template_name`` replaces it)
        raise TypeError("_metric() takes a metric's name and group_by: one entity "
                        "(['customer'])")
    return _MetricTemplate(metric_name.strip(), by[0].strip())


_CALLS = {"Dimension": _dimension, "dimension": _dimension,
          "TimeDimension": _time_dimension, "time_dimension": _time_dimension,
          "Entity": _dimension, "entity": _dimension, "Metric": _metric, "metric": _metric}


def resolve(model: SemanticModel, name: str) -> GroupBy:
    """The meaning of group-by ``name``; ``MetricQueryError`` naming the closest known name."""
    text = name.strip()
    found = _cube(model, text) if "." in text else _dbt(model, text)
    if found is None:
        hint = did_you_mean(text, all_names(model))
        raise MetricQueryError(f"Unknown group-by '{text}'. {hint}metrics_list shows each "
                               f"metric's dimensions; a time dimension takes a grain "
                               f"({', '.join(GRAINS)}).")
    if found.grain is not None or found.date_part is not None or found.custom_grain:
        table = model.tables.get(found.table or "")
        dimension = table.dimensions.get(found.dimension or "") if table else None
        if dimension is not None and not dimension.is_time:
            what = "grain" if found.grain else "date part" if found.date_part else \
                "custom granularity"
            raise MetricQueryError(f"'{text}': {found.dimension} is not a time dimension; "
                                   f"drop the {what}.")
    return found


def _split_grain(parts: list[str]) -> tuple[list[str], str | None]:
    if len(parts) > 1 and parts[-1].lower() in GRAINS:
        return parts[:-1], parts[-1].lower()
    return parts, None


def _date_part(parts: list[str]) -> str | None:
    """The date part a dbt name's last piece extracts (``extract_year``), if it does."""
    last = parts[-1].lower() if len(parts) > 1 else ""
    found = last.removeprefix("extract_")
    return found if last.startswith("extract_") and found in DATE_PARTS else None


def _cube(model: SemanticModel, name: str) -> GroupBy | None:
    parts, grain = _split_grain(name.split("."))
    custom = parts.pop() if len(parts) == 3 else None  # a custom granularity's name
    if len(parts) != 2:
        return None
    exposed = model.dimension_aliases.get(".".join(parts))
    if exposed is not None:
        found = GroupBy(name, table=exposed.table, dimension=exposed.dimension, grain=grain,
                        via=exposed.via)
    else:
        table = model.tables.get(parts[0])
        if table is None or table.naming != "cube" or parts[1] not in table.dimensions:
            return None
        found = GroupBy(name, table=table.name, dimension=parts[1], grain=grain)
    if custom is None:
        return found
    dimension = model.tables[found.table or ""].dimensions[found.dimension or ""]
    granularity = dimension.granularity(custom)
    if granularity is None:
        return None
    return replace(found, grain=granularity[0], shift=granularity[1])


def _dbt(model: SemanticModel, name: str) -> GroupBy | None:
    parts, grain = _split_grain(name.split("__"))
    date_part = _date_part(parts)
    custom = parts[-1].lower() if len(parts) > 1 and grain is None and date_part is None and \
        model.custom_grain(parts[-1].lower()) else None
    if date_part is not None or custom is not None:
        parts = parts[:-1]
    if parts == [METRIC_TIME]:
        return GroupBy(name, grain=grain, metric_time=True, date_part=date_part,
                       custom_grain=custom)
    if len(parts) == 1:
        table = _keyed_by(model, parts[0])
        return GroupBy(name, table=table.name, entity=parts[0]) \
            if table and not grain and not date_part and not custom else None
    *path, dimension = parts
    table = _keyed_by(model, path[-1])
    if table is not None and len(parts) == 2 and not grain and not date_part and not custom and \
            dimension not in table.dimensions and (dimension in model.metrics or
                                                   model.broken(dimension)):
        metric_named(model, dimension)  # a broken one says why
        return GroupBy(name, table=table.name, entity=path[0], metric=dimension)
    if table is None or dimension not in table.dimensions:
        return None
    if grain is None and date_part is None and custom is None and \
            table.dimensions[dimension].is_time:
        grain = table.dimensions[dimension].grain
    return GroupBy(name, table=table.name, dimension=dimension, grain=grain, path=tuple(path),
                   date_part=date_part, custom_grain=custom)


def _keyed_by(model: SemanticModel, entity: str) -> Table | None:
    """The dbt semantic model whose primary (unique, natural) key is ``entity``."""
    return next((t for t in model.tables.values()
                 if t.naming == "dbt" and t.key_of(entity) is not None), None)


def table_names(table: Table) -> list[str]:
    """The group-by names of ``table``'s own dimensions offered to the agent (an entity's key
    is a group-by too, ``customer``, but not listed; nor a Cube dimension that is not public,
    a primary key by default)."""
    if table.naming == "cube":
        return [f"{table.name}.{name}" for name, d in table.dimensions.items() if d.listed]
    if table.primary_entity is None:
        return []
    return [f"{table.primary_entity}__{d}" for d in table.dimensions]


def all_names(model: SemanticModel) -> list[str]:
    names = [METRIC_TIME] if any(t.naming == "dbt" for t in model.tables.values()) else []
    return names + [n for table in model.tables.values() for n in table_names(table)] + \
        list(model.dimension_aliases)


def parse_order(item: str, columns: list[str]) -> tuple[str, bool]:
    """``-revenue``, ``revenue desc`` or ``revenue``: (output column, descending)."""
    text = item.strip()
    descending = text.startswith("-")
    text = text.lstrip("-").strip()
    words = text.rsplit(None, 1)
    if len(words) == 2 and words[1].lower() in ("asc", "desc"):
        text, descending = words[0], words[1].lower() == "desc"
    if text not in columns:
        hint = did_you_mean(text, columns)
        raise MetricQueryError(f"order_by '{item}' is not a metric or group-by of the query. "
                               f"{hint}Use one of: {', '.join(columns)} ('-name' for "
                               f"descending).")
    return text, descending


def metric_named(model: SemanticModel, name: str) -> Metric:
    """Metric ``name``; a broken one says why, an unknown one names the closest."""
    metric = model.metrics.get(name.strip())
    if metric is not None:
        return metric
    broken = model.broken(name.strip())
    if broken is not None:
        raise MetricQueryError(f"Metric '{name}' cannot be used: {broken.reason} "
                               f"({broken.file}); fix the semantic model.")
    hint = did_you_mean(name, model.metrics)
    raise MetricQueryError(f"Unknown metric '{name}'. {hint}Known metrics: "
                           f"{', '.join(sorted(model.metrics)) or 'none'}.")
