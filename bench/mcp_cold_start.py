"""Cold start of the MCP server: spawn ``nl2sql-mcp`` (stdio) and time the tools/list answer.

Measures what a client such as Claude Code waits for at start-up: process start, imports,
config load, the initialize handshake and the first tools/list. Raw JSON-RPC lines on the pipes,
so no client library start-up is counted. Target (issue 14): median <= 0.5 s.

Then, ``--think`` seconds later (a model reading the tool list; default 1), the first and the
second ``db_execute_sql`` calls (``SELECT * FROM orders WHERE order_id = 1`` and ``= 2`` on
the bundled sample), each timed from request to answer: the first query after start.

Each run also starts the SDK's own floor back to back with ours (the order swapped every run):
a server of one trivial tool built with the SDK's ``MCPServer`` alone (no nl2sql code), started
by the same Python. The ratio of the medians is robust to the machine's load, absolute seconds
are not. Exits 1 when ours is above 1.15x the bare server (issue 29). ``--bare-sdk`` times the
bare server alone, ``--ours-only`` ours alone; ``--json FILE`` writes the figures
(``bench/compare.py`` reads them).

Usage:
    .venv/bin/python bench/mcp_cold_start.py [--runs 10] [--command PATH] [--think 1.0]
    .venv/bin/python bench/mcp_cold_start.py --runs 10 --bare-sdk
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import fresh_bytecode

PROTOCOL_VERSION = "2025-11-25"
TARGET_S = 0.5  # issue 14 (it was 1 s); reported, not the exit code
TARGET_RATIO = 1.15  # issue 29: within 1.15x of the bare SDK server, back to back
BARE_SDK_SERVER = """
from mcp.server.mcpserver import MCPServer
server = MCPServer("bare", log_level="WARNING")
@server.tool()
def ping(text: str) -> str:
    return text
server.run("stdio")
"""


def _send(process: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert process.stdin is not None
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


def handshake(process: subprocess.Popen[bytes], request_id: int = 1) -> None:
    """initialize, its answer, and notifications/initialized."""
    _send(process, {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
        "clientInfo": {"name": "nl2sql-bench", "version": "0"}}})
    _answer(process, request_id)
    _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def _answer(process: subprocess.Popen[bytes], request_id: int) -> dict[str, object]:
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"server closed stdout (exit code {process.wait()})")
        message = json.loads(line)
        if message.get("id") == request_id:
            return message


def timed_query(process: subprocess.Popen[bytes], request_id: int, key: int) -> float:
    started = time.perf_counter()
    _send(process, {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
        "name": "db_execute_sql", "arguments": {
            "db_id": "bookstore", "query": f"SELECT * FROM orders WHERE order_id = {key}",
            "overwrite": True}}})
    answer = _answer(process, request_id)
    elapsed = time.perf_counter() - started
    if answer.get("error") or answer["result"].get("isError"):  # type: ignore[union-attr]
        raise RuntimeError(f"query failed: {answer}")
    return elapsed


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + sys) a running process has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(command: list[str], env: dict[str, str],
            think: float = 0.0) -> tuple[float, float, int, list[float]]:
    """Seconds from spawn to the tools/list answer, the server's CPU seconds until that answer
    (user + sys: a figure that a busy machine inflates far less than wall time; 10 ms ticks),
    the tool count, and (with ``think``) the seconds of the first and second query sent
    ``think`` s after tools/list."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        handshake(process)
        _send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        tools = _answer(process, 2)["result"]["tools"]  # type: ignore[index]
        elapsed = time.perf_counter() - started
        cpu = cpu_seconds(process.pid)
        queries = []
        if think:
            time.sleep(think)
            queries = [timed_query(process, 3, 1), timed_query(process, 4, 2)]
    finally:
        process.stdin.close()  # type: ignore[union-attr]
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return elapsed, cpu, len(tools), queries


def _ratio(ours: list[float], bare: list[float]) -> float:
    return statistics.median(ours) / statistics.median(bare)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--command", default=str(Path(sys.executable).parent / "nl2sql-mcp"))
    parser.add_argument("--think", type=float, default=1.0,
                        help="seconds between tools/list and the first query (0: no queries)")
    parser.add_argument("--bare-sdk", action="store_true",
                        help="time a one-tool server of the SDK alone (no nl2sql; no queries)")
    parser.add_argument("--ours-only", action="store_true",
                        help="time nl2sql-mcp alone (no bare SDK server interleaved)")
    parser.add_argument("--json", type=Path, help="write the figures to this JSON file")
    args = parser.parse_args(argv)
    fresh_bytecode()
    bare_command = [sys.executable, "-c", BARE_SDK_SERVER]
    ours_command = bare_command if args.bare_sdk else [args.command]
    interleave = not (args.bare_sdk or args.ours_only)
    think = 0.0 if args.bare_sdk else args.think
    with tempfile.TemporaryDirectory() as folder:
        # No dbs.yaml: the bundled sample only; a throwaway workspace and data dir.
        env = {**os.environ, "NL2SQL_DATA_DIR": f"{folder}/data",
               "NL2SQL_WORKSPACE": f"{folder}/workspace"}
        env.pop("NL2SQL_CONFIG", None)
        one_run(ours_command, env)  # warm the OS file cache (.pyc files); not counted
        if interleave:
            one_run(bare_command, env)
        times, cpus, firsts, seconds, bare_times, bare_cpus = [], [], [], [], [], []
        for run in range(args.runs):
            # Back to back, the order swapped every run: a load change hits both alike.
            if interleave and run % 2:
                elapsed, cpu, _, _ = one_run(bare_command, env)
                bare_times.append(elapsed)
                bare_cpus.append(cpu)
            elapsed, cpu, tool_count, queries = one_run(ours_command, env, think)
            times.append(elapsed)
            cpus.append(cpu)
            if queries:
                firsts.append(queries[0])
                seconds.append(queries[1])
            if interleave and not run % 2:
                elapsed, cpu, _, _ = one_run(bare_command, env)
                bare_times.append(elapsed)
                bare_cpus.append(cpu)
    median = statistics.median(times)
    load = os.getloadavg()
    print(f"{'bare SDK server' if args.bare_sdk else 'nl2sql-mcp'} cold start to tools/list "
          f"({tool_count} tools), {args.runs} runs: median {median:.3f}s, min {min(times):.3f}s, "
          f"max {max(times):.3f}s; server CPU to tools/list median {statistics.median(cpus):.3f}s; load "
          f"average {load[0]:.1f} on {os.cpu_count()} CPUs "
          f"(target <= {TARGET_S:g} s: {'met' if median <= TARGET_S else 'NOT met'})")
    figures: dict[str, float] = {"cold_start_s": median}
    ok = True
    if bare_times:
        ratio, cpu_ratio = _ratio(times, bare_times), _ratio(cpus, bare_cpus)
        ok = ratio <= TARGET_RATIO
        print(f"bare SDK server, interleaved: median {statistics.median(bare_times):.3f}s, min "
              f"{min(bare_times):.3f}s; server CPU to tools/list median {statistics.median(bare_cpus):.3f}s")
        print(f"ratio nl2sql-mcp / bare SDK: wall {ratio:.2f}x, CPU {cpu_ratio:.2f}x "
              f"(target <= {TARGET_RATIO:g}x on wall: {'met' if ok else 'NOT met'})")
        figures.update(cold_start_ratio=ratio, cold_start_cpu_ratio=cpu_ratio,
                       bare_sdk_cold_start_s=statistics.median(bare_times))
    if firsts:
        print(f"first query {think:g}s after tools/list: median "
              f"{statistics.median(firsts) * 1000:.1f} ms (max {max(firsts) * 1000:.1f}); "
              f"second query: median {statistics.median(seconds) * 1000:.1f} ms")
        figures["first_query_ms"] = statistics.median(firsts) * 1000
    if args.json:
        args.json.write_text(json.dumps({**figures, "load_average": load[0]}, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
