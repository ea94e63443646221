"""Governed metrics on the bundled bookstore (SQLite, its dbt model): how long compiling a
metric query takes, and how the compiled SQL runs beside the SQL written by hand for the same
question (the ``bookstore_metrics`` set's golds: same results, checked by the tests).

Compile: ``compile_for`` on an unchanged semantic model (read once, cached), median of N.
Run: the compiled SQL and the gold SQL, each through the engine's read-only path (guard, time
limit) into a sink that keeps no rows, median of N, alternating.

Usage:
    .venv/bin/python bench/metrics_compile.py [--repeat 200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_metrics_eval import ANSWERS  # noqa: E402 - the metric query of each question

from nl2sql.config.bundled import question_set_path  # noqa: E402
from nl2sql.operations.ops_context import OpsContext  # noqa: E402
from nl2sql.semantic import MetricQuery, compile_for  # noqa: E402
from timing import DiscardingSink, median_ms  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    ops = OpsContext.load(None, data_dir=folder / "data", workspace=folder / "ws")
    from conftest import build_cache

    build_cache(ops.config("bookstore"), ops.data_dir)
    config, info = ops.config("bookstore"), ops.db_info("bookstore")
    operations = ops.query_operations("bookstore")
    golds = {json.loads(line)["id"]: json.loads(line)["query"] for line in
             question_set_path("bookstore_metrics").read_text().splitlines()}  # type: ignore[union-attr]
    print(f"load average {os.getloadavg()[0]:.1f}; {args.repeat} runs each, medians")
    print(f"{'question':22} {'metrics':32} {'compile':>9} {'compiled':>9} {'by hand':>9}")
    for qid, query in ANSWERS.items():
        metric_query = MetricQuery(tuple(query["metrics"]), tuple(query.get("dimensions", ())),
                                   tuple(query.get("where", ())),
                                   tuple(query.get("order_by", ())), query.get("limit"))
        compile_ms = median_ms(lambda: compile_for(config, metric_query, info), args.repeat)
        sql = compile_for(config, metric_query, info).sql
        ours = median_ms(lambda: operations.execute_select_query(sql, DiscardingSink()),
                         args.repeat)
        theirs = median_ms(lambda: operations.execute_select_query(golds[qid], DiscardingSink()),
                           args.repeat)
        print(f"{qid:22} {','.join(query['metrics'])[:32]:32} {compile_ms:7.2f}ms "
              f"{ours:7.2f}ms {theirs:7.2f}ms")
    ops.close()


if __name__ == "__main__":
    main()
