"""``nl2sql-eval``: execution accuracy of predictions (a file, or a model) on a question set.

Exit codes: 0 the run finished (whatever the accuracy), 1 ``--min-accuracy`` was missed, 2 the
input is invalid or the set-up is wrong (unknown set, bad file, unconfigured database).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from nl2sql._helpers import imports_paused
from nl2sql.cli.errors import EXIT_ERROR, add_version_flag, run_cli
from nl2sql.config.memory_cap import limit_process_memory
from nl2sql.cli.options import CommandParser, add_common_options, parse_command_line
from nl2sql.config.registry import ENV_CONFIG, ENV_MODEL
from nl2sql.cli.progress import progress_reporter
from nl2sql.operations.ops_context import OpsContext
from nl2sql.schema.cache import atomic_write_text

DESCRIPTION = f"""\
Score NL2SQL predictions by execution accuracy: each gold query and its prediction run on the
same database through the read-only guard, and their results are compared (rows as a multiset,
columns matched by values, row order only when the gold orders, numbers within 1e-6).
Questions: a JSONL/JSON/CSV file with db_id, question, query (several golds separated by a
'--or--' line or as a JSON list), optional id and category; or --set NAME for a bundled set
(bookstore, chinook, northwind). Predictions: --predictions FILE (id + sql, or sql in question
order; .sql/.txt: one query per line), or --model M to generate them with the NL2SQL agent
(cached in --out, so a resumed run makes no repeated model call).
Writes report.json and a self-contained report.html to --out. Config: --config, else
${ENV_CONFIG}, else ./dbs.yaml; model: --model, else ${ENV_MODEL}."""

EPILOG = """\
Example:
  nl2sql-eval --set bookstore --predictions preds.jsonl
  nl2sql-eval questions.csv --predictions preds.csv --out eval/run1 --min-accuracy 0.8
  nl2sql-eval --set chinook --model openai:gpt-4o-mini --concurrency 8 --out eval/gpt4o-mini
  nl2sql-eval --set chinook --model openai:gpt-4o-mini --candidates 5   # + calibration, cost
  nl2sql-eval questions.jsonl --predictions preds.jsonl --extra-columns allow --timeout 10

Exit codes: 0 done, 1 --min-accuracy missed, 2 invalid input."""


def _accuracy(text: str) -> float:
    value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    if not 0 <= value <= 1:  # nan fails this too
        raise argparse.ArgumentTypeError("must be between 0 and 1 (or 0% and 100%)")
    return value


def _positive(kind: type) -> object:
    def parse(text: str) -> object:
        value = kind(text)
        if not (value > 0 and math.isfinite(value)):  # nan and inf are floats too
            raise argparse.ArgumentTypeError("must be a finite number more than 0")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(prog="nl2sql-eval", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version_flag(parser)
    parser.add_argument("questions", nargs="?", metavar="QUESTIONS",
                        help="question set file (.jsonl, .json or .csv)")
    parser.add_argument("--set", dest="set_name", metavar="NAME",
                        help="a bundled question set instead of a file (bookstore, chinook, "
                             "northwind; the variant of the database's backend is chosen: "
                             "chinook_postgres, chinook_spark...)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--predictions", metavar="FILE", help="predicted SQL to score")
    source.add_argument("--model", metavar="M", help="generate predictions with this model "
                                                     "(pydantic-ai model string)")
    parser.add_argument("--candidates", type=_positive(int), default=1, metavar="N",
                        help="with --model: N SQL candidates per question, the majority result "
                             "answering; adds the calibration table (accuracy per confidence) "
                             "to the report (default 1)")
    parser.add_argument("--out", metavar="DIR",
                        help="folder for report.json, report.html and the model's predictions "
                             "(default: ./eval/<set or file name>)")
    parser.add_argument("--concurrency", type=_positive(int), default=4, metavar="N",
                        help="questions scored (and generated) at once (default 4)")
    parser.add_argument("--timeout", type=_positive(float), metavar="SECONDS",
                        help="time limit of each query (default: the database's "
                             "query_timeout_seconds)")
    parser.add_argument("--min-accuracy", type=_accuracy, metavar="X",
                        help="exit 1 when the accuracy is below X (0.8 or 80%%), for CI")
    parser.add_argument("--extra-columns", choices=["strict", "allow"], default="strict",
                        help="a prediction with the gold's columns plus others: wrong (strict, "
                             "default) or right (allow)")
    parser.add_argument("--max-rows", type=_positive(int), default=100_000, metavar="N",
                        help="rows kept per result (default 100,000); a gold beyond it is "
                             "reported as broken")
    parser.add_argument("--no-context", action="store_true",
                        help="skip the context recall (nl2sql.context per question)")
    add_common_options(parser)
    return parser


def _run(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parse_command_line(parser, argv)
    limit_process_memory()  # NL2SQL_MAX_MEMORY: DuckDB runs in this process
    if not args.questions and not args.set_name:
        parser.error("give a question set file, or --set NAME for a bundled one")
    if args.questions and args.set_name:
        parser.error("give a question set file or --set NAME, not both")
    if not args.predictions and not args.model:
        parser.error("give --predictions FILE to score, or --model M to generate predictions")
    if args.candidates > 1 and not args.model:
        parser.error("--candidates needs --model (predictions from a file have no candidates)")
    return _evaluate(args)  # invalid input or set-up (an Nl2SqlError): run_cli exits 2


def _evaluate(args: argparse.Namespace) -> int:
    # Imported once the arguments are checked: the scorer (sqlglot), the agent that generates
    # predictions and rich take ~0.6 s to import, which --help and a mistyped option need not
    # wait for (0.80 -> 0.25 s).
    with imports_paused():
        from rich.console import Console

        from nl2sql.evaluation import (EvalSettings, bundled_set_path, evaluate,
                                       load_predictions, load_questions)
        from nl2sql.evaluation.generate import generate_predictions
        from nl2sql.evaluation.html import render_html
        from nl2sql.evaluation.report import (context_line, cost_line, render_calibration,
                                              render_table)
        from nl2sql.evaluation.runner import check_databases

    ctx = OpsContext.load_local(args.config, "cli", data_dir=args.data_dir,
                                workspace=args.workspace, model=args.model)
    if args.set_name:
        backends = {c.db_id: c.type.value for c in ctx.configs}
        path = bundled_set_path(args.set_name, backends)
    else:
        path = Path(args.questions)
    questions = load_questions(path)
    check_databases(questions, ctx)  # before any model call
    name = args.set_name or path.stem
    out = Path(args.out) if args.out else Path("eval") / name
    out.mkdir(parents=True, exist_ok=True)
    settings = EvalSettings(timeout=args.timeout, max_rows=args.max_rows,
                            extra_columns=args.extra_columns, concurrency=args.concurrency,
                            context_recall=not args.no_context)
    if args.model:
        with progress_reporter("nl2sql-eval") as progress:
            predictions = generate_predictions(questions, ctx, model=args.model,
                                               cache_dir=out, concurrency=args.concurrency,
                                               candidates=args.candidates, progress=progress)
    else:
        predictions = load_predictions(args.predictions, questions)
    with progress_reporter("nl2sql-eval") as progress:
        report = evaluate(questions, predictions, ctx, settings, progress=progress,
                          report_settings={"questions": str(path),
                                           "predictions": args.predictions,
                                           "model": args.model,
                                           "candidates": args.candidates if args.model
                                           else None})
    report.write_json(out / "report.json")

    atomic_write_text(out / "report.html", render_html(report, f"nl2sql-eval: {name}"))
    ctx.close()
    console = Console()
    console.print(render_table(report))
    if report.calibration:
        console.print(render_calibration(report))
    print(f"{len(report.wrong)} wrong, {report.broken_gold} broken gold")
    print(context_line(report))
    if report.metrics is not None:
        print(report.metrics.line())
    if (cost := cost_line(report)) is not None:
        print(cost)
    print(f"report: {out / 'report.json'}\n        {out / 'report.html'}")
    if args.min_accuracy is not None and (report.accuracy or 0.0) < args.min_accuracy:
        print(f"accuracy {report.accuracy or 0:.1%} is below --min-accuracy "
              f"{args.min_accuracy:.1%}", file=sys.stderr)
        return EXIT_ERROR
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_cli(_run, argv)

