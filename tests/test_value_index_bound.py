"""The value index holds at most ``MAX_VALUES_PER_DATABASE`` values per database. Over the
bound it dropped whole tables, the last in name order: on a wide schema, "orders shipped to
Zanzibar" found nothing because ``zones`` came after the bound was spent, while ``accounts``
kept its rarest names. Now every column keeps the same number of its most frequent values."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import run_sqlite_script, sqlite_config
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.context_engine import index
from nl2sql.context_engine.engine import ContextEngine

TABLES = ["accounts", "brands", "cities", "products", "zones"]
NAMES = 60  # distinct names per table, the first the most frequent


def _name(table: str, i: int) -> str:
    return f"{table[:-1].title()} {chr(ord('A') + i // 26)}{chr(ord('a') + i % 26)}rel"


def _script() -> str:
    lines = []
    for table in TABLES:
        lines.append(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT, note TEXT);")
        rows = [f"('{_name(table, i)}', 'n')" for i in range(NAMES) for _ in range(NAMES - i)]
        lines.append(f"INSERT INTO {table} (name, note) VALUES {', '.join(rows)};")
    return "\n".join(lines)


def test_over_the_bound_every_table_keeps_its_most_frequent_values(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        make_registry: Callable[..., DbConnectionConfigs]) -> None:
    path = tmp_path / "wide.db"
    run_sqlite_script(path, _script())
    registry = make_registry(sqlite_config("wide", path))
    monkeypatch.setattr(index, "MAX_VALUES_PER_DATABASE", 2 * NAMES)  # 5 x 60 names over it
    annotate_database(registry.get("wide"), registry.data_dir)

    stored = json.loads(index.index_path(registry.data_dir, "wide").read_text())
    kept = {t["name"]: t["values"].get("name", []) for t in stored["tables"]}
    assert sum(len(v) for t in stored["tables"] for v in t["values"].values()) <= 2 * NAMES
    for table in TABLES:  # every table, the last in name order too, keeps its first names
        assert kept[table][:3] == [_name(table, i) for i in range(3)], (table, kept[table][:3])
        assert _name(table, NAMES - 1) not in kept[table]  # the rarest are left out

    engine = ContextEngine(registry)
    hints = engine.context(f"orders shipped to {_name('zones', 0)}", db_id="wide").value_hints
    assert [(h.table, h.column, h.value) for h in hints][:1] == [
        ("zones", "name", _name("zones", 0))]
