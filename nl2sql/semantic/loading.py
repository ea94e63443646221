"""A database's ``semantic_model:`` path read into one ``SemanticModel``, re-read when a file
changes.

The path is a file or a folder: every ``.yml``/``.yaml``/``.json`` file under a folder (sorted;
``target/``, ``dbt_packages/``, ``node_modules/`` and hidden folders skipped: point at a
``semantic_manifest.json`` itself to read it). A file holding ``cubes:`` is Cube, one holding
``semantic_models:``, ``metrics:`` or a model with ``semantic_model:`` (dbt's latest spec) is
dbt, anything else (dbt's plain ``models:``, ``sources:``) is skipped. Whatever cannot be used
is a ``Problem`` (file, entry, reason) and left out, together with every metric that depends on
it; the rest stays usable.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from nl2sql.config.dbs_yaml import yaml_error
from nl2sql.config.registry import DbConnectionConfig
from nl2sql.errors import MetricQueryError, SemanticModelError
from nl2sql.semantic.cube import add_proxies, add_views, cube_links, read_cubes
from nl2sql.semantic.dbt import (dbt_links, has_semantics, read_dbt, read_saved_queries,
                                 read_time_spines)
from nl2sql.semantic.model import (AGGREGATIONS, DbtSavedQuery, Measure, Metric, Problem,
                                   SemanticModel, Table)
from nl2sql.semantic.names import metric_named, resolve

SUFFIXES = (".yml", ".yaml", ".json", ".js")
_SKIPPED_FOLDERS = {"target", "dbt_packages", "node_modules", "logs"}

#: Seconds during which the files of a semantic model read before are not looked at again.
FRESHNESS_SECONDS = 1.0
_CACHE: dict[Path, tuple[float, tuple[Any, ...], SemanticModel]] = {}
_LOCK = threading.Lock()


def semantic_model(config: DbConnectionConfig) -> SemanticModel | None:
    """The semantic model of a database (None without ``semantic_model:``)."""
    if config.semantic_model is None:
        return None
    return load_semantic_model(config.semantic_model)


def model_files(path: Path) -> list[Path]:
    """The files of a ``semantic_model:`` path; ``SemanticModelError`` when it is missing."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise SemanticModelError(f"The semantic model {path} does not exist; fix "
                                 f"'semantic_model:' in dbs.yaml (a file or a folder).")
    return sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file()
                  and not any(part in _SKIPPED_FOLDERS or part.startswith(".")
                              for part in p.relative_to(path).parts[:-1]))


def load_semantic_model(path: Path) -> SemanticModel:
    """The semantic model at ``path``, cached until one of its files changes (the files are
    looked at again at most once per ``FRESHNESS_SECONDS``: a dbt project folder can hold many)."""
    now = time.monotonic()
    with _LOCK:
        cached = _CACHE.get(path)
    if cached is not None and now - cached[0] < FRESHNESS_SECONDS:
        return cached[2]
    files = model_files(path)
    signature = tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files)
    model = cached[2] if cached is not None and cached[1] == signature else \
        read_files(path, files)
    with _LOCK:
        _CACHE[path] = (now, signature, model)
    return model


def read_files(path: Path, files: list[Path]) -> SemanticModel:
    model = SemanticModel(path)
    dbt_tables: list[Table] = []
    metrics: list[Metric] = []
    cube_documents: list[tuple[Path, dict[str, Any]]] = []
    saved: list[DbtSavedQuery] = []
    for file in files:
        document = _document(file, model.problems)
        if document is None:
            continue
        if "cubes" in document or "views" in document:
            cube_documents.append((file, document))  # read once every cube is known
        elif has_semantics(document):
            tables, found, problems = read_dbt(document, file)
            dbt_tables += tables
            model.problems += problems
            metrics += found
            queries, problems = read_saved_queries(document, file)
            saved += queries
            model.problems += problems
            spines, problems = read_time_spines(document, file)
            model.time_spines += spines
            model.problems += problems
    cubes = read_cubes(cube_documents)
    model.problems += cubes.problems
    metrics += cubes.metrics
    for table in [*dbt_tables, *cubes.tables]:
        if table.name in model.tables:
            model.problems.append(Problem(table.file, "semantic model", table.name,
                                          f"defined twice (also in {model.tables[table.name].file})"))
            continue
        model.tables[table.name] = table
    dbt_links([t for t in dbt_tables if model.tables.get(t.name) is t])
    kept_cubes = [t for t in cubes.tables if model.tables.get(t.name) is t]
    model.problems += cube_links(kept_cubes, cubes.joins)
    _add_metrics(model, metrics)
    add_proxies(model, kept_cubes)
    add_views(model, cubes.views)
    _add_saved_metric_queries(model, saved)
    if files and not model.tables and not model.problems:
        model.problems.append(Problem(path, "file", "", "no semantic_models:, metrics:, "
                                      "models with semantic_model:, cubes: or views: found (dbt or "
                                      "Cube YAML, or semantic_manifest.json)"))
    return model


def _document(file: Path, problems: list[Problem]) -> dict[str, Any] | None:
    try:
        text = file.read_text(encoding="utf-8")
        if file.suffix.lower() == ".js":  # a Cube JavaScript model
            # Imported here: its parser (esprima) takes 0.4 s to import, for JavaScript only.
            from nl2sql.semantic.cube_js import read_js

            data, unread = read_js(text)
            problems += [Problem(file, kind, name, why) for kind, name, why in unread]
            return data
        data = json.loads(text) if file.suffix.lower() == ".json" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(file, "file", "", f"cannot be read ({exc})"))
        return None
    except json.JSONDecodeError as exc:
        problems.append(Problem(file, "file", "", f"line {exc.lineno}: not valid JSON ({exc.msg})"))
        return None
    except yaml.YAMLError as exc:
        problems.append(Problem(file, "file", "", str(yaml_error(file, exc)).split(": ", 1)[-1]))
        return None
    except ValueError as exc:  # read_js: not JavaScript
        problems.append(Problem(file, "file", "", str(exc)))
        return None
    return data if isinstance(data, dict) else None


def _add_metrics(model: SemanticModel, metrics: list[Metric]) -> None:
    """Keep the metrics whose references resolve; the others become problems (a metric on a
    broken one is broken too)."""
    by_name: dict[str, Metric] = {}
    for metric in metrics:
        if metric.name in by_name:
            model.problems.append(Problem(metric.file, "metric", metric.name,
                                          f"defined twice (also in {by_name[metric.name].file})"))
            continue
        by_name[metric.name] = metric
    known_broken = {p.name: p.reason for p in model.problems if p.kind == "metric"}
    reasons: dict[str, str | None] = {}

    def reason(name: str, path: tuple[str, ...]) -> str | None:
        if name in reasons:
            return reasons[name]
        if name in path:
            return f"metric '{name}' depends on itself ({' -> '.join([*path, name])})"
        metric = by_name.get(name)
        if metric is None:
            return f"input metric '{name}' is broken" if name in known_broken else \
                f"input metric '{name}' is not defined"
        found = _measure_reason(model, metric)
        for item in metric.input_metrics():
            if found is None and (inner := reason(item.metric, (*path, name))) is not None:
                prefixed = item.metric in by_name and "depends on itself" not in inner
                found = f"input metric '{item.metric}': {inner}" if prefixed else inner
        if found is None and metric.input_metric is not None:
            found = _accumulates(metric, by_name[metric.input_metric.metric])
        if found is None and metric.conversion is not None:
            found = _converts(model, metric, by_name)
        reasons[name] = found
        return found

    for name, metric in by_name.items():
        why = reason(name, ())
        if why is None:
            model.metrics[name] = metric
        else:
            model.problems.append(Problem(metric.file, "metric", name, why))


def _accumulates(metric: Metric, inner: Metric) -> str | None:
    """A cumulative metric of dbt's latest spec adds up the measure of its ``input_metric``,
    a simple metric, under that metric's filters and its own; why it cannot, or None."""
    if inner.kind != "simple" or inner.measure is None:
        return (f"input_metric '{inner.name}' is a {inner.kind} metric; a cumulative metric "
                f"adds up a simple one")
    assert metric.input_metric is not None
    metric.measure = inner.measure
    metric.filters = (*inner.filters, *metric.input_metric.filters, *metric.filters)
    metric.join_to_timespine = metric.join_to_timespine or inner.join_to_timespine
    return None


def _converts(model: SemanticModel, metric: Metric, by_name: dict[str, Metric]) -> str | None:
    """A conversion metric's two measures resolved (the latest spec's simple metrics read as
    their measures and filters), its entity in both tables and its constant properties in
    each; why it cannot be used, or None."""
    conversion = metric.conversion
    assert conversion is not None
    if conversion.metrics is not None:
        base, converted = conversion.metrics
        inner = [by_name[item.metric] for item in conversion.metrics]
        for item, found in zip(conversion.metrics, inner):
            if found.kind != "simple" or found.measure is None:
                return (f"{item.metric!r} is a {found.kind} metric; a conversion metric "
                        f"follows the events of simple ones")
        assert inner[0].measure is not None and inner[1].measure is not None
        metric.measure, conversion.measure = inner[0].measure, inner[1].measure
        metric.filters = (*inner[0].filters, *base.filters, *metric.filters)
        conversion.filters = (*inner[1].filters, *converted.filters)
    else:
        conversion.measure, why = _resolved(model, conversion.measure)
        if why is not None:
            return f"conversion_measure: {why}"
    assert metric.measure is not None
    sides = [("base", model.measure(metric.measure)), ("conversion",
                                                        model.measure(conversion.measure))]
    for pair in conversion.constant_properties:
        for (side, (table, _)), name in zip(sides, pair):
            if name not in table.dimensions and name not in table.entities:
                return (f"constant property {name!r} is not a dimension or entity of "
                        f"'{table.name}' (the {side} events)")
    for side, (table, measure) in sides:
        if conversion.entity not in table.entities:
            return (f"entity '{conversion.entity}' is not an entity of '{table.name}' (the "
                    f"{side} events of measure '{measure.name}')")
        if measure.time_dimension is None:
            return (f"measure '{measure.name}' of '{table.name}' has no time dimension "
                    f"(agg_time_dimension): its events need a time")
    return None


def _measure_reason(model: SemanticModel, metric: Metric) -> str | None:
    """Resolve a dbt metric's measure to its semantic model (dbt measure names are unique
    across a project); why it cannot be used, or None."""
    if metric.measure is None:
        return None
    metric.measure, why = _resolved(model, metric.measure)
    return why


def _resolved(model: SemanticModel, ref: tuple[str, str]) -> tuple[tuple[str, str], str | None]:
    """``ref`` with its semantic model found (by the measure's name when it names none), and
    why its measure cannot be used, or None."""
    table_name, name = ref
    if not table_name:
        owners = [t.name for t in model.tables.values() if name in t.measures]
        if not owners:
            broken = [p.name for p in model.problems if p.kind == "semantic model"]
            return ref, f"measure '{name}' is in no semantic model" + (
                f" that could be read (broken: {', '.join(broken)})" if broken else "")
        ref = table_name, name = owners[0], name
    table = model.tables.get(table_name)
    if table is None or name not in table.measures:
        return ref, f"measure '{name}' is not defined"
    measure = table.measures[name]
    agg = measure.agg
    if agg is not None and agg not in AGGREGATIONS:
        return ref, (f"measure '{name}' aggregates with '{agg}', which nl2sql does not compile "
                     f"({', '.join(AGGREGATIONS)})")
    if agg == "percentile" and not (measure.percentile is not None
                                    and 0 <= measure.percentile <= 1):
        return ref, (f"measure '{name}' (percentile) needs agg_params: {{percentile: ...}}, a "
                     f"number from 0 to 1 (0.9 for the 90th)")
    return ref, _non_additive_reason(table, measure)


def _non_additive_reason(table: Table, measure: Measure) -> str | None:
    """Why a measure's ``non_additive_dimension`` cannot be honoured, or None."""
    rule = measure.non_additive
    if rule is None:
        return None
    where = f"measure '{measure.name}': its non_additive_dimension"
    dimension = table.dimensions.get(rule.dimension)
    if dimension is None or not dimension.is_time:
        return (f"{where} needs name: one of the time dimensions of '{table.name}' "
                f"({', '.join(d.name for d in table.dimensions.values() if d.is_time)})")
    if rule.choice not in ("min", "max"):
        return f"{where} needs window_choice: min (each period's first) or max (its last)"
    unknown = [g for g in rule.groupings if g not in table.entities]
    if unknown:
        return (f"{where}: window_groupings {', '.join(unknown)} are not entities of "
                f"'{table.name}' ({', '.join(table.entities)})")
    return None


def _add_saved_metric_queries(model: SemanticModel, saved: list[DbtSavedQuery]) -> None:
    """Keep the saved queries whose metrics are usable and whose group-bys the model knows;
    the others (and a second one of a name) become problems."""
    for query in saved:
        try:
            if query.name in model.saved_metric_queries:
                raise MetricQueryError(
                    f"defined twice (also in {model.saved_metric_queries[query.name].file})")
            for name in query.metrics:
                metric_named(model, name)
            for name in query.group_by:
                resolve(model, name)
        except MetricQueryError as exc:
            model.problems.append(Problem(query.file, "saved query", query.name, str(exc)))
            continue
        model.saved_metric_queries[query.name] = query
