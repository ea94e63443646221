"""Context quality on a question set: routing, table recall after pruning, value-hint recall.

For every question (JSONL/CSV with ``id, db_id, question, query``) it asks the context engine:

- routing: is the gold ``db_id`` the first candidate (top-1) / among the first three (top-3);
- table recall: with a budget of ``--budget-share`` (default 0.4) of the database's full schema
  tokens, are all tables of the gold SQL kept (share of questions; also the mean share of gold
  tables kept per question);
- value-hint recall: of the gold SQL's string literals compared with a column (``=``, ``<>``,
  ``IN``, ``LIKE``) that contain a letter (dates and numbers are not values a question names;
  ``strftime('%Y', ...)`` formats are not compared), the share found among the value hints (``= 'x'``/``IN``:
  equal ignoring case; ``LIKE '%x%'``: contained);
- the median and p95 time of one ``context()`` call;
- routing top-1 on the questions another database could answer as well ("ambiguous": another
  database has tables named like every gold table and holds every gold literal, e.g. "How many
  customers live in Germany?" over three shops), and on the rest.

- budget use: the pruned schema's tokens as a share of the budget (mean over pruned questions);
- value recall with domains: a gold literal also counts as found when the pruned schema shows
  it in a column's value domain (``[a, b, c]`` in the column comment: a value the question
  implies, such as a weekday, that the model can read off).

``--set`` picks the databases and questions, each annotated without a model in a throwaway
data dir:

- ``samples`` (default): bookstore, Chinook, Northwind (SQLite), the bundled question sets;
- ``analytics``: four analytics schemas of 15-21 tables (cricket statistics, retail, HR,
  banking; ``tests/data/context_sets/``), 80 multi-step questions naming their tables in other
  words;
- ``catalog``: those four plus 54 small databases of 18 domains with overlapping table names
  (59 with the bundled bookstore), the analytics questions and 108 routing questions;
- ``enterprise``: the four analytics schemas inside one database of ``--tables`` (default
  1,000) tables, padded with look-alike tables ("fantasy_player_hist"); the analytics questions
  at a fixed ``--budget-tokens`` (default 6,000, the engine's default budget).

``--config dbs.yaml`` and ``--questions FILE`` (repeatable) measure any other annotated catalog
and question set.

    .venv/bin/python bench/context_quality.py [--set analytics] [--budget-share 0.4]
        [--budget-tokens N] [--tables 1000] [--show-misses]
    .venv/bin/python bench/context_quality.py --config dbs.yaml --questions q.jsonl ...
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import sqlglot
from sqlglot import exp

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "tests" / "data" / "samples"
QUESTIONS = REPO / "tests" / "data" / "questions"
CONTEXT_SETS = REPO / "tests" / "data" / "context_sets"
ANALYTICS = ("cricket", "retail", "hr", "finance")


def sample_catalog(folder: Path) -> Path:
    """dbs.yaml for bookstore, Chinook and Northwind (SQLite) in ``folder``, annotated."""
    shutil.copyfile(SAMPLES / "chinook" / "chinook.sqlite", folder / "chinook.sqlite")
    northwind = _load_script(SAMPLES / "northwind" / "northwind_sqlite.sql",
                             folder / "northwind.db")
    return _annotated(folder, {"chinook": folder / "chinook.sqlite", "northwind": northwind})


def _annotated(folder: Path, databases: dict[str, Path]) -> Path:
    """dbs.yaml naming the SQLite files ``databases`` (db_id -> file), annotated."""
    from nl2sql.config.registry import DbConnectionConfigs
    from nl2sql.annotation.pipeline import annotate_database

    config = folder / "dbs.yaml"
    config.write_text("databases:\n" + "".join(
        f"  {db_id}: {{type: sqlite, path: {path.name}}}\n"
        for db_id, path in databases.items()), encoding="utf-8")
    configs = DbConnectionConfigs.load(config, workspace=folder / "workspace")
    for db in configs:
        annotate_database(db, configs.data_dir)
    return config


def _load_script(script: Path, path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(script.read_text("utf-8"))
    conn.close()
    return path


def context_set(name: str, folder: Path, tables: int) -> tuple[Path, list[Path]]:
    """The dbs.yaml and question files of ``--set name``, built in ``folder``."""
    analytics = {d: _load_script(CONTEXT_SETS / f"{d}.sql", folder / f"{d}.db")
                 for d in ANALYTICS} if name != "samples" else {}
    if name == "analytics":
        return _annotated(folder, analytics), [CONTEXT_SETS / "analytics.jsonl"]
    if name == "catalog":
        small = {p.stem: _load_script(p, folder / f"{p.stem}.db")
                 for p in sorted((CONTEXT_SETS / "catalog").glob("*.sql"))}
        return (_annotated(folder, {**analytics, **small}),
                [CONTEXT_SETS / "analytics.jsonl", CONTEXT_SETS / "catalog.jsonl"])
    if name == "enterprise":
        sys.path.insert(0, str(REPO / "scripts"))
        import random

        from build_context_sets import enterprise

        with sqlite3.connect(folder / "enterprise.db") as conn:
            conn.executescript(enterprise(random.Random("enterprise"), tables))
        conn.close()
        rows = [dict(json.loads(line), db_id="enterprise") for line in
                (CONTEXT_SETS / "analytics.jsonl").read_text("utf-8").splitlines()]
        questions = folder / "enterprise.jsonl"
        questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return _annotated(folder, {"enterprise": folder / "enterprise.db"}), [questions]
    return sample_catalog(folder), [QUESTIONS / f"{n}.jsonl"
                                    for n in ("bookstore", "chinook", "northwind")]


def shown_in_domain(schema_sql: str, value: str) -> bool:
    """``value`` is listed in a column's value domain (``[a, b, c]``) in ``schema_sql``."""
    needle = value.casefold()
    for line in schema_sql.splitlines():
        if line.lstrip().startswith("--") or "[" not in line:
            continue  # sample rows and table comments are not domains
        domain = line[line.rfind("[") + 1:line.rfind("]")]
        items = [i.strip().strip("'").casefold() for i in domain.split(",")]
        if needle in items:
            return True
    return False


def read_questions(paths: list[Path]) -> list[dict]:
    rows = []
    for path in paths:
        if path.suffix == ".csv":
            import csv

            with path.open(encoding="utf-8", newline="") as handle:
                rows += list(csv.DictReader(handle))
        else:
            rows += [json.loads(line) for line in path.read_text("utf-8").splitlines()
                     if line.strip()]
    return rows


def gold_parts(sql: str | list[str], dialect: str | None) -> tuple[set[str], list[tuple[str, bool]]]:
    """Tables (lower case) and string literals (text, is_like) of the gold SQL."""
    query = sql[0] if isinstance(sql, list) else sql
    try:
        tree = sqlglot.parse_one(query, read=dialect)
    except sqlglot.errors.ParseError:
        return set(), []
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    tables = {t.name.lower() for t in tree.find_all(exp.Table)} - ctes
    literals = []
    compared = (exp.EQ, exp.NEQ, exp.In, exp.Like, exp.ILike)
    for literal in tree.find_all(exp.Literal):
        if (literal.is_string and any(ch.isalpha() for ch in literal.this)
                and isinstance(literal.parent, compared)):
            is_like = isinstance(literal.parent, (exp.Like, exp.ILike))
            literals.append((literal.this, is_like))
    return tables, literals


def _answerable_elsewhere(engine, db_id: str, tables: set[str],  # noqa: ANN001
                          literals: list[tuple[str, bool]]) -> bool:
    """Another database has tables named like each gold table and holds each gold literal."""
    from nl2sql.schema.words import stem, terms

    def words(name: str) -> frozenset[str]:
        return frozenset(stem(w) for w in terms(name, expand=False))

    wanted = [words(t) for t in tables]
    for other in engine.available():
        if other.db_id == db_id:
            continue
        names = {words(e.name) for e in other.index.entries}
        values = {v.casefold() for e in other.index.entries for items in e.values.values()
                  for v in items}
        if all(w in names for w in wanted) and all(
                text.strip("%").casefold() in values for text, _like in literals):
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path)
    parser.add_argument("--questions", type=Path, action="append")
    parser.add_argument("--budget-share", type=float, default=0.4)
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--set", default="samples",
                        choices=["samples", "analytics", "catalog", "enterprise"])
    parser.add_argument("--budget-tokens", type=int,
                        help="a fixed budget instead of --budget-share (enterprise: 6,000)")
    parser.add_argument("--tables", type=int, default=1000, help="enterprise: tables")
    args = parser.parse_args(argv)

    from nl2sql.config.registry import DbConnectionConfigs
    from nl2sql.context_engine.engine import ContextEngine

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        if args.config:
            config, files = args.config, args.questions
        else:
            config, files = context_set(args.set, Path(tmp), args.tables)
        annotate_seconds = time.perf_counter() - started
        questions = read_questions(files)
        if args.budget_tokens is None and args.set == "enterprise" and not args.config:
            args.budget_tokens = 6000
        configs = DbConnectionConfigs.load(config, workspace=Path(tmp) / "workspace")
        engine = ContextEngine(configs)
        started = time.perf_counter()
        for db in configs:
            try:
                engine.loaded(db.db_id)
            except Exception:  # noqa: BLE001  (no cache: routed last, as at run time)
                pass
        load_seconds = time.perf_counter() - started
        top1 = top3 = kept_all = 0
        ambiguous = ambiguous_top1 = 0
        kept_share: list[float] = []
        literals_total = literals_found = literals_with_domains = 0
        budget_used: list[float] = []
        times: list[float] = []
        misses: list[str] = []
        for row in questions:
            db_id, question = row["db_id"], row["question"]
            routed = [c.db_id for c in engine.rank(question)]
            top1 += routed[:1] == [db_id]
            top3 += db_id in routed[:3]
            dialect = "postgres" if configs.get(db_id).type.value == "postgres" else "sqlite"
            gold_tables, literals = gold_parts(row["query"], dialect)
            elsewhere = _answerable_elsewhere(engine, db_id, gold_tables, literals)
            if elsewhere:
                ambiguous += 1
                ambiguous_top1 += routed[:1] == [db_id]
            if routed[:1] != [db_id]:
                misses.append(f"route{' (ambiguous)' if elsewhere else ''} {row['id']}: "
                              f"{routed[:3]} for {question!r}")
            full = engine.loaded(db_id).full_tokens
            budget = args.budget_tokens or int(full * args.budget_share)
            t0 = time.perf_counter()
            ctx = engine.context(question, db_id=db_id, budget_tokens=budget)
            times.append(time.perf_counter() - t0)
            kept = {t.name.lower() for t in ctx.tables}
            if ctx.pruned:
                budget_used.append(ctx.schema_tokens / budget)
            found = gold_tables & kept
            kept_share.append(len(found) / len(gold_tables) if gold_tables else 1.0)
            if found == gold_tables:
                kept_all += 1
            else:
                misses.append(f"tables {row['id']}: missing {sorted(gold_tables - kept)} "
                              f"for {question!r}")
            hints = [h.value.casefold() for h in ctx.value_hints]
            for text, is_like in literals:
                literals_total += 1
                needle = text.strip("%").casefold()
                if any((needle in h) if is_like else (needle == h) for h in hints):
                    literals_found += 1
                    literals_with_domains += 1
                elif not is_like and shown_in_domain(ctx.schema_sql, needle):
                    literals_with_domains += 1
                else:
                    misses.append(f"value {row['id']}: {text!r} not in {hints} for {question!r}")
        n = len(questions)
        times.sort()
        result = {
            "questions": n,
            "databases": len(configs),
            "routing_top1": round(top1 / n, 3),
            "routing_top3": round(top3 / n, 3),
            "ambiguous_questions": ambiguous,
            "routing_top1_ambiguous": round(ambiguous_top1 / ambiguous, 3) if ambiguous
            else None,
            "routing_top1_unambiguous": round((top1 - ambiguous_top1) / (n - ambiguous), 3)
            if n > ambiguous else None,
            ("all_gold_tables_kept_at_" + (f"{args.budget_tokens}_tokens" if args.budget_tokens
                                            else f"{args.budget_share:.0%}_budget")):
                round(kept_all / n, 3),
            "budget_used_mean": round(statistics.fmean(budget_used), 3) if budget_used
            else None,
            "mean_gold_table_recall": round(statistics.fmean(kept_share), 3),
            "value_hint_recall": round(literals_found / literals_total, 3) if literals_total
            else None,
            "value_recall_with_domains": round(literals_with_domains / literals_total, 3)
            if literals_total else None,
            "gold_literals": literals_total,
            "context_ms_median": round(statistics.median(times) * 1000, 2),
            "context_ms_p95": round(times[int(0.95 * (n - 1))] * 1000, 2),
            "index_load_s": round(load_seconds, 3),
            "build_and_annotate_s": round(annotate_seconds, 1),
        }
        print(json.dumps(result, indent=2))
        if args.show_misses:
            print("\n".join(misses), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
