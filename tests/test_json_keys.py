"""A JSON column's top-level keys: an events table whose payload depends on the event type shows
three documents in its sample rows, not the keys a question needs (``payload->>'amount'``).
Annotation reads the keys of the rows it samples, most frequent first, on PostgreSQL (``jsonb``
and ``json``), MariaDB (JSON: LONGTEXT checked by ``json_valid``) and DuckDB; arrays and
scalars have none; the schema lists them and a query using one finds rows."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from conftest import BackendDb
from nl2sql.annotation.pipeline import annotate_database
from nl2sql.config.registry import DbConnectionConfigs
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.queries import db_execute_sql_op
from nl2sql.schema.formatting import format_schema

KINDS = {"signup": ["plan", "referrer"], "purchase": ["amount", "currency", "items"],
         "refund": ["amount", "reason"]}
MANY = [f"k{i:02}" for i in range(40)]  # a document with more keys than are shown


def _documents() -> list[object]:
    documents: list[object] = []
    for i in range(60):
        kind = list(KINDS)[i % 3]
        documents.append({"kind": kind, **{key: i for key in KINDS[kind]}})
    return documents + [[1, 2], "text", 7]  # not objects: no keys


TYPES = {"postgres": ("jsonb", "json"), "mysql": ("JSON", "JSON"), "duckdb": ("JSON", "JSON")}


def _script(backend: str) -> str:
    payload_type, wide_type = TYPES[backend]
    rows = ", ".join(f"({i}, '{json.dumps(doc)}', NULL)" for i, doc in enumerate(_documents()))
    wide = json.dumps({key: 1 for key in MANY})
    return (f"CREATE TABLE events (id integer PRIMARY KEY, payload {payload_type}, "
            f"wide {wide_type});\n"
            f"INSERT INTO events VALUES {rows};\n"
            f"INSERT INTO events VALUES (1000, NULL, '{wide}');")


@pytest.mark.parametrize("backend", sorted(TYPES))
def test_the_keys_of_a_json_column_are_listed(
        backend: str, make_db: Callable[..., BackendDb],
        make_registry: Callable[..., DbConnectionConfigs]) -> None:
    db = make_db(backend, "app", script=_script(backend))
    ops = OpsContext(make_registry(db.config))
    try:
        annotate_database(ops.config("app"), ops.data_dir)
        info = ops.db_info("app")
        payload = info.table("events").column("payload")
        assert payload.json_keys is not None and payload.json_keys[0] == "kind"  # in every one
        assert set(payload.json_keys) == {"kind", *[k for keys in KINDS.values() for k in keys]}
        assert payload.json_keys[1] == "amount"  # purchases and refunds: next most frequent
        schema = format_schema(info)
        line = next(line for line in schema.splitlines() if line.strip().startswith("payload"))
        assert line.endswith(f"-- keys [{', '.join(payload.json_keys)}]")
        wide = next(line for line in schema.splitlines() if line.strip().startswith("wide"))
        assert wide.endswith(", k29, ...]") and "k30" not in wide
        amount = {"postgres": "(payload->>'amount')::int",
                  "mysql": "JSON_VALUE(payload, '$.amount')",
                  "duckdb": "CAST(payload->>'amount' AS INTEGER)"}[backend]
        result = db_execute_sql_op(ops, "app", f"SELECT count(*) AS n FROM events "
                                   f"WHERE {amount} >= 0")
        assert (ops.workspace_root / result.csv_filename).read_text().split()[1] == "40"
    finally:
        ops.close()
