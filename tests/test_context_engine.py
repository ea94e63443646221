"""The context engine on real databases: value hints, pruning with join paths and reasons,
routing, index life cycle (built by annotation, rebuilt when missing or stale), bounded value
collection on a big table, and the embedding model loading with the network blocked."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import nl2sql
from nl2sql.schema.cache import load_db_info
from nl2sql.context_engine.engine import ContextEngine
from nl2sql.context_engine.index import embeddings_path, index_path
from nl2sql.db.base import create_connection
from nl2sql.schema.formatting import format_schema
from nl2sql.inspection import DbSchemaExtractor
from nl2sql.annotation.pipeline import AnnotateOptions, annotate_database, run_offline_steps
from tests.conftest import spark_config, sqlite_config
from tests.test_enums import captured_statements


def annotated(*samples, make_registry):  # noqa: ANN001, ANN202
    registry = make_registry(*[s.config for s in samples])
    for sample in samples:
        annotate_database(sample.config, registry.data_dir)
    return registry


def column(sample, logical: str) -> str:  # noqa: ANN001
    """Column names differ per backend (Chinook: ``Name`` on SQLite, ``name`` on Postgres)."""
    return logical if sample.backend == "sqlite" else logical.lower()


@pytest.mark.parametrize("question", ["songs by AC/DC", "songs by Acdc", "Songs by ACDC?"])
def test_a_named_value_finds_its_column(chinook, make_registry, question: str) -> None:  # noqa: ANN001
    registry = annotated(chinook, make_registry=make_registry)
    ctx = ContextEngine(registry).context(question, db_id="chinook")
    hint = ctx.value_hints[0]
    assert (hint.table, hint.column, hint.value) == (chinook.table("artist"),
                                                     column(chinook, "Name"), "AC/DC")
    assert hint.matched.casefold().replace("/", "") == "acdc"


def test_pruning_keeps_the_join_path_and_drops_unrelated_tables(chinook,  # noqa: ANN001
                                                                make_registry) -> None:
    registry = annotated(chinook, make_registry=make_registry)
    ctx = nl2sql.context("List the songs by AC/DC", db_id="chinook", budget_tokens=700,
                         config=registry)
    kept = {t.name: t.reason for t in ctx.tables}
    track, album, artist = (chinook.table(n) for n in ("track", "album", "artist"))
    assert {track, album, artist} <= set(kept)
    assert "AC/DC" in kept[artist]
    # The budget is used (a table left out cannot be joined through), but never for tables
    # that have nothing to do with the question.
    for unrelated in ("employee", "customer", "invoice"):
        assert chinook.table(unrelated) not in kept
    assert all(reason for reason in kept.values())
    assert 0.9 * 700 <= ctx.schema_tokens <= 700 < ctx.full_schema_tokens
    assert ctx.budget_tokens == 700
    assert f"CREATE TABLE {track}" in ctx.schema_sql.replace('"', "")
    assert "CREATE TABLE" in ctx.schema_sql and "Employee" not in ctx.schema_sql


def test_join_path_reason_names_both_ends(northwind, make_registry) -> None:  # noqa: ANN001
    registry = annotated(northwind, make_registry=make_registry)
    ctx = nl2sql.context("Which customers ordered products of the category Seafood?",
                         db_id="northwind", budget_tokens=1500, config=registry)
    kept = {t.name: t.reason for t in ctx.tables}
    orders, details = northwind.table("orders"), northwind.table("order_details")
    assert {orders, details} <= set(kept)
    assert any(r.startswith("joins ") for r in kept.values()), kept
    assert any(h.value == "Seafood" for h in ctx.value_hints)


def test_under_the_budget_nothing_is_pruned(chinook, make_registry) -> None:  # noqa: ANN001
    registry = annotated(chinook, make_registry=make_registry)
    info = load_db_info(registry.data_dir, "chinook")
    full = format_schema(info)
    ctx = nl2sql.context("songs by AC/DC", db_id="chinook", budget_tokens=10**6,
                         config=registry)
    assert ctx.schema_sql == full
    assert ctx.schema_tokens == ctx.full_schema_tokens
    assert [t.name for t in ctx.tables] == [t.name for t in info.tables]
    at_size = nl2sql.context("songs by AC/DC", db_id="chinook",
                             budget_tokens=ctx.full_schema_tokens, config=registry)
    assert at_size.schema_sql == full


@pytest.mark.parametrize("chinook, northwind", [("sqlite", "sqlite"), ("postgres", "postgres")],
                         indirect=True)
def test_routing_picks_the_database_with_reasons(chinook, northwind,  # noqa: ANN001
                                                 make_registry) -> None:
    registry = make_registry(chinook.config, northwind.config)
    for sample in (chinook, northwind):
        annotate_database(sample.config, registry.data_dir)
    annotate_database(registry.get("bookstore"), registry.data_dir)
    engine = ContextEngine(registry)
    cases = {"List the songs by AC/DC": "chinook",
             "Which suppliers ship seafood products?": "northwind",
             "How many books did each author write?": "bookstore"}
    for question, expected in cases.items():
        ctx = engine.context(question)
        assert ctx.db_id == expected, (question, ctx.candidates)
        assert [c.db_id for c in ctx.candidates][0] == expected
        assert {c.db_id for c in ctx.candidates} == {"chinook", "northwind", "bookstore"}
        assert ctx.candidates[0].reason and ctx.candidates[0].score > ctx.candidates[1].score


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)  # backend-neutral
def test_missing_stale_or_broken_index_is_rebuilt(chinook, make_registry) -> None:  # noqa: ANN001
    registry = annotated(chinook, make_registry=make_registry)
    path = index_path(registry.data_dir, "chinook")
    assert path.is_file() and embeddings_path(registry.data_dir, "chinook").is_file()
    assert '"AC/DC"' in path.read_text()  # annotation stored the collected values
    path.unlink()
    assert ContextEngine(registry).context("songs by AC/DC").value_hints
    assert path.is_file()
    path.write_text("{not json")
    assert ContextEngine(registry).context("songs by AC/DC").tables
    embeddings_path(registry.data_dir, "chinook").write_bytes(b"garbage")
    assert ContextEngine(registry).context("songs by AC/DC").tables
    # a cache rewritten after the index (a re-annotation elsewhere): stale, rebuilt
    info = load_db_info(registry.data_dir, "chinook")
    info.table("Genre").description = "Music genres such as Rock and Jazz."
    from nl2sql.schema.cache import save_db_info

    save_db_info(info, registry.data_dir)
    ctx = ContextEngine(registry).context("kinds of music", db_id="chinook", budget_tokens=300)
    assert "Genre" in [t.name for t in ctx.tables]


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)  # backend-neutral
def test_embeddings_made_ahead_by_a_child_give_the_same_index(chinook, tmp_path: Path,  # noqa: ANN001
                                                               monkeypatch) -> None:  # noqa: ANN001
    """Without a model a child process embeds the tables while the rows are read
    (embeddings_ahead.py): the index is the one built in-process, byte for byte, whether the
    child answered or failed, and no child outlives the annotation."""
    from nl2sql.context_engine import embeddings_ahead

    started: list[embeddings_ahead.EmbeddingsAhead] = []
    answered: list[int] = []
    original_init, original_vectors = (embeddings_ahead.EmbeddingsAhead.__init__,
                                       embeddings_ahead.EmbeddingsAhead.vectors)

    def init(self) -> None:  # noqa: ANN001
        original_init(self)
        started.append(self)

    def vectors(self):  # noqa: ANN001, ANN202
        found = original_vectors(self)
        answered.append(len(found.texts) if found is not None else 0)
        return found

    monkeypatch.setattr(embeddings_ahead.EmbeddingsAhead, "__init__", init)
    monkeypatch.setattr(embeddings_ahead.EmbeddingsAhead, "vectors", vectors)
    monkeypatch.setattr(embeddings_ahead, "_usable_cpus", lambda: 2)  # whatever runs the test
    monkeypatch.setattr(embeddings_ahead.embeddings, "loaded", lambda: False)  # and before it

    def files(data_dir: Path) -> tuple[bytes, str]:
        text = index_path(data_dir, "chinook").read_text()
        return embeddings_path(data_dir, "chinook").read_bytes(), text[text.index('"description"'):]

    annotate_database(chinook.config, tmp_path / "ahead")
    info = load_db_info(tmp_path / "ahead", "chinook")
    assert answered == [len(info.tables)], answered  # every table's vector came from the child
    for child in ("import sys; sys.exit(3)",  # a child that fails, one that says nonsense
                  "import sys; sys.stdin.read(); sys.stdout.write('\\x93NUMPY oops')"):
        monkeypatch.setattr(embeddings_ahead, "_CHILD", child)
        annotate_database(chinook.config, tmp_path / "failed")
        assert answered[-1] == 0
        assert files(tmp_path / "failed") == files(tmp_path / "ahead")
        shutil.rmtree(tmp_path / "failed")
    from nl2sql.context_engine.index import build_index

    (tmp_path / "alone").mkdir()
    shutil.copytree(tmp_path / "ahead" / "database", tmp_path / "alone" / "database")
    index_path(tmp_path / "alone", "chinook").unlink()
    embeddings_path(tmp_path / "alone", "chinook").unlink()
    build_index(info, tmp_path / "alone")  # no values collected: compare the vectors only
    assert files(tmp_path / "alone")[0] == files(tmp_path / "ahead")[0]
    assert len(started) == 3 and all(a._process.poll() is not None for a in started)
    monkeypatch.setattr(embeddings_ahead, "_usable_cpus", lambda: 1)  # no second CPU: no child
    annotate_database(chinook.config, tmp_path / "one_cpu")
    assert started[-1]._process is None and answered[-1] == 0
    assert files(tmp_path / "one_cpu") == files(tmp_path / "ahead")
    monkeypatch.setattr(embeddings_ahead, "_usable_cpus", lambda: 2)
    monkeypatch.setattr(embeddings_ahead.embeddings, "loaded", lambda: True)  # a server's
    annotate_database(chinook.config, tmp_path / "loaded")  # the model here already: no child
    assert started[-1]._process is None and answered[-1] == 0
    assert files(tmp_path / "loaded") == files(tmp_path / "ahead")
    annotate_database(chinook.config, tmp_path / "model", options=AnnotateOptions(model="test"))
    assert len(started) == 5  # a model may rewrite the descriptions first: no child


@pytest.mark.slow
def test_value_collection_never_scans_a_big_table(tmp_path: Path) -> None:
    path = tmp_path / "big.db"
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            CREATE TABLE events (id INTEGER PRIMARY KEY, city TEXT, label TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000)
            INSERT INTO events SELECT i, 'city ' || (i % 500), 'label ' || i FROM n;
        """)
    conn.close()
    connection = create_connection(sqlite_config("big", path))
    try:
        table = DbSchemaExtractor(connection).extract().table("events")
        assert table.row_count == 3_000_000
        with captured_statements(connection) as statements:
            values = run_offline_steps(connection, table, AnnotateOptions())
    finally:
        connection.dispose()
    reads = [s for s in statements if "events" in s]
    assert reads and not any("count(distinct" in s.lower() for s in reads)
    for statement in reads:  # every read of the table is bounded: windows, a limit or max()
        assert ("rowid >=" in statement or "LIMIT" in statement
                or "max(rowid)" in statement.lower()), statement
    grouped = [s for s in reads if "GROUP BY" in s]
    assert len(grouped) == 1 and grouped[0].count("rowid >=") >= 2
    assert "city 7" in values["city"] and len(values["label"]) <= 1000


def test_embedding_model_loads_with_the_network_blocked() -> None:
    code = """
import socket
def refuse(*args, **kwargs):
    raise AssertionError("network touched")
socket.socket.connect = refuse
socket.create_connection = refuse
from nl2sql.context_engine.embeddings import embed
vectors = embed(["songs by AC/DC", "music tracks of an artist", "invoice totals"])
assert vectors.shape == (3, 256)
assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
assert "wordllama" not in sys.modules  # its files are read, its loader is not imported
"""
    subprocess.run([sys.executable, "-c", "import sys\n" + code], check=True, timeout=120)


def test_embeddings_are_wordllamas_own_bit_for_bit() -> None:
    """The mean token vectors equal ``WordLlama.load(...).embed(norm=False)``'s exactly: several
    batches (padding to each batch's longest text), empty and one-letter texts, accents and
    symbols, a text longer than any other, words the vocabulary splits."""
    import numpy as np
    import wordllama

    from nl2sql._helpers import quiet_imports
    from nl2sql.context_engine.embeddings import DIMENSIONS, raw_embed

    texts = ["", "a", "songs by AC/DC", "Ünïcödé café — naïve façade", "x " * 700,
             "invoice_line unit_price quantity", "ÆØÅ 東京 ✓", "  spaced\tout\nwords  "]
    texts += [f"table t{i:04d} code title amount quantity notes customer_{i}" for i in range(150)]
    with quiet_imports("wordllama"):
        reference = wordllama.WordLlama.load(
            dim=DIMENSIONS, cache_dir=Path(wordllama.__file__).parent, disable_download=True,
        ).embed(texts, norm=False)
    ours = raw_embed(texts)
    assert ours.dtype == reference.dtype == np.float32 and ours.shape == reference.shape
    assert np.array_equal(ours.view(np.uint32), reference.view(np.uint32))


@pytest.mark.parametrize("chinook", ["sqlite"], indirect=True)  # backend-neutral
def test_examples_come_from_verified_answers_and_the_cache(chinook,  # noqa: ANN001
                                                          make_registry) -> None:
    """Saved queries that merely ran are not examples (they may be wrong); once a person
    accepts one, it is the first example for a similar question."""
    from nl2sql.schema.cache import save_db_info
    from nl2sql.schema.models import ExampleQuery
    from nl2sql.operations import OpsContext, db_execute_sql_op
    from nl2sql.operations.verified_answers import accept_answer

    registry = annotated(chinook, make_registry=make_registry)
    ops = OpsContext(registry)
    genres = db_execute_sql_op(ops, "chinook", "SELECT Name FROM Genre ORDER BY Name",
                               nl_query="Which music genres are there?")
    staff = db_execute_sql_op(ops, "chinook", "SELECT count(*) FROM Employee",
                              nl_query="How many employees do we have?")
    info = load_db_info(registry.data_dir, "chinook")
    info.example_queries = [ExampleQuery(question="How many tracks does each genre have?",
                                         sql="SELECT GenreId, count(*) FROM Track GROUP BY 1")]
    save_db_info(info, registry.data_dir)
    ctx = ContextEngine(registry).context("List all music genres", db_id="chinook")
    questions = [e.question for e in ctx.examples]
    assert "Which music genres are there?" not in questions  # it only ran
    assert "How many tracks does each genre have?" in questions
    accept_answer(ops, genres.id)
    accept_answer(ops, staff.id)
    ops.close()
    ctx = ContextEngine(registry).context("List all music genres", db_id="chinook")
    questions = [e.question for e in ctx.examples]
    assert questions[0] == "Which music genres are there?"  # verified, best match: first
    assert "How many employees do we have?" not in questions  # unrelated: not shown
    assert len(ctx.examples) <= 3


@pytest.mark.spark
@pytest.mark.slow
def test_a_value_hint_is_a_string_of_the_dialect(spark_server, spark_chinook,  # noqa: ANN001
                                                 make_registry) -> None:  # noqa: ANN001
    """Spark SQL escapes a quote with a backslash and reads ``'Guns N'' Roses'`` as two strings
    run together ('Guns N Roses': no row); the hint was written so, beside the dialect notes
    saying ``'it\\'s'``."""
    config = spark_config("chinook", spark_server.remote, spark_chinook,
                          query_timeout_seconds=60)
    registry = annotated(SimpleNamespace(config=config), make_registry=make_registry)
    hints = ContextEngine(registry).context("Albums by Guns N' Roses").value_hints
    hint = next(h for h in hints if h.value == "Guns N' Roses")
    assert hint.render().startswith(f"{hint.table}.{hint.column} = 'Guns N\\' Roses'")
    session = spark_server.session()
    try:
        found = session.sql(f"SELECT count(*) FROM {spark_chinook}.{hint.table} "
                            f"WHERE {hint.column} = {hint.literal}").collect()[0][0]
    finally:
        session.stop()
    assert found == 1
