"""The context engine's harder sets (tests/data/context_sets): well formed, reproducible from
their script, and every gold query runs and returns rows on its database."""

from __future__ import annotations

import json
import random
import sqlite3
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SETS = REPO / "tests" / "data" / "context_sets"
sys.path.insert(0, str(REPO / "scripts"))

import build_context_sets  # noqa: E402


def _questions(name: str) -> list[dict]:
    return [json.loads(line) for line in (SETS / f"{name}.jsonl").read_text("utf-8").splitlines()]


def _database(script: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(script.read_text("utf-8"))
    return conn


def test_the_scripts_are_what_the_builder_makes() -> None:
    for name, build in build_context_sets.DOMAINS.items():
        made = build(random.Random(f"context-sets-{name}"))
        assert made == (SETS / f"{name}.sql").read_text("utf-8"), f"{name}.sql is stale"
    assert build_context_sets.catalog_questions() == _questions("catalog")


@pytest.mark.parametrize("name", ["analytics", "catalog"])
def test_every_gold_query_returns_rows(name: str) -> None:
    rows = _questions(name)
    assert len({r["id"] for r in rows}) == len(rows)
    connections: dict[str, sqlite3.Connection] = {}
    for row in rows:
        db = row["db_id"]
        if db not in connections:
            script = SETS / f"{db}.sql"
            connections[db] = _database(script if script.exists()
                                        else SETS / "catalog" / f"{db}.sql")
        result = connections[db].execute(row["query"]).fetchall()
        assert result and result[0][0] not in (None, 0), row["id"]


def test_the_sets_are_as_big_as_promised() -> None:
    analytics = _questions("analytics")
    assert len(analytics) >= 80
    for name in build_context_sets.DOMAINS:
        tables = _database(SETS / f"{name}.sql").execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
        assert 8 <= tables <= 30
    assert len(list((SETS / "catalog").glob("*.sql"))) >= 50


def test_the_enterprise_schema_has_the_tables_asked_for() -> None:
    conn = sqlite3.connect(":memory:")
    conn.executescript(build_context_sets.enterprise(random.Random("enterprise"), 400))
    names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert len(names) == 400
    assert {"player", "batsman_scored", "basket_lines", "emp", "loan"} <= names
