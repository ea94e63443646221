"""Columns holding secrets (passwords, tokens, keys, card numbers): annotation reads none of
their values, so none reaches the model's prompts, the cache, the context index or the schema
the agents are shown; the column stays in the schema and queries still read it. On SQLite (a
table at a time) and PostgreSQL (many tables per statement), with dbs.yaml's
``secret_columns`` adding and removing columns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_annotation_support import ScriptedAnnotator

from conftest import pg_config, run_sqlite_script, sqlite_config, write_dbs_yaml
from nl2sql.annotation import AnnotatorOptions
from nl2sql.annotation.annotator import LlmAnnotationSteps
from nl2sql.annotation.pipeline import AnnotateOptions, annotate_database
from nl2sql.schema.secret_columns import is_secret_name
from nl2sql.cli.annotate import main
from nl2sql.config.registry import DbConnectionConfig, DbConnectionConfigs
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.operations.search import db_search_schema_op
from nl2sql.schema.formatting import format_schema

HASH = "8cb2237d0679ca88db6464eac60da96345513964"
API_KEY = "sk_live_Zq81Xw"
CARD = "4111 1111 1111 1111"
SCRIPT = f"""
CREATE TABLE staff (staff_id integer PRIMARY KEY, name text NOT NULL, password text,
    "apiKey" varchar(40), token_count integer, password_changed_at date, role text);
CREATE TABLE payment_card (card_id integer PRIMARY KEY, staff_id integer REFERENCES staff,
    card_number text, status text);
INSERT INTO staff VALUES
{",".join(f"({i}, 'Name{i}', '{HASH if i % 2 else 'e5e9fa1ba31ecd1ae84f75caaa474f3a663f05f4'}',"
          f" '{API_KEY}', {i * 10}, '2024-01-{1 + i % 28:02d}', '{('admin', 'clerk')[i % 2]}')"
          for i in range(1, 41))};
INSERT INTO payment_card VALUES
{",".join(f"({i}, {i}, '{CARD}', '{('active', 'expired')[i % 2]}')" for i in range(1, 41))};
"""
SECRETS = (HASH, API_KEY, CARD)


def test_the_built_in_rule_reads_name_words_and_the_type() -> None:
    secret = [("password", "TEXT"), ("password_hash", "VARCHAR(64)"), ("passwordHash", "text"),
              ("hashed_password", "text"), ("APIKey", "text"), ("api_key", "text"),
              ("access_token", "text"), ("client_secret", "BYTEA"), ("pwd", "text"),
              ("customer_ssn", "CHAR(11)"), ("credit_card_number", "varchar"),
              ("cardNo", "text"), ("salt", "BLOB"), ("otp", None),
              # AdventureWorks' person.password, names run together
              ("passwordhash", "VARCHAR(128)"), ("passwordsalt", "VARCHAR(10)"),
              ("hashedpassword", "text"), ("userpwd", "text"), ("secretkey", "text")]
    not_secret = [("token_count", "INTEGER"), ("password_changed_at", "TIMESTAMP"),
                  ("password_expired", "BOOLEAN"), ("primary_key", "text"),
                  ("sort_key", "text"), ("passenger", "text"), ("secretary", "text"),
                  ("username", "text"), ("picture", "BYTEA"), ("card_type", "text"),
                  ("secretariat", "text"), ("basalt_layer", "text"), ("passage", "text")]
    assert [n for n, t in secret if not is_secret_name(n, t)] == []
    assert [n for n, t in not_secret if is_secret_name(n, t)] == []


@pytest.fixture(params=["sqlite", "postgres"])
def staff_db(request: pytest.FixtureRequest, tmp_path: Path
             ) -> Callable[..., DbConnectionConfig]:
    """The staff database on each backend, as a config with the given dbs.yaml extras."""
    if request.param == "sqlite":
        path = tmp_path / "staff.db"
        run_sqlite_script(path, SCRIPT)
        return lambda **extra: sqlite_config("staff", path, **extra)
    dbname = request.getfixturevalue("pg_database")(script=SCRIPT)
    return lambda **extra: pg_config("staff", dbname, **extra)


@pytest.fixture
def annotated(staff_db: Callable[..., DbConnectionConfig],
              make_registry: Callable[..., DbConnectionConfigs]
              ) -> Iterator[Callable[..., tuple[OpsContext, ScriptedAnnotator]]]:
    """Factory: the staff database annotated by a scripted model through a dbs.yaml with the
    given extras, and an ``OpsContext`` over it."""
    opened: list[OpsContext] = []

    def make(**extra: object) -> tuple[OpsContext, ScriptedAnnotator]:
        registry = make_registry(staff_db(**extra))
        model = ScriptedAnnotator()
        annotate_database(registry.get("staff"), registry.data_dir,
                          llm_steps=LlmAnnotationSteps(AnnotatorOptions(), model=model.model),
                          options=AnnotateOptions(model="scripted"))
        opened.append(OpsContext(registry))
        return opened[-1], model

    yield make
    for ops in opened:
        ops.close()


def _files_holding(folder: Path, values: tuple[str, ...]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits = [v for v in values if v.encode() in data]
            if hits:
                found[path.name] = hits
    return found


def test_no_value_of_a_secret_column_reaches_the_model_or_the_cache(
        annotated: Callable[..., tuple[OpsContext, ScriptedAnnotator]]) -> None:
    ops, model = annotated()
    assert model.prompts and not [p for p in model.prompts if any(s in p for s in SECRETS)]
    assert _files_holding(ops.data_dir, SECRETS) == {}
    info = ops.db_info("staff")
    schema = format_schema(info)
    marked = {f"{t.name}.{c.name}" for t in info.tables for c in t.columns if c.secret}
    assert marked == {"staff.password", "staff.apiKey", "payment_card.card_number"}
    assert schema.count("(a secret: its values are withheld)") == 3
    assert "<withheld>" in info.table("staff").sample_data_csv
    assert not any(s in schema for s in SECRETS)
    # The other columns keep what annotation finds: values, samples, numbers.
    assert info.table("staff").column("role").enum_values == ["admin", "clerk"]
    assert "Name1" in schema and "2024-01-02" in schema
    search = db_search_schema_op(ops, f"who has the password {HASH} or key {API_KEY}?",
                                 db_id="staff")
    assert search.context.value_hints == []
    assert not any(s in search.context.schema_sql for s in SECRETS)
    # Queries still read the column: the database's grants decide who may.
    result = db_execute_sql_op(ops, "staff", "SELECT count(*) AS n FROM staff "
                               f"WHERE password = '{HASH}'")
    assert (ops.workspace_root / result.csv_filename).read_text().split() == ["n", "20"]


def test_secret_columns_in_dbs_yaml_add_and_remove_columns(
        annotated: Callable[..., tuple[OpsContext, ScriptedAnnotator]]) -> None:
    ops, _model = annotated(secret_columns=["payment_card.status", "!*.apikey", "ROLE"])
    info = ops.db_info("staff")
    marked = {f"{t.name}.{c.name}" for t in info.tables for c in t.columns if c.secret}
    assert marked == {"staff.password", "staff.role", "payment_card.card_number",
                      "payment_card.status"}
    assert info.table("payment_card").column("status").enum_values == []
    assert "expired" not in info.table("payment_card").sample_data_csv
    # The key left unmarked is read like any column (what the other test's check relies on).
    assert _files_holding(ops.data_dir, SECRETS) == {"staff.db_info.json": [API_KEY],
                                                     "staff.context_index.json": [API_KEY]}


def test_annotate_schema_names_the_secret_columns(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run_sqlite_script(tmp_path / "staff.db", SCRIPT)
    config_file = write_dbs_yaml(tmp_path, [sqlite_config(
        "staff", tmp_path / "staff.db", secret_columns=["role"])])
    assert main(["staff", "--config", str(config_file)]) == 0
    assert ("  secret columns, their values not read: payment_card.card_number, staff.password, "
            "staff.apiKey, staff.role (secret_columns in dbs.yaml changes which)"
            ) in capsys.readouterr().out.splitlines()


def test_a_column_made_secret_leaves_the_rebuilt_index(
        annotated: Callable[..., tuple[OpsContext, ScriptedAnnotator]]) -> None:
    """The context index keeps a table's earlier values when it is rebuilt without reading the
    database (the cache changed, the engine rebuilds): not those of a column secret since."""
    from nl2sql.context_engine.engine import ContextEngine
    from nl2sql.schema.cache import save_db_info

    ops, _model = annotated(secret_columns=["!*.apikey"])
    assert "staff.context_index.json" in _files_holding(ops.data_dir, SECRETS)
    info = ops.db_info("staff")
    staff = info.table("staff")
    staff.column("apiKey").secret = True  # what the next annotation decides, written alone
    staff.column("apiKey").enum_values, staff.column("apiKey").domain_values = [], None
    staff.column("apiKey").enum_candidates = None
    staff.sample_data_csv = (staff.sample_data_csv or "").replace(API_KEY, "<withheld>")
    save_db_info(info, ops.data_dir)
    context = ContextEngine(ops.registry).context(f"who has the key {API_KEY}?", db_id="staff")
    assert context.value_hints == []
    assert _files_holding(ops.data_dir, SECRETS) == {}


@pytest.mark.parametrize("first", ["context", "schema"])
def test_secret_columns_changed_in_dbs_yaml_apply_without_annotating(
        annotated: Callable[..., tuple[OpsContext, ScriptedAnnotator]],
        staff_db: Callable[..., DbConnectionConfig],
        make_registry: Callable[..., DbConnectionConfigs], first: str) -> None:
    """A team finds a secret in the schema and adds it to ``secret_columns``: the running
    tools stop showing its values at once (the cache and the context index drop them when next
    read), whichever reads first, not at the next ``annotate-schema``."""
    from nl2sql.context_engine.engine import ContextEngine

    ops, _model = annotated(secret_columns=["!*.apikey"])
    assert set(_files_holding(ops.data_dir, SECRETS)) == {"staff.db_info.json",
                                                          "staff.context_index.json"}
    assert API_KEY in format_schema(ops.db_info("staff"))
    registry = make_registry(staff_db())  # the same data dir, dbs.yaml without the exception
    now = OpsContext(registry)
    try:
        question = f"who has the key {API_KEY}?"
        if first == "context":
            context = ContextEngine(registry).context(question, db_id="staff")
            assert context.value_hints == [] and API_KEY not in context.render()
        info = now.db_info("staff")
        assert info.table("staff").column("apiKey").secret
        assert API_KEY not in format_schema(info) and "<withheld>" in format_schema(info)
        assert db_search_schema_op(now, question, db_id="staff").context.value_hints == []
        assert _files_holding(registry.data_dir, SECRETS) == {}
    finally:
        now.close()
