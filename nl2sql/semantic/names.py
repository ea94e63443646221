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

import re
from dataclasses import dataclass

from nl2sql.errors import MetricQueryError, did_you_mean
from nl2sql.semantic.model import GRAINS, Metric, SemanticModel, Table

METRIC_TIME = "metric_time"
_TEMPLATE = re.compile(
    r"\{\{\s*(Dimension|TimeDimension|Entity)\(\s*['\"]([^'\"]+)['\"]"
    r"(?:\s*,\s*['\"]([^'\"]+)['\"])?[^)]*\)"
    r"(?:\s*\.\s*grain\(\s*['\"]([^'\"]+)['\"]\s*\))?\s*\}\}")


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

    @property
    def is_time(self) -> bool:
        return self.metric_time or self.grain is not None


def read_templates(condition: str) -> str:
    """A dbt filter with its ``{{ Dimension('...') }}`` templates replaced by group-by names."""

    def replace(match: re.Match[str]) -> str:
        kind, name, grain, method_grain = match.groups()
        grain = grain or method_grain
        if kind == "Entity" or not grain:
            return name
        return f"{name}__{grain.lower()}"

    text = _TEMPLATE.sub(replace, condition)
    if "{{" in text:
        raise MetricQueryError(f"the filter {condition!r} uses a template nl2sql does not read; "
                               f"use Dimension('...'), TimeDimension('...', 'grain') or "
                               f"Entity('...'), or plain group-by names.")
    return text


def resolve(model: SemanticModel, name: str) -> GroupBy:
    """The meaning of group-by ``name``; ``MetricQueryError`` naming the closest known name."""
    text = name.strip()
    found = _cube(model, text) if "." in text else _dbt(model, text)
    if found is None:
        hint = did_you_mean(text, all_names(model))
        raise MetricQueryError(f"Unknown group-by '{text}'. {hint}metrics_list shows each "
                               f"metric's dimensions; a time dimension takes a grain "
                               f"({', '.join(GRAINS)}).")
    if found.grain is not None:
        table = model.tables.get(found.table or "")
        dimension = table.dimensions.get(found.dimension or "") if table else None
        if dimension is not None and not dimension.is_time:
            raise MetricQueryError(f"'{text}': {found.dimension} is not a time dimension; "
                                   f"drop the grain.")
    return found


def _split_grain(parts: list[str]) -> tuple[list[str], str | None]:
    if len(parts) > 1 and parts[-1].lower() in GRAINS:
        return parts[:-1], parts[-1].lower()
    return parts, None


def _cube(model: SemanticModel, name: str) -> GroupBy | None:
    parts, grain = _split_grain(name.split("."))
    if len(parts) != 2:
        return None
    table = model.tables.get(parts[0])
    if table is None or table.naming != "cube" or parts[1] not in table.dimensions:
        return None
    return GroupBy(name, table=table.name, dimension=parts[1], grain=grain)


def _dbt(model: SemanticModel, name: str) -> GroupBy | None:
    parts, grain = _split_grain(name.split("__"))
    if parts == [METRIC_TIME]:
        return GroupBy(name, grain=grain, metric_time=True)
    if len(parts) == 1:
        table = _keyed_by(model, parts[0])
        return GroupBy(name, table=table.name, entity=parts[0]) if table and not grain else None
    *path, dimension = parts
    table = _keyed_by(model, path[-1])
    if table is None or dimension not in table.dimensions:
        return None
    if grain is None and table.dimensions[dimension].is_time:
        grain = table.dimensions[dimension].grain
    return GroupBy(name, table=table.name, dimension=dimension, grain=grain, path=tuple(path))


def _keyed_by(model: SemanticModel, entity: str) -> Table | None:
    """The dbt semantic model whose primary (unique, natural) key is ``entity``."""
    return next((t for t in model.tables.values()
                 if t.naming == "dbt" and t.key_of(entity) is not None), None)


def table_names(table: Table) -> list[str]:
    """The group-by names of ``table``'s own dimensions (an entity's key is a group-by too,
    ``customer``, but not listed)."""
    if table.naming == "cube":
        return [f"{table.name}.{d}" for d in table.dimensions]
    if table.primary_entity is None:
        return []
    return [f"{table.primary_entity}__{d}" for d in table.dimensions]


def all_names(model: SemanticModel) -> list[str]:
    names = [METRIC_TIME] if any(t.naming == "dbt" for t in model.tables.values()) else []
    return names + [n for table in model.tables.values() for n in table_names(table)]


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
