"""``annotate-schema``: extract, annotate and cache the schema of configured databases.

A thin adapter over ``nl2sql.annotation.pipeline.annotate_database``. Progress goes to stderr (a bar in a
terminal, log lines otherwise). The summary goes to stdout, except with ``--output-schema``:
then stdout carries only the annotated schema SQL (so it can be redirected to a file) and the
summary moves to stderr.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import TextIO

from nl2sql.annotation.options import AnnotatorOptions
from nl2sql.schema.provenance import (REANNOTATE_CHOICES, is_placeholder_model,
                                         reannotate_steps, without_placeholders)
from nl2sql.cli.errors import add_version_flag, run_cli
from nl2sql.config.memory_cap import limit_process_memory
from nl2sql.cli.options import (DATA_DIR_HELP, CommandParser, non_negative_int,
                                parse_command_line, positive_int)
from nl2sql.cli.progress import progress_reporter
from nl2sql.config.registry import (ENV_CONFIG, ENV_DATA_DIR, ENV_MODEL, DbConnectionConfig,
                           DbConnectionConfigs)
from nl2sql.errors import Nl2SqlError
from nl2sql.schema.formatting import format_schema
from nl2sql.inspection.enums import EnumScreeningSettings
from nl2sql.inspection.samples import SampleSettings
from nl2sql.annotation.pipeline import (AnnotateOptions, AnnotationResult, annotate_database,
                             default_llm_steps)
from nl2sql.schema.models import AnnotationRun
from nl2sql._helpers import plural
from nl2sql.annotation.drift import check_drift
from nl2sql.schema.cache import load_db_info
from nl2sql.db.base import create_connection
from nl2sql.llm.usage import summary_lines
from nl2sql.store.store import Store

log = logging.getLogger("nl2sql.annotate")

DESCRIPTION = """\
Extract the schema of each database, annotate it and write the cache
{data_dir}/database/<db_id>/<db_id>.db_info.json that the MCP server and the agents read.
Offline steps (always): tables, columns, keys, indexes, comments, row counts, sample rows,
enum screening. LLM steps (with a model): descriptions, enum classification, example queries.
Re-runs keep earlier LLM and user annotations of tables whose structure did not change."""

EXAMPLE = f"""\
Example:
  annotate-schema bookstore
  annotate-schema bookstore --output-schema > bookstore.sql
  annotate-schema --all --config ~/nl2sql/dbs.yaml --model openai:gpt-4o-mini
  {ENV_MODEL}=anthropic:claude-sonnet-4-5 annotate-schema shop --enum-max-values 30
  annotate-schema shop --model openai:gpt-4o-mini --concurrency 8 --examples 10
  annotate-schema shop --check    # exit 1 when the live schema drifted from the cache
  annotate-schema shop --model openai:gpt-4o --reannotate descriptions,examples"""


def build_parser() -> argparse.ArgumentParser:
    defaults = EnumScreeningSettings()
    parser = CommandParser(
        prog="annotate-schema", description=DESCRIPTION, epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version_flag(parser)
    parser.add_argument("db_ids", nargs="*", metavar="db_id",
                        help="databases to annotate, as named under 'databases:' in dbs.yaml")
    parser.add_argument("--all", action="store_true",
                        help="annotate every configured database")
    parser.add_argument("--output-schema", action="store_true",
                        help="print the annotated schema SQL to stdout (the summary then goes "
                             "to stderr)")
    parser.add_argument("--config", metavar="PATH",
                        help=f"path of dbs.yaml (default: ${ENV_CONFIG}, else ./dbs.yaml)")
    parser.add_argument("--data-dir", metavar="PATH",
                        help=DATA_DIR_HELP)
    parser.add_argument("--enum-max-values", type=positive_int, metavar="N",
                        default=defaults.max_values,
                        help="most distinct values a column may have to be an enum candidate "
                             "(default: %(default)s)")
    parser.add_argument("--sample-rows", type=non_negative_int, metavar="N",
                        default=SampleSettings().rows,
                        help="sample rows stored per table, 0 for none (default: %(default)s)")
    parser.add_argument("--model", metavar="MODEL",
                        help=f"pydantic-ai model for the LLM steps, e.g. openai:gpt-4o-mini "
                             f"(default: ${ENV_MODEL}, else 'model:' in dbs.yaml; none: LLM "
                             f"steps are skipped)")
    llm = AnnotatorOptions()
    parser.add_argument("--concurrency", type=positive_int, metavar="N",
                        default=llm.concurrency,
                        help="model requests in flight at once (default: %(default)s)")
    parser.add_argument("--examples", type=non_negative_int, metavar="N",
                        default=llm.example_count,
                        help="validated example queries to keep per database, 0 to skip the "
                             "step (default: %(default)s)")
    parser.add_argument("--rewrite-descriptions", action="store_true",
                        help="let the model rewrite descriptions imported from database "
                             "comments (kept by default)")
    parser.add_argument("--reannotate", nargs="?", const="all", metavar="STEPS",
                        type=_reannotate_choices,
                        help="redo earlier model output of these LLM steps: a comma list of "
                             f"{', '.join(REANNOTATE_CHOICES)} (default all); descriptions "
                             "from database comments or people are kept")
    parser.add_argument("--check", action="store_true",
                        help="compare the live schema with the cache and list the drift; exit "
                             "1 when there is drift, 0 otherwise (nothing is written)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_cli(_run, argv)


def _run(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parse_command_line(parser, argv)
    limit_process_memory()  # NL2SQL_MAX_MEMORY: DuckDB runs in this process
    if not args.db_ids and not args.all:
        parser.error("name one or more db_ids, or pass --all")
    configs = DbConnectionConfigs.load(args.config, data_dir=args.data_dir, model=args.model)
    db_ids = configs.ids() if args.all else list(dict.fromkeys(args.db_ids))
    selected = [configs.get(db_id) for db_id in db_ids]  # unknown ids fail before any work
    if args.check:
        return _check(configs, selected)
    if args.reannotate and not configs.model:
        parser.error("--reannotate redoes LLM steps: it needs a model (--model or NL2SQL_MODEL)")
    model_error: Nl2SqlError | None = None
    if configs.model:
        # Here, not at the top: pydantic-ai costs annotate-schema without a model ~0.7 s of
        # start-up. An unknown model, a missing provider package or key is the whole run's
        # mistake: said once, at the end, not once per database; the offline steps still run
        # and are saved (each database is usable without a model meanwhile).
        from nl2sql.llm.providers import build_model

        try:
            build_model(configs.model)
        except Nl2SqlError as exc:
            model_error = exc
    model = configs.model if model_error is None else None
    options = AnnotateOptions(
        enums=EnumScreeningSettings(max_values=args.enum_max_values),
        samples=SampleSettings(rows=args.sample_rows), model=model,
        reannotate=args.reannotate or frozenset())
    summary_out = sys.stderr if args.output_schema else sys.stdout
    if configs.config_path is None and not (args.data_dir or os.environ.get(ENV_DATA_DIR)):
        print(f"No dbs.yaml here: the cache goes to the per-user data dir {configs.data_dir} "
              f"(create dbs.yaml or set {ENV_DATA_DIR} to choose another).", file=sys.stderr)
    llm_steps = default_llm_steps(AnnotatorOptions(
        rewrite_descriptions=args.rewrite_descriptions, concurrency=args.concurrency,
        example_count=args.examples)) if model else None  # skipped: the summary says so

    failures: list[tuple[str, Nl2SqlError]] = []
    store = Store.of(configs)  # verified answers that drift breaks are marked stale there
    for config in selected:
        try:
            with progress_reporter(config.db_id) as progress:
                result = annotate_database(config, configs.data_dir, options=options,
                                           llm_steps=llm_steps, progress=progress,
                                           store=store)
        except Nl2SqlError as exc:
            if len(selected) == 1:
                raise
            log.error("%s: %s", config.db_id, exc)
            failures.append((config.db_id, exc))
            continue
        if args.output_schema:  # as clients see it: no test-model placeholders of earlier runs
            shown = result.db_info if is_placeholder_model(configs.model) else \
                without_placeholders(result.db_info)
            sys.stdout.write(format_schema(shown))
            sys.stdout.flush()
        if model_error is not None:
            result.llm_notice = (f"LLM steps skipped: the model '{configs.model}' cannot be "
                                 f"used (below); the offline steps are saved.")
        print_summary(result, summary_out)
    if failures:
        names = ", ".join(f"'{db_id}'" for db_id, _ in failures)
        raise Nl2SqlError(f"Annotation failed for {names} (reasons above); fix them and run "
                          f"annotate-schema again for those databases.")
    if model_error is not None:
        raise model_error
    return 0


def _check(configs: DbConnectionConfigs, selected: list[DbConnectionConfig]) -> int:
    """``--check``: print the drift of each database; 1 when any has drift."""
    drifted = False
    for config in selected:
        with create_connection(config) as connection:
            drift = check_drift(connection, configs.data_dir)
        drifted |= drift.has_drift
        lines = drift.lines()
        metrics = []
        if drift.has_drift and config.semantic_model is not None:
            # Imported here as in the pipeline: sqlglot and the semantic compiler.
            from nl2sql.annotation.metrics_check import drifted_metrics
            metrics = drifted_metrics(config, drift,
                                      load_db_info(configs.data_dir, config.db_id))
        if metrics:
            lines[-1:-1] = ["  Governed metrics reading changed tables:", *metrics]
        print("\n".join(lines), flush=True)
    return 1 if drifted else 0


def print_summary(result: AnnotationResult, out: TextIO) -> None:
    info = result.db_info
    views = sum(1 for t in info.tables if t.is_view)
    columns = sum(len(t.columns) for t in info.tables)
    tables = plural(len(info.tables) - views, "table") + (
        f" + {plural(views, 'view')}" if views else "")
    candidates = (f" (+{result.enum_candidates} candidates left for the LLM)"
                  if result.enum_candidates else "")
    implied = (f" (+{info.implied_foreign_key_count} implied)"
               if info.implied_foreign_key_count else "")
    print(f"{info.db_id}: {tables}, {plural(columns, 'column')}, "
          f"{plural(info.foreign_key_count, 'foreign key')}{implied}, "
          f"{plural(len(info.enum_columns), 'enum column')}{candidates}; "
          f"{result.seconds:.1f} s", file=out)
    print(f"  cache: {result.path}", file=out)
    secret = [f"{t.name}.{c.name}" for t in info.tables for c in t.columns if c.secret]
    if secret:
        shown = ", ".join(secret[:8]) + (f" and {len(secret) - 8} more" if len(secret) > 8 else "")
        print(f"  secret columns, their values not read: {shown} (secret_columns in dbs.yaml "
              f"changes which)", file=out)
    login_warning = (info.model_extra or {}).get("login_warning")
    if login_warning:
        print(f"  WARNING: {login_warning}", file=out)
    if result.reused_tables:
        print(f"  {plural(len(result.reused_tables), 'table')} unchanged since the last run "
              f"(their LLM and user annotations were kept)", file=out)
    if result.llm_notice:
        print(f"  {result.llm_notice}", file=out)
    elif result.run.steps:
        for line in [*produced_lines(result.run, len(info.example_queries)),
                     *summary_lines(result.run)]:
            print(f"  {line}", file=out)
    for line in result.stale_verified:
        print(f"  {line} (accept it again with nl2sql-ask --accept ID, or --unverify ID)",
              file=out)
    if result.metrics is not None:
        print(f"  {result.metrics.summary()}", file=out)
        for line in result.metrics.lines:
            print(f"    {line}", file=out)
    out.flush()


def produced_lines(run: AnnotationRun, examples_kept: int) -> list[str]:
    """What the LLM steps of ``run`` wrote, what they redid and why examples were turned
    down (the counts the pipeline and the steps recorded on the run)."""
    extra = run.model_extra or {}
    produced: dict[str, int] = extra.get("produced") or {}
    forgotten: dict[str, int] = extra.get("forgotten") or {}
    rejected: dict[str, int] = extra.get("examples_rejected") or {}
    texts = [plural(produced[kind], kind.removesuffix("s")) for kind in
             ("table descriptions", "column descriptions", "database description")
             if produced.get(kind)]
    decided = produced.get("enums", 0) + produced.get("not enums", 0)
    if decided:
        texts.append(f"{plural(decided, 'enum decision')} ({produced.get('enums', 0)} enum, "
                     f"{produced.get('not enums', 0)} not)")
    new_examples = produced.get("example queries", 0)
    lines = [f"written by {run.model}: {', '.join(texts) or 'nothing new (all up to date)'}"]
    if new_examples or rejected:
        why = ", ".join(f"{count} {reason}" for reason, count in sorted(
            rejected.items(), key=lambda item: (-item[1], item[0])))
        lines.append(f"example queries: {new_examples} new, {examples_kept} kept in all, "
                     f"{sum(rejected.values())} rejected" + (f" ({why})" if why else ""))
    if forgotten:
        what = ", ".join(f"{count} {kind}" for kind, count in forgotten.items())
        lines.append(f"redone: {what} (test-model output or --reannotate)")
    return lines


def _reannotate_choices(text: str) -> frozenset[str]:
    choices = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [c for c in choices if c not in REANNOTATE_CHOICES]
    if unknown or not choices:
        raise argparse.ArgumentTypeError(
            f"unknown step '{unknown[0] if unknown else text}'; use a comma list of "
            f"{', '.join(REANNOTATE_CHOICES)}")
    return reannotate_steps(choices)
