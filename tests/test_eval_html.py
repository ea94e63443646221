"""report.html: self-contained, opens in headless Chromium with its charts drawn, and loads
nothing from the network (checked in Chromium's own network log)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import IN_CI
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.evaluation import EvalSettings, Question, evaluate
from nl2sql.evaluation.html import render_html
from nl2sql.operations.ops_context import OpsContext

BAR_COLOURS = {(0x2F, 0x7D, 0x4F), (0xC0, 0x8A, 0x1B), (0xB4, 0x3A, 0x30)}


@pytest.fixture
def report_html(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    questions = [
        Question(id="ok", db_id="bookstore", question="How many books?",
                 golds=["SELECT COUNT(*) FROM books"], category="count"),
        Question(id="bad", db_id="bookstore", question="Mystery <b>titles</b>?",
                 golds=["SELECT title FROM books WHERE genre = 'mystery'"], category="filter"),
        Question(id="broken", db_id="bookstore", question="?", golds=["SELECT x FROM nowhere"]),
    ]
    predictions = {"ok": "SELECT COUNT(*) FROM books", "bad": "SELECT title FROM books",
                   "broken": "SELECT 1"}
    report = evaluate(questions, predictions, OpsContext(DbConnectionConfigs.load()),
                      EvalSettings(context_recall=False))
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    return path


def test_report_html_is_self_contained(report_html: Path) -> None:
    text = report_html.read_text()
    for needle in ("http://", "https://", "<script", "src=", "@import", "url(", "<link"):
        assert needle not in text
    assert "<svg" in text and 'class="bar"' in text
    assert "Mystery &lt;b&gt;titles&lt;/b&gt;?" in text  # escaped, not markup
    assert "Why: rows differ" in text or "Why: row count differs" in text
    assert "Broken gold queries (1)" in text and "SELECT x FROM nowhere" in text


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    reason = "headless Chromium is not installed (Debian: apt-get install chromium)"
    if IN_CI:
        pytest.fail(f"{reason}; .ci/run installs it.")
    pytest.skip(reason)


def _open(page: Path, folder: Path) -> tuple[Path, list[str]]:
    """Screenshot ``page`` in headless Chromium; the URLs the page itself requested."""
    shot, netlog = folder / f"{page.stem}.png", folder / f"{page.stem}.netlog.json"
    command = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--no-first-run", "--disable-extensions", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--disable-default-apps",
               f"--user-data-dir={folder / 'profile'}", "--window-size=1200,900",
               f"--screenshot={shot}", f"--log-net-log={netlog}", page.as_uri()]
    env = {**os.environ, "HOME": str(folder)}
    subprocess.run(command, capture_output=True, timeout=120, check=True, env=env)
    log = json.loads(netlog.read_text())
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    # Chromium's own background requests have no origin; the page's have one ('null': file://)
    requested = [e["params"]["url"] for e in log["events"]
                 if names.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in e["params"]
                 and e["params"].get("initiator") != "not an origin"]
    return shot, requested


def test_report_opens_in_chromium_with_chart_and_no_network(report_html: Path,
                                                            tmp_path: Path) -> None:
    from PIL import Image

    shot, requested = _open(report_html, tmp_path)
    assert requested == []
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 900)
    colours = image.getcolors(maxcolors=1 << 20) or []
    bar_pixels = sum(count for count, colour in colours if colour in BAR_COLOURS)
    assert bar_pixels > 2000, "no chart bars in the screenshot"


def test_network_check_catches_a_page_that_loads_something(tmp_path: Path) -> None:
    page = tmp_path / "remote.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png">'
                    "</body></html>")
    _, requested = _open(page, tmp_path)
    assert requested == ["http://127.0.0.1:9/x.png"]
