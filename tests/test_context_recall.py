"""What the context engine keeps for the model, on real SQLite files annotated without a model:
small value domains, values inside stored lists, tables named in other words, the budget used,
and routing that says when two databases fit a question alike."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

import nl2sql
from nl2sql.agents.instructions import catalog_instructions
from nl2sql.annotation.pipeline import annotate_database
from tests.conftest import sqlite_config

SETS = Path(__file__).resolve().parent / "data" / "context_sets"
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _database(path: Path, script: str) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(script)
    conn.close()
    return path


def _annotated(make_registry, *configs):  # noqa: ANN001, ANN202
    registry = make_registry(*configs)
    for config in configs:
        annotate_database(config, registry.data_dir)
    return registry


def test_small_domains_are_shown_without_a_model(tmp_path: Path, make_registry) -> None:  # noqa: ANN001
    # 12 rows: every month once (all distinct) and weekdays repeating; no model classified them.
    rows = ", ".join(f"({i + 1}, '{MONTHS[i]}', '{DAYS[i % 7]}', 'Shift {i} was covered by the night team')" for i in range(12))
    path = _database(tmp_path / "shifts.db", "CREATE TABLE shifts (id INTEGER PRIMARY KEY, "
                     f"month_name TEXT, weekday TEXT, note TEXT); INSERT INTO shifts VALUES {rows};")
    registry = _annotated(make_registry, sqlite_config("shifts", path))
    ctx = nl2sql.context("Which shifts fall on the 2 days before Saturday?", db_id="shifts",
                         config=registry)
    lines = {line.split()[0]: line for line in ctx.schema_sql.splitlines()
             if line.startswith("    ")}
    assert all(month in lines["month_name"] for month in MONTHS), lines["month_name"]
    assert all(day in lines["weekday"] for day in DAYS), lines["weekday"]
    assert "[" not in lines["note"]  # 12 distinct free texts: longer than a domain is shown


def test_a_phrase_inside_a_stored_list_links_its_column(tmp_path: Path,  # noqa: ANN001
                                                        sqlite_samples, make_registry) -> None:
    path = tmp_path / "chinook.sqlite"
    shutil.copyfile(sqlite_samples["chinook"], path)
    registry = _annotated(make_registry, sqlite_config("chinook", path))
    ctx = nl2sql.context("Which tracks were composed by Angus Young?", db_id="chinook",
                         config=registry)
    hint = next(h for h in ctx.value_hints if h.column == "Composer")
    assert hint.table == "Track" and "Angus Young" in hint.value and hint.value != "Angus Young"
    assert hint.matched == "Angus Young"
    # a common word inside a title is not a link ("songs" in 'Quiet Songs')
    ctx = nl2sql.context("List the songs by AC/DC", db_id="chinook", config=registry)
    assert all("Songs" not in h.value for h in ctx.value_hints), ctx.value_hints
    # nor is one inside an item of a list ("sales" in 'Fábio Nolasco/Gal Sales/Ivan Brasil'):
    # a lone word links a list only as a whole item
    ctx = nl2sql.context("Total sales per employee in 2010", db_id="chinook", config=registry)
    assert all("Sales" not in h.value for h in ctx.value_hints), ctx.value_hints
    ctx = nl2sql.context("Tracks written by Slash", db_id="chinook", config=registry)
    assert any(h.column == "Composer" and "Slash" in h.value and h.matched == "Slash"
               for h in ctx.value_hints), ctx.value_hints


@pytest.mark.parametrize("question, table", [
    ("Which customers own a gold card?", "client"),  # a synonym
    ("How many instalments were paid late for each loan?", "loan_repayment"),
])
def test_a_table_named_in_other_words_is_kept(tmp_path: Path, make_registry,  # noqa: ANN001
                                              question: str, table: str) -> None:
    path = _database(tmp_path / "finance.db", (SETS / "finance.sql").read_text("utf-8"))
    registry = _annotated(make_registry, sqlite_config("finance", path))
    full = nl2sql.context(question, db_id="finance", config=registry).full_schema_tokens
    ctx = nl2sql.context(question, db_id="finance", budget_tokens=int(full * 0.4),
                         config=registry)
    kept = {t.name: t.reason for t in ctx.tables}
    assert table in kept, kept


def test_a_role_names_the_table_it_points_to(tmp_path: Path, make_registry) -> None:  # noqa: ANN001
    path = _database(tmp_path / "cricket.db", (SETS / "cricket.sql").read_text("utf-8"))
    registry = _annotated(make_registry, sqlite_config("cricket", path))
    question = "Name the bowlers who dismissed at least three batsmen."
    full = nl2sql.context(question, db_id="cricket", config=registry).full_schema_tokens
    ctx = nl2sql.context(question, db_id="cricket", budget_tokens=int(full * 0.4),
                         config=registry)
    kept = {t.name: t.reason for t in ctx.tables}
    # ball_by_ball.bowler references player: "bowlers" are players
    assert {"player", "ball_by_ball", "wicket_taken"} <= set(kept), kept
    assert "bowler" in kept["player"]


def test_the_budget_is_used(tmp_path: Path, make_registry) -> None:  # noqa: ANN001
    path = _database(tmp_path / "retail.db", (SETS / "retail.sql").read_text("utf-8"))
    registry = _annotated(make_registry, sqlite_config("retail", path))
    question = "Break down sales revenue by world region."
    full = nl2sql.context(question, db_id="retail", config=registry).full_schema_tokens
    budget = int(full * 0.4)
    ctx = nl2sql.context(question, db_id="retail", budget_tokens=budget, config=registry)
    assert ctx.budget_tokens == budget and ctx.pruned
    assert 0.9 * budget <= ctx.schema_tokens <= budget
    assert f"of the {budget:,}-token budget" in ctx.render()
    assert {"regions", "countries", "stores"} <= {t.name for t in ctx.tables}


def test_routing_says_when_two_databases_fit_alike(tmp_path: Path, make_registry) -> None:  # noqa: ANN001
    configs = [sqlite_config(name, _database(tmp_path / f"{name}.db", (
        SETS / "catalog" / f"{name}.sql").read_text("utf-8")))
        for name in ("st_anne_hospital", "riverside_clinic", "tunecloud")]
    registry = _annotated(make_registry, *configs)
    # every hospital has a Cardiology-like ward and patients: the question fits both
    ctx = nl2sql.context("How many patients were admitted to a ward?", config=registry)
    assert set(ctx.ambiguous_between) == {"st_anne_hospital", "riverside_clinic"}
    assert "about equally well" in ctx.render()
    assert "scored about the same" in catalog_instructions(ctx.candidates, {})
    # a song title only one database holds: no doubt
    title = sqlite3.connect(configs[2].path).execute(
        "SELECT title FROM songs LIMIT 1").fetchone()[0]
    ctx = nl2sql.context(f"How many times was {title} played?", config=registry)
    assert ctx.db_id == "tunecloud" and ctx.ambiguous_between == []
    assert "scored about the same" not in catalog_instructions(ctx.candidates, {})


def test_a_stored_values_keys_are_the_lookups_own() -> None:
    """The keys the index stores for a value are what a question's words are looked up by
    (``normalize_value``, ``compact``, ``stem_key``), however the value is written."""
    from nl2sql.context_engine.values import stem_key, value_keys
    from nl2sql.schema.words import compact, normalize_value

    for value in ["AC/DC", "Angus Young, Malcolm Young", "  São   Paulo ", "foo_bar__baz", "_",
                  "ǅungla", "İstanbul", "Straße", "x\u0301y", "①② ③", "٣٤ ab", "a\u200bb",
                  "Rock & Roll / Pop", "shipped orders", "", "e-books (2024)", "东京 Tower"]:
        assert value_keys(value) == [normalize_value(value), compact(value),
                                     stem_key(value)], value
