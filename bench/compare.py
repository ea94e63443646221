"""Compare a fresh run of the benchmarks with the last release's figures (bench/baseline.json).

Runs the benchmarks that make the figures of ``bench/baseline.json`` (each script with
``--json FILE``; see ``SOURCES``), or reads figures already made (``--fresh FILE...``), and
prints one line per figure: the baseline, the fresh value, the change and OK or REGRESSED.
Every figure is "lower is better" (seconds, milliseconds, ratios to a native tool). Exits 1
when any figure is more than ``--tolerance`` (default 25%) above its baseline, 2 when a
benchmark could not run or a figure is missing.

Absolute times move with the machine's load (printed with the results) and from one machine to
another; the ratios measured back to back (``cold_start_ratio``, ``annotate_process_ratio``,
``point_query_stdio_ratio``: ours over a bare SDK server's tool call) do far less.

    .venv/bin/python bench/compare.py [--only point_query_stdio_p50_ms ...] [--quick]
    .venv/bin/python bench/compare.py --fresh figures.json [more.json ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "baseline.json"
TOLERANCE = 0.25

#: The script that makes each figure, with its arguments (``--quick``: fewer runs).
SOURCES: dict[str, tuple[str, list[str], list[str]]] = {
    # figure prefix: (script, arguments, quick arguments)
    "cold_start": ("mcp_cold_start.py", ["--runs", "10"], ["--runs", "4"]),
    "first_query": ("mcp_cold_start.py", ["--runs", "10"], ["--runs", "4"]),
    "point_query_stdio": ("point_query.py", ["--stdio", "--runs", "3", "--bare-sdk"],
                          ["--stdio", "--runs", "1", "--bare-sdk"]),
    "point_query_p": ("point_query.py", [], ["--calls", "100"]),
    "annotate_process": ("annotate_wide.py", ["--tables", "1000", "--repeat", "5", "--process"],
                         ["--tables", "1000", "--repeat", "2", "--process"]),
}


def source_of(figure: str) -> tuple[str, list[str], list[str]]:
    for prefix, source in SOURCES.items():
        if figure.startswith(prefix):
            return source
    raise KeyError(figure)


def run_benchmarks(figures: list[str], quick: bool) -> dict[str, float]:
    """Run each script needed for ``figures`` once; their figures merged."""
    runs: dict[tuple[str, ...], None] = {}
    for figure in figures:
        script, arguments, quick_arguments = source_of(figure)
        runs[(script, *(quick_arguments if quick else arguments))] = None
    fresh: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="nl2sql-compare-") as folder:
        for i, (script, *arguments) in enumerate(runs):
            out = Path(folder) / f"{i}.json"
            command = [sys.executable, str(HERE / script), *arguments, "--json", str(out)]
            print(f"running {script} {' '.join(arguments)}", file=sys.stderr, flush=True)
            # The script's own exit code says whether it met its target; here only its figures
            # count (a crash leaves no file, reported below as a missing figure).
            subprocess.run(command, stdout=sys.stderr, check=False)
            if out.exists():
                fresh.update(json.loads(out.read_text()))
    return fresh


def compare(baseline: dict[str, dict[str, object]], fresh: dict[str, float],
            tolerance: float) -> tuple[list[str], int]:
    """One line per figure and the exit code (0 all within, 1 a regression, 2 missing)."""
    lines, code = [], 0
    for name, entry in baseline.items():
        base = float(entry["value"])  # type: ignore[arg-type]
        unit = str(entry.get("unit", ""))
        if name not in fresh:
            lines.append(f"MISSING    {name}: baseline {base:g} {unit}, no fresh figure")
            code = max(code, 2)
            continue
        now = fresh[name]
        change = now / base - 1 if base else 0.0
        regressed = change > tolerance
        if regressed:
            code = max(code, 1)
        lines.append(f"{'REGRESSED' if regressed else 'OK':<10} {name}: baseline {base:g} {unit}, "
                     f"now {now:.3g} {unit} ({change:+.0%}; limit +{tolerance:.0%})")
    return lines, code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, default=BASELINE)
    parser.add_argument("--fresh", type=Path, nargs="+",
                        help="JSON files of figures already measured (the scripts' --json)")
    parser.add_argument("--only", nargs="+", help="these figures only")
    parser.add_argument("--quick", action="store_true", help="fewer runs per benchmark")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                        help="largest rise allowed, as a fraction (default 0.25)")
    args = parser.parse_args(argv)
    try:
        document = json.loads(args.baseline.read_text())
    except (OSError, ValueError) as exc:
        print(f"compare: cannot read {args.baseline}: {exc}", file=sys.stderr)
        return 2
    baseline: dict[str, dict[str, object]] = document["figures"]
    if args.only:
        unknown = sorted(set(args.only) - set(baseline))
        if unknown:
            print(f"compare: no baseline for {', '.join(unknown)}; known: "
                  f"{', '.join(baseline)}", file=sys.stderr)
            return 2
        baseline = {name: baseline[name] for name in args.only}
    if args.fresh:
        fresh: dict[str, float] = {}
        for path in args.fresh:
            fresh.update(json.loads(path.read_text()))
    else:
        fresh = run_benchmarks(list(baseline), args.quick)
    load = fresh.get("load_average")
    lines, code = compare(baseline, fresh, args.tolerance)
    print(f"against {document.get('release', 'the baseline')} "
          f"({document.get('measured', '')}); load average now "
          f"{os.getloadavg()[0]:.1f}" + (f", during the last benchmark {load:.1f}" if load else ""))
    print("\n".join(lines))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
