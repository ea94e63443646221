"""Dump an engine's function catalogue, and compare it with nl2sql's reviewed list.

DuckDB and Spark cannot enforce read-only for functions, so the guard admits only the functions
on a reviewed list (nl2sql/sql_guard/duckdb_functions.py, spark_functions.py). This script
writes the catalogue of the engine it reaches as a tab-separated file, one function per line
(name, kind, and DuckDB's description or Spark's implementing class and usage line), with the
engine's version in the first line, and prints the names the review does not cover yet (new in
this version) and the reviewed names the engine no longer has.

Usage:

    .venv/bin/python scripts/function_catalogue.py duckdb
    .venv/bin/python scripts/function_catalogue.py spark --remote sc://127.0.0.1:15002

The dump goes to scripts/function_catalogues/<engine>.tsv (committed: after an upgrade,
``git diff`` shows every function that appeared, went or changed its class). Review each new
name (what does it read, write, call?), add it to the module's admitted or refused names with
the reason, bump ENGINE_VERSION there, and run tests/test_function_allowlists.py.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "scripts" / "function_catalogues"
sys.path.insert(0, str(ROOT))


def duckdb_catalogue() -> tuple[str, list[tuple[str, str, str]]]:
    """``(version, [(name, kind, description)])`` of an in-memory DuckDB without extensions
    loaded (as nl2sql opens it: autoload off)."""
    import duckdb

    connection = duckdb.connect(config={"autoinstall_known_extensions": False,
                                        "autoload_known_extensions": False})
    rows = connection.execute(
        "SELECT lower(function_name), string_agg(DISTINCT function_type, ',' ORDER BY "
        "function_type), coalesce(min(description), '') FROM duckdb_functions() "
        "GROUP BY ALL ORDER BY 1").fetchall()
    return duckdb.__version__, [(n, k, _line(d)) for n, k, d in rows]


def spark_catalogue(remote: str) -> tuple[str, list[tuple[str, str, str]]]:
    """``(version, [(name, class, usage)])`` of the built-in functions of a Spark Connect
    server (``SHOW SYSTEM FUNCTIONS``, then ``DESCRIBE FUNCTION EXTENDED`` each)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pyspark.sql.connect.session import SparkSession

        session = SparkSession.builder.remote(remote).create()
    try:
        names = sorted(row[0] for row in session.sql("SHOW SYSTEM FUNCTIONS").collect())
        rows = []
        for name in names:
            quoted = "`" + name.replace("`", "``") + "`"
            described = [row[0] for row in session.sql(
                f"DESCRIBE FUNCTION EXTENDED {quoted}").collect()]
            fields = dict(line.split(": ", 1) for line in described if ": " in line)
            rows.append((name.lower(), fields.get("Class", ""), _line(fields.get("Usage", ""))))
        return session.version, rows
    finally:
        session.stop()


def _line(text: str) -> str:
    return " ".join(str(text).split())[:200]


def reviewed(engine: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names the engine's reviewed module admits and refuses."""
    from nl2sql.sql_guard import duckdb_functions, spark_functions

    module = {"duckdb": duckdb_functions, "spark": spark_functions}[engine]
    return module.ALLOWLIST.admitted, frozenset(module.ALLOWLIST.refused)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=["duckdb", "spark"])
    parser.add_argument("--remote", help="the Spark Connect URL (spark only)")
    args = parser.parse_args(argv)
    if args.engine == "spark" and not args.remote:
        parser.error("spark needs --remote sc://HOST:PORT")
    version, rows = (duckdb_catalogue() if args.engine == "duckdb"
                     else spark_catalogue(args.remote))
    OUTPUT.mkdir(exist_ok=True)
    path = OUTPUT / f"{args.engine}.tsv"
    with path.open("w", encoding="utf-8") as out:
        out.write(f"# {args.engine} {version}\n")
        for row in rows:
            out.write("\t".join(row) + "\n")
    admitted, refused = reviewed(args.engine)
    names = {name for name, _kind, _text in rows if " " not in name}
    new = sorted(names - admitted - refused)
    gone = sorted((admitted | refused) - names)
    print(f"{path.relative_to(ROOT)}: {len(rows)} functions of {args.engine} {version}")
    print(f"not reviewed yet ({len(new)}): {' '.join(new) or '-'}")
    print(f"reviewed, not in this version ({len(gone)}): {' '.join(gone) or '-'}")
    return 1 if new else 0


if __name__ == "__main__":
    raise SystemExit(main())
