"""Benchmark: export a large Spark SQL result to CSV through ``db_execute_sql_op``, and the peak
memory of the process doing it (the nl2sql side: MCP server, notebook, agent) at several sizes.

Starts a private Spark Connect server from the installed pyspark (tests/spark_server.py), builds
one table of max(N) rows (integer, text with commas and quotes, decimal, date), then exports the
first N rows for each N in a child process that reports its time and its peak RSS (``VmHWM``)
next to its RSS after imports and connecting (the baseline). Results stream as Arrow batches
into the CSV writer, so the peak must not grow with N.

    .venv/bin/python bench/spark_export.py [--rows 200000 2000000] [--memory 2g]

Target: the peak RSS growth at the largest N within 50 MB of the smallest (flat).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

NOTE = ("CASE WHEN id % 3 = 0 THEN 'has, a comma' WHEN id % 3 = 1 THEN 'has \"quotes\" inside' "
        "ELSE concat('plain text ', id) END")


def _vm(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(field)


def child_export(config: Path, rows: int) -> None:
    """One export in this process; prints JSON: seconds, rows, bytes, RSS numbers (kB)."""
    from nl2sql.operations.ops_context import OpsContext
    from nl2sql.operations.queries import db_execute_sql_op

    ctx = OpsContext.load(config, workspace=config.parent / "workspace")
    ctx.connection("lake").session()  # connecting is set-up, not export
    baseline = _vm("VmRSS")
    started = time.perf_counter()
    result = db_execute_sql_op(ctx, "lake", f"SELECT * FROM bench WHERE id <= {rows}",
                               output_file=f"export_{rows}.csv", overwrite=True)
    seconds = time.perf_counter() - started
    size = (ctx.workspace / result.csv_filename).stat().st_size
    print(json.dumps({"seconds": seconds, "rows": result.row_count, "bytes": size,
                      "baseline_kb": baseline, "peak_kb": _vm("VmHWM")}))
    ctx.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="*", default=[200_000, 2_000_000])
    parser.add_argument("--memory", default="2g", help="driver memory of the Spark server")
    parser.add_argument("--child", type=int)
    parser.add_argument("--config", type=Path)
    args = parser.parse_args()
    if args.child:
        child_export(args.config, args.child)
        return 0

    import yaml
    from spark_server import SparkConnectServer

    from nl2sql.schema.cache import save_db_info
    from nl2sql.schema.models import DbInfo

    with tempfile.TemporaryDirectory(prefix="nl2sql_spark_bench_") as tmp:
        folder = Path(tmp)
        server = SparkConnectServer(folder / "server", memory=args.memory)
        started = time.perf_counter()
        server.start()
        print(f"server up in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        try:
            session = server.session()
            started = time.perf_counter()
            session.sql("CREATE DATABASE lake")
            session.sql(f"CREATE TABLE lake.bench USING parquet AS SELECT id, "
                        f"concat('name ', id) AS name, CAST(id * 0.25 AS DECIMAL(14, 2)) AS "
                        f"amount, id % 100 AS qty, date_add(DATE'2020-01-01', "
                        f"CAST(id % 1000 AS INT)) AS created, {NOTE} AS note "
                        f"FROM range(1, {max(args.rows) + 1})")
            session.stop()
            print(f"table built in {time.perf_counter() - started:.1f} s", file=sys.stderr)
            config = folder / "dbs.yaml"
            config.write_text(yaml.safe_dump({"databases": {"lake": {
                "type": "spark", "remote": server.remote, "database": "lake",
                "query_timeout_seconds": 600, "max_rows": 10_000_000}}}))
            save_db_info(DbInfo(db_id="lake", db_type="spark"), folder / "data")
            results = []
            for rows in sorted(args.rows):
                out = subprocess.run([sys.executable, __file__, "--child", str(rows),
                                      "--config", str(config)], check=True,
                                     capture_output=True, text=True).stdout
                result = json.loads(out.strip().splitlines()[-1])
                results.append(result)
                growth = (result["peak_kb"] - result["baseline_kb"]) / 1024
                print(f"{rows:>10,} rows: {result['seconds']:.2f} s "
                      f"({result['rows'] / result['seconds']:,.0f} rows/s, "
                      f"{result['bytes'] / 2**20:.0f} MiB CSV), peak RSS "
                      f"{result['peak_kb'] / 1024:.1f} MB (baseline "
                      f"{result['baseline_kb'] / 1024:.1f} MB, growth {growth:.1f} MB)")
        finally:
            server.stop()
    growths = [(r["peak_kb"] - r["baseline_kb"]) / 1024 for r in results]
    flat = max(growths) - min(growths) <= 50
    print(f"memory {'flat' if flat else 'NOT flat'}: growth {min(growths):.1f} .. "
          f"{max(growths):.1f} MB")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
