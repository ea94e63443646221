"""The business glossary on a real Chinook SQLite file: an entry reaches the context (and the
model's prompt, and db_search_schema through an MCP client) for a question that uses its term, a
synonym, a plural or a misspelling, and not for an unrelated question; a per-database entry
replaces a global one; a malformed file is one line with file, line and field."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from agent_scripts import Script, final

import nl2sql
from conftest import build_cache, sqlite_config, write_dbs_yaml
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.context_engine.glossary import MAX_ENTRIES, read_glossary_file
from nl2sql.errors import GlossaryError

NL2SQL_ASK = Path(sys.executable).parent / "nl2sql-ask"
BIG_SPENDERS = ("SELECT c.CustomerId, sum(i.Total) AS spent FROM Customer c JOIN Invoice i "
                "ON i.CustomerId = c.CustomerId GROUP BY c.CustomerId HAVING sum(i.Total) > 40")
GLOSSARY = """\
terms:
  - term: big spender
    synonyms: [whale, top client]
    definition: a customer whose invoices total over 40
    sql: "SELECT CustomerId FROM Invoice GROUP BY CustomerId HAVING sum(Total) > 40"
  - term: EMEA
    definition: customers whose Country is in Europe, the Middle East or Africa
"""


@pytest.fixture
def registry(tmp_path: Path, sqlite_samples: dict[str, Path]) -> DbConnectionConfigs:
    db = tmp_path / "chinook.sqlite"
    shutil.copyfile(sqlite_samples["chinook"], db)
    path = write_dbs_yaml(tmp_path, [sqlite_config("chinook", db)])
    configs = DbConnectionConfigs.load(path, workspace=tmp_path / "ws")
    build_cache(configs.get("chinook"), configs.data_dir)
    glossary = configs.data_dir / "glossary" / "chinook.yaml"
    glossary.parent.mkdir(parents=True, exist_ok=True)
    glossary.write_text(GLOSSARY)
    return configs


def terms_for(question: str, registry: DbConnectionConfigs) -> dict[str, str]:
    ctx = nl2sql.context(question, db_id="chinook", config=registry)
    return {entry.term: entry.matched for entry in ctx.glossary}


@pytest.mark.parametrize(("question", "said"), [
    ("Which customers are big spenders?", "the question says 'big spender'"),
    ("List the whales by country", "'whale' (a synonym of 'big spender')"),
    ("How many top clients are there?", "'top client' (a synonym of 'big spender')"),
])
def test_the_term_or_a_synonym_brings_the_entry(registry: DbConnectionConfigs, question: str,
                                                 said: str) -> None:
    found = terms_for(question, registry)
    assert list(found) == ["big spender"] and said in found["big spender"]
    ctx = nl2sql.context(question, db_id="chinook", config=registry)
    entry = ctx.glossary[0]
    assert entry.definition == "a customer whose invoices total over 40"
    assert entry.sql and "HAVING sum(Total) > 40" in entry.sql
    assert "Business terms the question uses:" in ctx.render()


def test_a_misspelt_term_is_found_too(registry: DbConnectionConfigs) -> None:
    found = terms_for("Who are the big spendrs in Brazil?", registry)
    assert "'big spendrs' is close to 'big spender'" in found["big spender"]


@pytest.mark.parametrize("question", ["How many tracks are in the Rock genre?",
                                      "Which employees report to whom?",
                                      "List all invoices from 2010",
                                      "How many albums does each artist have?"])
def test_an_unrelated_question_gets_no_entry(registry: DbConnectionConfigs,
                                             question: str) -> None:
    assert terms_for(question, registry) == {}


def test_a_question_meaning_the_term_gets_it_by_embedding(registry: DbConnectionConfigs) -> None:
    found = terms_for("customers in Europe", registry)
    assert list(found) == ["EMEA"] and found["EMEA"].startswith("similar in meaning to 'EMEA'")


def test_the_model_is_shown_the_definition(registry: DbConnectionConfigs) -> None:
    script = Script([final(BIG_SPENDERS)])
    answer = nl2sql.ask("Which customers are big spenders?", db_id="chinook",
                        model=script.model, config=registry)
    shown = script.instructions[0] or ""
    terms_part = shown.split("## Business terms the question uses")[1].split("##")[0]
    assert "big spender: a customer whose invoices total over 40" in terms_part
    assert [g.term for g in answer.context.glossary] == ["big spender"]
    script = Script([final("SELECT count(*) FROM Track")])
    nl2sql.ask("How many tracks are there?", db_id="chinook", model=script.model,
               config=registry)
    assert "invoices total over 40" not in (script.instructions[0] or "")


def test_the_database_glossary_wins_over_the_global_one(registry: DbConnectionConfigs) -> None:
    (registry.data_dir / "glossary.yaml").write_text(
        "terms:\n  - term: Big Spender\n    definition: anyone who bought twice\n"
        "  - term: churned\n    synonyms: [lost customers]\n"
        "    definition: a customer with no invoice in the last year\n")
    ctx = nl2sql.context("big spenders and lost customers", db_id="chinook", config=registry)
    assert {e.term: e.definition for e in ctx.glossary} == {
        "big spender": "a customer whose invoices total over 40",
        "churned": "a customer with no invoice in the last year"}


def test_entries_are_bounded(registry: DbConnectionConfigs) -> None:
    many = "terms:\n" + "".join(f"  - term: metric{i}\n    definition: the {i}th metric\n"
                                for i in range(20))
    (registry.data_dir / "glossary" / "chinook.yaml").write_text(many)
    question = " ".join(f"metric{i}" for i in range(20))
    assert len(nl2sql.context(question, db_id="chinook", config=registry).glossary) \
        == MAX_ENTRIES


@pytest.mark.parametrize(("text", "expected"), [
    ("terms:\n  - term: big spender\n    synonyms: [whale]\n  - term: EMEA\n"
     "    definition: Europe\n", ":2: field 'terms[0].definition': missing"),
    ("terms:\n  - term: a\n    definition: b\n  - term: c\n    definition: d\n"
     "    synonyms: whale\n", ":6: field 'terms[1].synonyms': input should be a valid list"),
    ("terms:\n  - term: a\n    definition: b\n    colour: red\n",
     ":4: field 'terms[0].colour': extra inputs are not permitted"),
    ("terms:\n  - term: a\n    definition: [b\n", " line 4: expected ','"),
    ("- just a list\n", ":1: expected a mapping with a 'terms:' list"),
])
def test_a_malformed_file_is_one_line_with_file_line_and_field(tmp_path: Path, text: str,
                                                               expected: str) -> None:
    path = tmp_path / "glossary.yaml"
    path.write_text(text)
    with pytest.raises(GlossaryError) as caught:
        read_glossary_file(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and expected in message and "\n" not in message


def test_the_cli_reports_a_malformed_glossary_in_one_line(registry: DbConnectionConfigs) -> None:
    nl2sql.context("big spenders", db_id="chinook", config=registry)  # the index is built
    path = registry.data_dir / "glossary" / "chinook.yaml"
    path.write_text("terms:\n  - term: big spender\n    definition:\n")
    done = subprocess.run([str(NL2SQL_ASK), "big spenders", "--db", "chinook",
                           "--show-context"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NL2SQL_CONFIG": str(registry.config_path)})
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"error: {path}:3: field 'terms[0].definition'")


async def test_db_search_schema_shows_the_entries(registry: DbConnectionConfigs) -> None:
    from mcp import Client

    from nl2sql.mcp import build_server

    server = build_server(registry.config_path, workspace=registry.workspace)
    async with Client(server) as client:
        result = await client.call_tool("db_search_schema", {
            "question": "Which customers are big spenders?", "db_id": "chinook"})
        text = result.content[0].text
        assert not result.is_error
        assert "Business terms the question uses:" in text
        assert "big spender: a customer whose invoices total over 40" in text
        (registry.data_dir / "glossary.yaml").write_text("terms: [{term: x}]\n")
        broken = await client.call_tool("db_search_schema", {
            "question": "Which customers are big spenders?", "db_id": "chinook"})
        assert broken.is_error and "glossary.yaml:1: field 'terms[0].definition'" in \
            broken.content[0].text
