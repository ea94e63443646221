"""Benchmark: point-query latency through the MCP layer, result file included.

Builds the server on the bundled bookstore sample (throwaway data dir and workspace), connects
the in-memory MCP client (``mcp.Client``, no transport), and calls ``db_execute_sql`` with
``SELECT * FROM orders WHERE order_id = k`` for ``--calls`` calls cycling over ``--keys``
different keys (default: every call a different query, so the guard's verdict cache never hits
and every call writes a new CSV + metadata pair; ``--keys 10``: repeated queries, cache hits),
after ``--warmup`` untimed calls of other keys. The verdict cache is emptied before each phase. Prints p50/p95 of the MCP call and of the same operation called directly
(``db_execute_sql_op``, no MCP), whose difference is the MCP layer's share.

    .venv/bin/python bench/point_query.py [--calls 200] [--warmup 20]

Exits 1 when p50 > 1.0 ms or p95 > 2.0 ms through MCP (the issue's target).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client

from nl2sql.mcp import build_server
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op

try:
    from nl2sql.sql_guard.guard import clear_verdict_cache
except ImportError:  # measuring a version from before the verdict cache (PYTHONPATH=old checkout)
    def clear_verdict_cache() -> None:
        pass

P50_TARGET_MS, P95_TARGET_MS = 1.0, 2.0
ORDERS = 400  # keys 1..ORDERS exist in the bundled sample
KEYS = ORDERS


def percentiles(times: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(times, n=100, method="inclusive")
    return statistics.median(times) * 1000, cuts[94] * 1000


def query(i: int, warmup: int) -> str:
    """Warm-up calls use the last keys, timed calls cycle over the first ``KEYS``."""
    k = ORDERS - i if i < warmup else (i - warmup) % KEYS + 1
    return f"SELECT * FROM orders WHERE order_id = {k}"


async def through_mcp(root: Path, calls: int, warmup: int) -> list[float]:
    clear_verdict_cache()
    server = build_server(None, data_dir=root / "data", workspace=root / "mcp")
    times = []
    async with Client(server) as client:
        for i in range(warmup + calls):
            started = time.perf_counter()
            result = await client.call_tool("db_execute_sql", {
                "db_id": "bookstore", "query": query(i, warmup), "overwrite": True})
            elapsed = time.perf_counter() - started
            if result.is_error:
                raise SystemExit(f"call failed: {result.content[0].text}")
            if i >= warmup:
                times.append(elapsed)
    return times


def direct(root: Path, calls: int, warmup: int) -> list[float]:
    clear_verdict_cache()
    ctx = OpsContext.load(None, data_dir=root / "data", workspace=root / "direct")
    times = []
    try:
        for i in range(warmup + calls):
            started = time.perf_counter()
            db_execute_sql_op(ctx, "bookstore", query(i, warmup), overwrite=True)
            if i >= warmup:
                times.append(time.perf_counter() - started)
    finally:
        ctx.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--keys", type=int, default=200, help="distinct keys (<= 380)")
    args = parser.parse_args()
    global KEYS  # noqa: PLW0603
    KEYS = max(1, min(args.keys, ORDERS - args.warmup))
    with tempfile.TemporaryDirectory(prefix="nl2sql-bench-") as tmp:
        root = Path(tmp)
        mcp_p50, mcp_p95 = percentiles(asyncio.run(through_mcp(root, args.calls, args.warmup)))
        op_p50, op_p95 = percentiles(direct(root, args.calls, args.warmup))
    print(f"point query, {args.calls} calls over {KEYS} keys after {args.warmup} warm-up:")
    print(f"  through MCP (in-memory client): p50 {mcp_p50:.2f} ms  p95 {mcp_p95:.2f} ms "
          f"(targets {P50_TARGET_MS} / {P95_TARGET_MS})")
    print(f"  operation only (no MCP):        p50 {op_p50:.2f} ms  p95 {op_p95:.2f} ms")
    print(f"  MCP layer share of p50: {mcp_p50 - op_p50:.2f} ms")
    return 0 if mcp_p50 <= P50_TARGET_MS and mcp_p95 <= P95_TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
