"""What a metric can be asked for: its label, description and the group-by names it takes
(the dimensions of every table its measures reach through many-to-one joins; ``metric_time``
when each of its measures has a time dimension). Time dimensions are listed without a grain:
a query adds one (``metric_time__month``, ``invoices.invoice_date.month``)."""

from __future__ import annotations

from dataclasses import dataclass

from nl2sql.semantic.model import MAX_HOPS, Metric, SemanticModel
from nl2sql.semantic.names import METRIC_TIME, table_names


@dataclass(frozen=True)
class MetricInfo:
    name: str
    label: str
    description: str
    dimensions: tuple[str, ...]
    kind: str = "simple"
    file: str = ""

    def as_dict(self) -> dict[str, object]:
        """The contract's ``{name, label, description, dimensions}``."""
        return {"name": self.name, "label": self.label, "description": self.description,
                "dimensions": list(self.dimensions)}


def measures_of(model: SemanticModel, metric: Metric,
                seen: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """The (table, measure) pairs a metric reads, through its inputs."""
    if metric.measure is not None:
        return [metric.measure]
    found: list[tuple[str, str]] = []
    for item in metric.input_metrics():
        inner = model.metrics.get(item.metric)
        if inner is not None and item.metric not in seen:
            found += [m for m in measures_of(model, inner, seen | {metric.name}) if m not in found]
    return found


def reachable(model: SemanticModel, start: str, fanning: bool = False) -> list[str]:
    """``start`` and the tables its many-to-one links reach (breadth first); ``fanning``:
    also through Cube joins walked back (one row meeting many, counted once per group)."""
    order, frontier = [start], [start]
    for _ in range(MAX_HOPS):
        frontier = [link.target for name in frontier
                    for link in [*model.tables[name].links,
                                 *(model.joins_back(name) if fanning else [])]
                    if link.target not in order]
        order += list(dict.fromkeys(frontier))
    return order


def group_by_names(model: SemanticModel, metric: Metric) -> tuple[str, ...]:
    """The group-by names every measure of ``metric`` can be grouped by."""
    measures = measures_of(model, metric)
    common: list[str] | None = None
    for table_name, measure in measures:
        # a Cube measure groups by dimensions across a one-to-many join too (with its cube's
        # primary key: counted once per group), as in Cube's own queries
        table = model.tables[table_name]
        tables = reachable(model, table_name,
                           fanning=table.naming == "cube" and bool(table.primary_key))
        owners = [metric.view] if metric.view else tables
        names = [] if metric.view else [n for t in tables for n in table_names(model.tables[t])]
        names += [n for owner in owners for n, alias in model.dimension_aliases.items()
                  if n.startswith(f"{owner}.") and alias.table in tables]
        if model.tables[table_name].measures[measure].time_dimension and \
                model.tables[table_name].naming == "dbt":
            names.insert(0, METRIC_TIME)
        common = names if common is None else [n for n in common if n in names]
    return tuple(common or ())


def describe(model: SemanticModel) -> list[MetricInfo]:
    """Every usable metric offered to data consumers (not Cube's ``public: false``), by
    name."""
    return [MetricInfo(name=m.name, label=m.label or m.name, description=m.description,
                       dimensions=group_by_names(model, m), kind=m.kind, file=str(m.file))
            for m in sorted(model.metrics.values(), key=lambda m: m.name) if m.listed]
