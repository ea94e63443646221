"""Semantic models of the Chinook sample for the metric tests, spelled for each backend.

The files in ``tests/data/metrics/chinook/`` use PostgreSQL's snake_case names (``invoice_line``,
``billing_country``); the SQLite file and its MySQL, DuckDB and Spark copies spell them
``InvoiceLine``, ``BillingCountry``. ``spelled`` rewrites the SQL in a model (``model``,
``expr``, ``sql_table``, ``sql``) or a hand-written query for those: every lower-case
identifier that is not a function (``f(``) or a reference (``{invoices}``) becomes PascalCase.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

CHINOOK_MODELS = Path(__file__).parent / "data" / "metrics" / "chinook"
MODEL_FILES = {"dbt": "dbt_semantic_models.yml", "cube": "cube_model.yml"}
_IDENTIFIER = re.compile(r"(?<![{\w%])([a-z][a-z_]*)(?![\w(])")
_SQL_KEYS = {"model", "expr", "sql_table", "sql"}
_MEMBER = re.compile(r"\{\s*(?!CUBE\b)[A-Za-z_]\w*\.\w+\s*\}")


def pascal(sql: str) -> str:
    """``SUM(il.unit_price)`` -> ``SUM(Il.UnitPrice)``; quoted lower-case words change too
    (``ref('invoice')`` -> ``ref('Invoice')``): write literals in upper case or keep them out.
    Another cube's member (``{buyers.country}``) is a name of the model: it stays."""
    kept = _MEMBER.findall(sql)
    parts = [_IDENTIFIER.sub(lambda m: "".join(w.capitalize() for w in m.group(1).split("_")),
                             part) for part in _MEMBER.split(sql)]
    return "".join(part + (kept[i] if i < len(kept) else "") for i, part in enumerate(parts))


def spelled(sql: str, naming: str) -> str:
    """``sql`` in the spelling of a sample on a backend (``SampleDb.naming``)."""
    return sql if naming == "postgres" else pascal(sql)


def _rewrite(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: pascal(value) if key in _SQL_KEYS and isinstance(value, str) else
                _rewrite(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_rewrite(item) for item in node]
    return node


def chinook_model(folder: Path, kind: str, naming: str) -> Path:
    """Chinook's ``kind`` ("dbt" or "cube") model written into ``folder`` for ``naming``."""
    source = CHINOOK_MODELS / MODEL_FILES[kind]
    return write_model(folder / source.name, source.read_text(encoding="utf-8"), naming)


def write_model(target: Path, text: str, naming: str) -> Path:
    """A model's YAML ``text`` (in PostgreSQL's names) written to ``target`` for ``naming``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    document = yaml.safe_load(text)
    if naming != "postgres":  # metrics: name metrics, not columns (a derived metric's expr)
        document = {key: value if key == "metrics" else _rewrite(value)
                    for key, value in document.items()}
    target.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return target


#: Periods written by hand as each backend's users would (not as the compiler does).
MONTH = {"sqlite": "strftime('%Y-%m-01', {})", "postgres": "CAST(date_trunc('month', {}) AS DATE)",
         "mysql": "DATE_FORMAT({}, '%Y-%m-01')", "duckdb": "make_date(year({0}), month({0}), 1)",
         "spark": "trunc({}, 'MM')"}
YEAR = {"sqlite": "strftime('%Y-01-01', {})", "postgres": "CAST(date_trunc('year', {}) AS DATE)",
        "mysql": "DATE_FORMAT({}, '%Y-01-01')", "duckdb": "make_date(year({}), 1, 1)",
        "spark": "trunc({}, 'YEAR')"}
DAY = {"sqlite": "date({})", "postgres": "CAST({} AS DATE)", "mysql": "DATE({})",
       "duckdb": "CAST({} AS DATE)", "spark": "to_date({})"}
#: Date parts written by hand (an ISO weekday: 1 Monday to 7 Sunday; the quarter; the year).
DOW = {"sqlite": "CASE strftime('%w', {0}) WHEN '0' THEN 7 ELSE CAST(strftime('%w', {0}) AS "
                 "INTEGER) END",
       "postgres": "CAST(EXTRACT(ISODOW FROM {0}) AS INTEGER)", "mysql": "(WEEKDAY({0}) + 1)",
       "duckdb": "isodow({0})", "spark": "((dayofweek({0}) + 5) % 7 + 1)"}
QUARTER = {"sqlite": "((CAST(strftime('%m', {0}) AS INTEGER) - 1) / 3 + 1)",
           "postgres": "CAST(EXTRACT(QUARTER FROM {0}) AS INTEGER)", "mysql": "QUARTER({0})",
           "duckdb": "quarter({0})", "spark": "quarter({0})"}
YEAR_NUMBER = {"sqlite": "CAST(strftime('%Y', {0}) AS INTEGER)",
               "postgres": "CAST(EXTRACT(YEAR FROM {0}) AS INTEGER)", "mysql": "YEAR({0})",
               "duckdb": "year({0})", "spark": "year({0})"}
_DECIMAL = re.compile(r"^-?\d+\.\d+$")


def as_numbers(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """MySQL's results keep DECIMAL values as the server's text (exact CSV files): as numbers
    here, so a DECIMAL and a DOUBLE compare by value as on the other backends."""
    return [tuple(float(v) if isinstance(v, str) and _DECIMAL.match(v) else v for v in row)
            for row in rows]


def gold_sql(template: str, backend: str, naming: str) -> str:
    """Hand-written SQL in PostgreSQL's names, spelled for ``naming``, with ``{month}``,
    ``{year}`` and ``{day}`` the invoice date's period in ``backend``'s own SQL, ``{dow}``,
    ``{quarter}`` and ``{year_number}`` its parts."""
    date = spelled("invoice_date", naming)
    sql = spelled(template, naming)
    for name, spelling in (("month", MONTH), ("year", YEAR), ("day", DAY), ("dow", DOW),
                           ("quarter", QUARTER), ("year_number", YEAR_NUMBER)):
        sql = sql.replace(f"{{{name}}}", spelling[backend].format(date))
    return sql


def differs_from_gold(ops: Any, db_id: str, query: dict[str, Any], gold: str) -> str | None:
    """Run metric ``query`` (through ``metrics_query_op``: the guard, the read-only path, a
    result file) and the hand-written ``gold``; None when their rows are equal by the
    evaluation's rules, else why, with the compiled SQL."""
    from nl2sql.evaluation.scoring import run_query
    from nl2sql.operations.metrics import metrics_query_op
    from nl2sql.workspace.result_compare import compare_results

    result = metrics_query_op(ops, db_id, **query)
    ours = run_query(ops, db_id, result.sql_query, timeout=60, max_rows=10_000)
    theirs = run_query(ops, db_id, gold, timeout=60, max_rows=10_000)
    assert theirs.error is None, (gold, theirs.error)
    assert ours.error is None and result.row_count == len(ours.rows) > 0, (query, ours.error)
    comparison = compare_results(as_numbers(theirs.rows), as_numbers(ours.rows))
    return None if comparison.equal else f"{comparison.reason}\n{result.sql_query}"


def gold_failures(ops: Any, db_id: str, kind: str, cases: Any, backend: str,
                  naming: str) -> list[str]:
    """``differs_from_gold`` for each ``(name, dbt_query, cube_query, gold)`` of ``cases``, with
    ``kind``'s ("dbt" or "cube") query (None: no such query in that format); the failures."""
    failures = []
    for name, dbt_query, cube_query, gold in cases:
        query = dbt_query if kind == "dbt" else cube_query
        why = query and differs_from_gold(ops, db_id, query, gold_sql(gold, backend, naming))
        if why:
            failures.append(f"{kind} {name}: {why}")
    return failures


def ops_with_model(config: Any, folder: Path, model: str, naming: str = "postgres") -> Any:
    """An ``OpsContext`` over ``config``'s database (its schema cache built in ``folder``)
    with the dbt or Cube YAML ``model`` (in PostgreSQL's names, spelled for ``naming``) as its
    semantic model."""
    from conftest import build_cache, write_dbs_yaml
    from nl2sql.config.registry import DbConnectionConfigs
    from nl2sql.operations.ops_context import OpsContext

    build_cache(config, folder / "data")
    path = write_model(folder / "models" / "model.yml", model, naming)
    entry = config.model_copy(update={"semantic_model": path.parent})
    return OpsContext(DbConnectionConfigs.load(write_dbs_yaml(folder, [entry]),
                                               data_dir=folder / "data",
                                               workspace=folder / "workspace"))
