"""The semantic layer behind governed metrics: a database's dbt (MetricFlow) or Cube model
(``semantic_model:`` in dbs.yaml) read into one model, and metric queries compiled from it to
the database's SQL. (``nl2sql.metrics()`` is the public function listing them, hence the
package's other name.)

Reading: ``loading.py`` (files, caching, problems; ``semantic_model(config)``), ``dbt.py``,
``cube.py`` (and ``cube_js.py``), into the neutral ``model.py``. Compiling: ``names.py``
(group-by names), ``sources.py`` (tables, expressions, join paths), ``parts.py`` (one
aggregating SELECT), ``compiler.py`` (combining them, ratio, derived, cumulative),
``conversion.py`` (a conversion metric's matched events), ``time_spine.py`` (every period
listed), ``metric_sql.py`` (each backend's time grains and date parts), ``api.py``
(``compile_for`` one configured database). ``listing.py`` says what a metric can be grouped
by. The compiled SQL runs through the same read-only path as any query
(``nl2sql.operations.metrics``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nl2sql._helpers import lazy_exports

if TYPE_CHECKING:
    from nl2sql.semantic.api import compile_for
    from nl2sql.semantic.compiler import CompiledQuery, MetricQuery
    from nl2sql.semantic.listing import MetricInfo, describe, measures_of
    from nl2sql.semantic.loading import semantic_model
    from nl2sql.semantic.model import Metric, Problem, SemanticModel

# Reading a model and listing its metrics loads no sqlglot (the context engine does both at
# the MCP server's start-up path); compiling does.
_WHERE = {
    "CompiledQuery": "compiler",
    "Metric": "model",
    "MetricInfo": "listing",
    "MetricQuery": "compiler",
    "Problem": "model",
    "SemanticModel": "model",
    "compile_for": "api",
    "describe": "listing",
    "measures_of": "listing",
    "semantic_model": "loading",
}
__all__ = sorted(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
