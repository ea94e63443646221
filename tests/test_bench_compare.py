"""bench/compare.py: the committed baseline, a line per figure, and the exit code that fails
loudly on a regression of more than 25% (fresh figures given as files: no benchmark runs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "compare.py"
BASELINE = json.loads((ROOT / "bench" / "baseline.json").read_text())["figures"]


def _compare(tmp_path: Path, fresh: dict[str, float], *options: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "fresh.json"
    path.write_text(json.dumps(fresh))
    return subprocess.run([sys.executable, str(SCRIPT), "--fresh", str(path), *options],
                          capture_output=True, text=True, timeout=60)


def test_every_baseline_figure_has_a_benchmark_that_makes_it() -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from compare import source_of
    finally:
        sys.path.remove(str(SCRIPT.parent))
    for name, entry in BASELINE.items():
        script = source_of(name)[0]
        assert (SCRIPT.parent / script).exists(), name
        assert name in (SCRIPT.parent / script).read_text(), (name, script)
        assert entry["value"] > 0 and entry["source"], name


def test_within_the_tolerance_passes_with_a_line_per_figure(tmp_path: Path) -> None:
    fresh = {name: entry["value"] * 1.2 for name, entry in BASELINE.items()}
    done = _compare(tmp_path, fresh)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()[1:]
    assert len(lines) == len(BASELINE)
    assert all(line.startswith("OK ") for line in lines), lines


def test_a_regression_over_25_percent_fails_and_names_the_figure(tmp_path: Path) -> None:
    fresh = {name: entry["value"] for name, entry in BASELINE.items()}
    fresh["point_query_stdio_p50_ms"] *= 1.3
    done = _compare(tmp_path, fresh)
    assert done.returncode == 1
    regressed = [line for line in done.stdout.splitlines() if line.startswith("REGRESSED")]
    assert len(regressed) == 1 and "point_query_stdio_p50_ms" in regressed[0], done.stdout
    assert "+30%" in regressed[0]


def test_a_missing_figure_fails(tmp_path: Path) -> None:
    done = _compare(tmp_path, {"cold_start_ratio": 1.0})
    assert done.returncode == 2
    assert "MISSING" in done.stdout
    only = _compare(tmp_path, {"cold_start_ratio": 1.0}, "--only", "cold_start_ratio")
    assert only.returncode == 0, only.stdout
