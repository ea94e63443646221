"""Benchmark: nl2sql-mcp beside two peer MCP servers, DBHub and mcp-alchemy, one MCP client.

Every server runs as a subprocess over stdio and is driven by the same client (the Python
``mcp`` SDK's ``Client`` on its ``stdio_client`` transport, ``mode="legacy"``: the initialize
handshake every one of them speaks; no response cache) on the same generated SQLite file: one
``orders`` table of ``--rows`` rows (default 100,000; id, customer, date, status, amount, a
note with commas and quotes in one row of three). One run of a server is one process life:

- cold start: spawn -> ``initialize`` -> ``tools/list`` answered;
- first query: ``--think`` seconds later (a model reading the tool list; default 1), one
  ``SELECT * FROM orders WHERE order_id = k``;
- point queries: ``--warmup`` untimed, then ``--calls`` timed ones, each a different ``k``;
  p50 and p95 of the run;
- a big result: ``SELECT * FROM orders`` (all ``--rows`` rows) once, unless ``--no-big``;
- the server's peak RSS (``VmHWM`` of the child process, Linux) at the end of the run.

The servers take turns run by run (the order rotates each run) so a change in machine load
hits them alike; the report is the median over ``--runs`` runs of each figure, the ratios
ours / peer, and the load average before and after. The results are not the same work: nl2sql
writes every result as a CSV file plus a metadata file in its workspace and answers with the
path and a preview; the peers answer with the rows inline (DBHub as JSON, mcp-alchemy as text
with one line per value; mcp-alchemy's inline limit ``EXECUTE_QUERY_MAX_CHARS`` is raised so it
returns all rows instead of 4,000 characters) and write no file. nl2sql parses every query
with its read-only guard; DBHub runs with its default configuration (not read-only) and
mcp-alchemy has no read-only mode.

The client reads the servers' stdout through ``WholeLines`` (below): the SDK's own stdio reader
is quadratic in the length of one answer (DBHub's 100,000 rows: 0.66 s with
whole lines, 6.6 s with the SDK reader, one run each at load average 6).
Each peer's SQL tool and its SQL argument are read from its ``tools/list`` answer at run time.
A peer that is not installed is skipped with the reason. Install them outside the project's
dependencies (``bench/.peers`` is git-ignored; versions tested):

    npm install --prefix bench/.peers @bytebase/dbhub@0.21.2
    python3 -m venv bench/.peers/alchemy
    bench/.peers/alchemy/bin/pip install mcp-alchemy==2026.10.15.202659

    .venv/bin/python bench/peers.py [--runs 5] [--calls 200] [--rows 100000] [--only dbhub]

Other locations: ``--dbhub CMD`` / ``--mcp-alchemy CMD`` (an executable, or ``none`` to skip),
``--nl2sql CMD``. DBHub 1.x needs Node >= 22.5 (``node:sqlite``); 0.21 runs on Node 20.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shlex
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import mcp.client.stdio
from anyio import EndOfStream
from anyio.streams.text import TextReceiveStream
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
PEERS_DIR = HERE / ".peers"
SQL_TOOL_NAMES = ("db_execute_sql", "execute_sql", "execute_query", "query", "run_query")
SQL_ARGUMENT_NAMES = ("query", "sql", "statement")


class WholeLines(TextReceiveStream):
    """The server's stdout as text ending at a line end (or at the end of the stream).

    The SDK's stdio reader (mcp 2.3) does ``(buffer + chunk).split("\\n")`` for every chunk of
    at most 64 KiB it reads, so a line of n bytes costs O(n^2 / 64 KiB): 2.7 s on this machine
    for one 21 MB answer (DBHub's 100,000 rows), more than the server's own work. Handing it
    whole lines makes that loop linear; ``--sdk-reader`` measures with the SDK as it is.
    """

    _rest = ""

    async def receive(self) -> str:
        parts, self._rest = [self._rest], ""
        while True:
            try:
                chunk = await super().receive()
            except EndOfStream:
                if any(parts):
                    return "".join(parts)
                raise
            cut = chunk.rfind("\n") + 1
            if cut:
                parts.append(chunk[:cut])
                self._rest = chunk[cut:]
                return "".join(parts)
            parts.append(chunk)


@dataclass
class Server:
    """One MCP server to measure: how to start it and the fixed arguments of its SQL tool."""

    name: str
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    fixed_arguments: dict[str, Any] = field(default_factory=dict)
    # Filled in by the first run from the server's own answers.
    version: str = "?"
    tool: str = ""
    argument: str = ""


@dataclass
class Run:
    cold_start: float
    first_query: float
    p50: float
    p95: float
    big: float | None
    big_answer_bytes: int | None
    peak_rss: int | None  # bytes, the server process's VmHWM at the end of the run (Linux)


def make_database(path: Path, rows: int) -> None:
    """``orders`` with ``rows`` rows; deterministic."""
    statuses = ("new", "paid", "shipped", "returned")
    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, "
        "order_date TEXT NOT NULL, status TEXT NOT NULL, amount REAL NOT NULL, note TEXT)")
    connection.executemany(
        "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)",
        ((i, i * 7919 % 5000 + 1, f"2025-{i % 12 + 1:02d}-{i % 28 + 1:02d}", statuses[i % 4],
          round(i * 0.37 % 1000, 2), f'gift, "wrapped" #{i}' if i % 3 == 0 else None)
         for i in range(1, rows + 1)))
    connection.commit()
    connection.close()


def _command(option: str | None, default: Path | str | None) -> list[str] | str:
    """The command list, or a reason why there is none."""
    if option is not None:
        if option.lower() == "none":
            return "skipped by option"
        return shlex.split(option)
    if default is None:
        return "not found"
    path = Path(default) if not isinstance(default, Path) else default
    if path.is_file() and os.access(path, os.X_OK):
        return [str(path)]
    found = shutil.which(str(default))
    return [found] if found else f"not found ({default})"


def servers(args: argparse.Namespace, db: Path, folder: Path) -> tuple[list[Server], list[str]]:
    """The servers to measure, and one line per server skipped."""
    chosen, skipped = [], []
    ours = _command(args.nl2sql, Path(sys.executable).parent / "nl2sql-mcp")
    config = folder / "dbs.yaml"
    config.write_text(f"databases:\n  bench:\n    type: sqlite\n    path: {db}\n")
    if isinstance(ours, str):
        skipped.append(f"nl2sql-mcp: {ours}; install the project (`pip install -e .`)")
    else:
        chosen.append(Server(
            "nl2sql", ours,
            {"NL2SQL_CONFIG": str(config), "NL2SQL_DATA_DIR": str(folder / "data"),
             "NL2SQL_WORKSPACE": str(folder / "workspace")},
            {"db_id": "bench", "overwrite": True}))

    dbhub_js = PEERS_DIR / "node_modules" / "@bytebase" / "dbhub" / "dist" / "index.js"
    node = shutil.which("node")
    if args.dbhub is not None:
        dbhub = _command(args.dbhub, None)
    elif dbhub_js.is_file() and node:
        dbhub = [node, str(dbhub_js)]
    elif dbhub_js.is_file():
        dbhub = "node (Node.js >= 20) is not on PATH"
    else:
        dbhub = (f"not installed in {PEERS_DIR.relative_to(HERE.parent)}; "
                 "`npm install --prefix bench/.peers @bytebase/dbhub@0.21.2`")
    if isinstance(dbhub, str):
        skipped.append(f"DBHub: {dbhub}")
    else:
        chosen.append(Server("dbhub", [*dbhub, "--transport", "stdio", "--dsn", f"sqlite://{db}"]))
        # DBHub reads sqlite:///abs/path as /abs/path (and sqlite:////abs/path as abs/path,
        # relative), unlike SQLAlchemy, where an absolute path takes four slashes.

    alchemy = _command(args.mcp_alchemy, PEERS_DIR / "alchemy" / "bin" / "mcp-alchemy")
    if isinstance(alchemy, str) and args.mcp_alchemy is None:
        found = shutil.which("mcp-alchemy")
        alchemy = [found] if found else (
            "not installed; `python3 -m venv bench/.peers/alchemy && "
            "bench/.peers/alchemy/bin/pip install mcp-alchemy==2026.10.15.202659`")
    if isinstance(alchemy, str):
        skipped.append(f"mcp-alchemy: {alchemy}")
    else:
        chosen.append(Server("mcp-alchemy", alchemy,
                             {"DB_URL": f"sqlite:///{db}", "EXECUTE_QUERY_MAX_CHARS": "2000000000"}))

    if args.only:
        wanted = {name.strip() for name in args.only.split(",")}
        chosen = [server for server in chosen if server.name in wanted or server.name == "nl2sql"]
    return chosen, skipped


def sql_tool(tools: list[Any]) -> tuple[str, str]:
    """The SQL tool's name and its SQL argument, from a tools/list answer."""
    by_name = {tool.name: tool for tool in tools}
    candidates = [by_name[name] for name in SQL_TOOL_NAMES if name in by_name] or [
        tool for tool in tools if "sql" in tool.name or "query" in tool.name]
    for tool in candidates:
        properties = (tool.input_schema or {}).get("properties", {})
        for argument in SQL_ARGUMENT_NAMES:
            if argument in properties:
                return tool.name, argument
    raise RuntimeError(f"no SQL tool found among {sorted(by_name)}")


def answer_text(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def failed(server: Server, result: Any, text: str) -> str | None:
    """Why a tool answer is an error, else None (peers report some errors as text)."""
    if result.is_error:
        return text[:300]
    if server.name == "mcp-alchemy" and text.startswith("Error:"):
        return text[:300]
    if server.name == "dbhub" and text.lstrip().startswith("{"):
        try:
            body = json.loads(text)
        except ValueError:
            return None
        if body.get("success") is False:
            return text[:300]
    return None


async def call(client: Client, server: Server, sql: str,
               rows: int | None = None) -> tuple[float, int]:
    """Seconds from request to answer and the answer's size in bytes; with ``rows``, checks
    that the answer reports that many rows."""
    started = time.perf_counter()
    result = await client.call_tool(server.tool, {**server.fixed_arguments, server.argument: sql})
    elapsed = time.perf_counter() - started
    text = answer_text(result)
    if reason := failed(server, result, text):
        raise RuntimeError(f"{server.name}: {sql!r} failed: {reason}")
    if rows is not None and (reported := rows_in_answer(text)) != rows:
        raise RuntimeError(f"{server.name}: {sql!r} answered {reported} rows, not {rows}: "
                           f"{text[:200]!r}")
    return elapsed, len(text.encode())


def rows_in_answer(text: str) -> int | None:
    """The row count an answer reports (nl2sql "N rows x M columns saved", DBHub JSON "count",
    mcp-alchemy "Result: N rows"), None when it says none."""
    if match := re.match(r"([\d,]+) rows? x ", text):
        return int(match[1].replace(",", ""))
    if match := re.search(r"Result: (?:showing first )?(\d+) rows", text):
        return int(match[1])
    if text.lstrip().startswith("{"):
        count = json.loads(text).get("data", {}).get("count")
        return count if isinstance(count, int) else None
    return None


def _children() -> set[int]:
    """Pids of this process's children (Linux ``/proc``; empty elsewhere)."""
    pids: set[int] = set()
    for children in Path("/proc/self/task").glob("*/children"):
        try:
            pids.update(int(pid) for pid in children.read_text().split())
        except OSError:
            pass
    return pids


def _peak_rss(pids: set[int]) -> int | None:
    """Largest VmHWM (peak resident set) among ``pids``, in bytes."""
    peaks = []
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if match := re.search(r"^VmHWM:\s+(\d+) kB", status, re.M):
            peaks.append(int(match[1]) * 1024)
    return max(peaks, default=None)


def point(k: int) -> str:
    return f"SELECT * FROM orders WHERE order_id = {k}"


async def one_run(server: Server, args: argparse.Namespace, keys: list[int],
                  errlog: TextIO) -> Run:
    params = StdioServerParameters(command=server.command[0], args=server.command[1:],
                                   env={**os.environ, **server.env})
    before = _children()
    started = time.perf_counter()
    async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as client:
        tools = (await client.list_tools()).tools
        cold_start = time.perf_counter() - started
        server_pids = _children() - before  # the server (DBHub: node; the others: python)
        if not server.tool:
            server.tool, server.argument = sql_tool(tools)
            info = client.server_info
            server.version = f"{info.name} {info.version}" if info else "?"
        await asyncio.sleep(args.think)
        first, _ = await call(client, server, point(keys[0]))
        for k in keys[1:1 + args.warmup]:
            await call(client, server, point(k))
        times = [(await call(client, server, point(k)))[0] for k in keys[1 + args.warmup:]]
        big = big_bytes = None
        if args.big:
            big, big_bytes = await call(client, server, "SELECT * FROM orders", args.rows)
        peak_rss = _peak_rss(server_pids)
    cuts = statistics.quantiles(times, n=100, method="inclusive")
    return Run(cold_start, first, statistics.median(times), cuts[94], big, big_bytes, peak_rss)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.2f}"


def report(results: dict[str, list[Run]], chosen: list[Server], args: argparse.Namespace,
           loads: tuple[str, str]) -> None:
    figures = [("cold start to tools/list (ms)", "cold_start"), ("first query (ms)", "first_query"),
               (f"point query p50 (ms, {args.calls} calls)", "p50"),
               (f"point query p95 (ms, {args.calls} calls)", "p95")]
    if args.big:
        figures.append((f"SELECT * of {args.rows:,} rows (ms)", "big"))
    medians = {name: {attr: statistics.median(getattr(run, attr) for run in runs)
                      for _, attr in figures} for name, runs in results.items()}
    print(f"\n{len(next(iter(results.values())))} runs per server, medians; load average "
          f"{loads[0]} before, {loads[1]} after, {os.cpu_count()} CPUs")
    for server in chosen:
        print(f"  {server.name}: {server.version}; tool {server.tool}({server.argument}=...)")
    names = [server.name for server in chosen]
    width = max(len(label) for label, _ in figures) + 2
    print("\n" + "".ljust(width) + "".join(name.rjust(14) for name in names)
          + "".join(f"ours/{name}".rjust(18) for name in names[1:]))
    for label, attr in figures:
        row = label.ljust(width) + "".join(_ms(medians[name][attr]).rjust(14) for name in names)
        ours = medians["nl2sql"][attr] if "nl2sql" in medians else None
        for name in names[1:]:
            ratio = f"{ours / medians[name][attr]:.2f}x" if ours and medians[name][attr] else "-"
            row += ratio.rjust(18)
        print(row)
    if args.big:
        sizes = "  ".join(
            f"{name} {statistics.median(run.big_answer_bytes for run in runs) / 1e6:.2f} MB"
            for name, runs in results.items())
        print(f"\nanswer size of the big query: {sizes} (nl2sql: path + preview; the rows are in "
              "its CSV)")
    peaks = {name: [run.peak_rss for run in runs if run.peak_rss] for name, runs in results.items()}
    if all(peaks.values()):
        print("server peak RSS (median of runs): " + "  ".join(
            f"{name} {statistics.median(values) / 2**20:.0f} MiB" for name, values in peaks.items()))
    print("per run (ms) cold / first / p50 / p95" + (" / big" if args.big else "") + ":")
    for name, runs in results.items():
        print(f"  {name}: " + ";  ".join(
            " / ".join(_ms(getattr(run, attr)) for _, attr in figures) for run in runs))


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


async def main_async(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="nl2sql-peers-") as tmp:
        folder = Path(tmp)
        db = folder / "bench.db"
        make_database(db, args.rows)
        chosen, skipped = servers(args, db, folder)
        for line in skipped:
            print(f"skipped {line}")
        if not chosen:
            print("nothing to measure")
            return 0
        rng = random.Random(14)
        per_run = 1 + args.warmup + args.calls
        results: dict[str, list[Run]] = {server.name: [] for server in chosen}
        loads_before = _load()
        with open(folder / "servers.log", "w+") as errlog:
            try:
                for run in range(args.runs):
                    turn = chosen[run % len(chosen):] + chosen[:run % len(chosen)]
                    for server in turn:
                        if server.name == "nl2sql":  # every run starts from an empty workspace
                            shutil.rmtree(folder / "workspace", ignore_errors=True)
                        # A different set of keys each run: nl2sql's verdict cache never hits.
                        keys = rng.sample(range(1, args.rows + 1), per_run)
                        result = await one_run(server, args, keys, errlog)
                        results[server.name].append(result)
                        print(f"run {run + 1} {server.name}: cold {_ms(result.cold_start)}, first "
                              f"{_ms(result.first_query)}, p50 {_ms(result.p50)}, p95 "
                              f"{_ms(result.p95)}, big {_ms(result.big)} ms (load {_load()})",
                              flush=True)
            except Exception:
                errlog.seek(0)
                sys.stderr.write("server stderr (last 2,000 characters):\n"
                                 + errlog.read()[-2000:] + "\n")
                raise
        report(results, chosen, args, (loads_before, _load()))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="process lives per server")
    parser.add_argument("--calls", type=int, default=200, help="timed point queries per run")
    parser.add_argument("--warmup", type=int, default=20, help="untimed point queries per run")
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the orders table")
    parser.add_argument("--think", type=float, default=1.0,
                        help="seconds between the tools/list answer and the first query")
    parser.add_argument("--no-big", dest="big", action="store_false",
                        help="skip the SELECT * of the whole table")
    parser.add_argument("--only", help="peers to run beside nl2sql: dbhub, mcp-alchemy")
    parser.add_argument("--nl2sql", help="command of nl2sql-mcp (default: beside this Python)")
    parser.add_argument("--dbhub", help="command of DBHub (default: bench/.peers; none: skip)")
    parser.add_argument("--mcp-alchemy", dest="mcp_alchemy",
                        help="command of mcp-alchemy (default: bench/.peers/alchemy, then PATH)")
    parser.add_argument("--sdk-reader", action="store_true",
                        help="keep the SDK's stdio line reader (quadratic in the line length)")
    args = parser.parse_args()
    if not args.sdk_reader:
        mcp.client.stdio.TextReceiveStream = WholeLines  # type: ignore[misc]
    if args.rows < 1 + args.warmup + args.calls:
        parser.error("--rows must be at least 1 + --warmup + --calls (every call a new key)")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
