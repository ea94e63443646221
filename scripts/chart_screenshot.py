"""Screenshot of nl2sql charts (SVG) in headless Chromium, for docs/charts.md.

Two Chinook results (tracks per genre, revenue per year and country) are charted as SVG by
``nl2sql.charts``, put inline in one HTML page (nothing else on it: no script, no URL), and
that page is opened in headless Chromium, which writes the screenshot:

    python scripts/chart_screenshot.py                       # -> docs/charts-screenshot.png
    python scripts/chart_screenshot.py --out /tmp/shot.png --chromium /usr/bin/chromium

``tests/test_charts_faces.py`` runs it too and checks the bars are in the picture.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nl2sql.charts import chart_csv  # noqa: E402 - after the path of this checkout

CHINOOK = ROOT / "tests" / "data" / "samples" / "chinook" / "chinook.sqlite"
QUERIES = {
    "genres": ("How many tracks are there per genre?",
               "SELECT g.Name AS genre, count(*) AS tracks FROM Track t JOIN Genre g "
               "ON g.GenreId = t.GenreId GROUP BY g.Name ORDER BY tracks DESC"),
    "revenue": ("Revenue per year in the biggest markets",
                "SELECT strftime('%Y', InvoiceDate) AS year, BillingCountry AS country, "
                "sum(Total) AS revenue FROM Invoice GROUP BY 1, 2"),
}
WIDTH, HEIGHT = 800, 450


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


def chart_page(folder: Path) -> Path:
    """An HTML page with the charts' SVG inline, written in ``folder``."""
    parts = []
    with sqlite3.connect(f"file:{CHINOOK}?mode=ro", uri=True) as db:
        for name, (question, sql) in QUERIES.items():
            cursor = db.execute(sql)
            path = folder / f"{name}.csv"
            with path.open("w", newline="", encoding="utf-8") as handle:
                writer = csv.writer(handle)
                writer.writerow([d[0] for d in cursor.description])
                writer.writerows(cursor)
            svg = chart_csv(path, title=question, width=WIDTH, height=HEIGHT).svg()
            parts.append(svg[svg.index("<svg"):])  # without the XML prolog and doctype
    page = folder / "charts.html"
    page.write_text("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body{margin:0;"
                    "background:#fff}svg{display:block}</style></head><body>"
                    + "".join(parts) + "</body></html>", encoding="utf-8")
    return page


def screenshot(out: Path, browser: str) -> Path:
    """Open the page in headless Chromium and write its screenshot to ``out``."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        page = chart_page(folder)
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                   "--no-first-run", "--disable-extensions", "--disable-background-networking",
                   "--disable-component-update", "--disable-sync", "--disable-default-apps",
                   f"--user-data-dir={folder / 'profile'}",
                   f"--window-size={WIDTH},{HEIGHT * len(QUERIES)}",
                   f"--screenshot={out.resolve()}", page.as_uri()]
        subprocess.run(command, capture_output=True, timeout=120, check=True,
                       env={**os.environ, "HOME": str(folder)})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "charts-screenshot.png")
    parser.add_argument("--chromium", default=chromium(), help="the browser to run")
    args = parser.parse_args(argv)
    if not args.chromium:
        parser.error("headless Chromium is not installed (Debian: apt-get install chromium)")
    print(screenshot(args.out, args.chromium))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
