"""The context engine on a generated 1,000-table schema: pruning to the budget with the named
table and its join path, incremental index rebuilds (only changed tables are embedded again)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import nl2sql
from nl2sql.schema.cache import load_db_info, save_db_info
from nl2sql.context_engine import embeddings
from nl2sql.context_engine.index import build_index
from nl2sql.annotation.pipeline import annotate_database
from tests.conftest import sqlite_config

AREAS = ["sales", "crm", "hr", "fin", "ops", "mkt", "web", "log"]
THINGS = ["customer", "invoice", "product", "shipment", "employee", "payment", "supplier",
          "warehouse", "campaign", "ticket", "contract", "vehicle", "store", "budget", "lead"]


def wide_database(path: Path, count: int = 1000) -> list[str]:
    names = [f"{AREAS[i % len(AREAS)]}_{THINGS[(i // len(AREAS)) % len(THINGS)]}_{i:04d}"
             for i in range(count)]
    statements = []
    for i, name in enumerate(names):
        parent = names[i - 1] if i else name
        statements.append(
            f"CREATE TABLE {name} (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES "
            f"{parent} (id), code TEXT, title TEXT, amt NUMERIC, status TEXT, cust_ref TEXT);")
        rows = ", ".join(f"({r}, {r}, 'C{i}-{r}', 'Item {i}-{r}', {r * 1.5}, "
                         f"'{['open', 'closed', 'pending'][r % 3]}', 'R{r}')" for r in range(1, 6))
        statements.append(f"INSERT INTO {name} VALUES {rows};")
    statements.append("UPDATE sales_budget_0824 SET title = 'Quarterly Moonshot Plan' "
                      "WHERE id = 2;")
    with sqlite3.connect(path) as conn:
        conn.executescript("\n".join(statements))
    conn.close()
    return names


@pytest.mark.slow
def test_a_thousand_tables_are_pruned_to_the_budget(tmp_path: Path, make_registry,  # noqa: ANN001
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    names = wide_database(tmp_path / "wide.db")
    config = sqlite_config("wide", tmp_path / "wide.db")
    registry = make_registry(config)
    annotate_database(config, registry.data_dir)
    ctx = nl2sql.context("Which sales budget 0824 items have the Quarterly Moonshot Plan title?",
                         db_id="wide", config=registry)
    assert ctx.full_schema_tokens > 50_000 and ctx.schema_tokens <= 6000
    kept = {t.name: t.reason for t in ctx.tables}
    assert "sales_budget_0824" in kept and len(kept) < 100
    assert "Quarterly Moonshot Plan" in kept["sales_budget_0824"]
    hint = ctx.value_hints[0]
    assert (hint.table, hint.column, hint.value) == ("sales_budget_0824", "title",
                                                     "Quarterly Moonshot Plan")
    assert "CREATE TABLE sales_budget_0824" in ctx.schema_sql
    # ask for two distant tables: the join path between them is kept and explained
    ctx = nl2sql.context("Compare crm invoice 0009 with ops invoice 0012", db_id="wide",
                         budget_tokens=3000, config=registry)
    kept = {t.name: t.reason for t in ctx.tables}
    assert {"crm_invoice_0009", "ops_invoice_0012"} <= set(kept)
    assert kept[names[10]].startswith("joins") and kept[names[11]].startswith("joins"), kept

    # an incremental rebuild embeds only the changed table again
    info = load_db_info(registry.data_dir, "wide")
    info.tables[3].description = "Changed by a person."
    save_db_info(info, registry.data_dir)
    embedded: list[str] = []
    real = embeddings.embed
    monkeypatch.setattr(embeddings, "embed", lambda texts: embedded.extend(texts) or real(texts))
    build_index(load_db_info(registry.data_dir, "wide"), registry.data_dir)
    assert len(embedded) == 1
