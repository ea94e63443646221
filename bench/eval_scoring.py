"""Scoring speed of ``nl2sql-eval``: N predictions on a small database, end to end.

Each question is one of a bundled set's questions with its own gold text (a distinct comment,
so no gold result is reused from the cache) and each prediction is either its gold (about 70%)
or another question's gold (wrong). Everything goes through the real path: parser guard,
engine layers, time limit, row cap, comparison. Context recall is off (it measures the context
engine, benchmarked in ``bench/context_*``). Target: 1,000 predictions in under 30 s.

Usage:
    .venv/bin/python bench/eval_scoring.py [--set bookstore|chinook|northwind] [--n 1000]
        [--concurrency 1 4] [--config dbs.yaml]

Without --config, bookstore is the bundled sample and chinook/northwind are SQLite copies of
the repository's samples (tests/data/samples).
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.evaluation import EvalSettings, evaluate, load_questions
from nl2sql.evaluation.inputs import Question, bundled_set_path
from nl2sql.operations.ops_context import OpsContext

SAMPLES = Path(__file__).resolve().parent.parent / "tests" / "data" / "samples"


def _config(folder: Path, name: str, config: str | None) -> DbConnectionConfigs:
    if config:
        return DbConnectionConfigs.load(config)
    entry = ""
    if name == "chinook":
        entry = f"  chinook: {{type: sqlite, path: {SAMPLES / 'chinook' / 'chinook.sqlite'}}}\n"
    elif name == "northwind":
        path = folder / "northwind.db"
        with sqlite3.connect(path) as conn:
            conn.executescript((SAMPLES / "northwind" / "northwind_sqlite.sql").read_text())
        conn.close()
        entry = f"  northwind: {{type: sqlite, path: {path}}}\n"
    (folder / "dbs.yaml").write_text("databases:\n" + (entry or "  {}\n"))
    return DbConnectionConfigs.load(folder / "dbs.yaml", workspace=folder / "workspace")


def _workload(base: list[Question], n: int) -> tuple[list[Question], dict[str, str]]:
    rng = random.Random(42)
    questions, predictions = [], {}
    for i in range(n):
        source = base[i % len(base)]
        qid = f"q{i:05d}"
        gold = f"{source.golds[0]} /* {qid} */"
        questions.append(source.model_copy(update={"id": qid, "golds": [gold]}))
        if rng.random() < 0.7:
            predictions[qid] = f"{source.golds[-1]} /* p{i} */"
        else:
            other = base[(i + 1 + rng.randrange(len(base) - 1)) % len(base)]
            predictions[qid] = f"{other.golds[0]} /* p{i} */"
    return questions, predictions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="bookstore", choices=["bookstore", "chinook", "northwind"])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--config")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        configs = _config(Path(tmp), args.set, args.config)
        backends = {c.db_id: c.type.value for c in configs}
        base = load_questions(bundled_set_path(args.set, backends))
        questions, predictions = _workload(base, args.n)
        print(f"{args.set} ({backends[base[0].db_id]}): {args.n} predictions over "
              f"{len(base)} distinct questions; load {os.getloadavg()[0]:.2f}")
        for concurrency in args.concurrency:
            ctx = OpsContext(configs)
            started = time.perf_counter()
            report = evaluate(questions, predictions, ctx,
                              EvalSettings(concurrency=concurrency, context_recall=False))
            seconds = time.perf_counter() - started
            ctx.close()
            print(f"  concurrency {concurrency}: {seconds:.2f} s "
                  f"({args.n / seconds:.0f} predictions/s, {2 * args.n / seconds:.0f} "
                  f"queries/s); accuracy {report.accuracy:.3f}, broken gold {report.broken_gold}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
