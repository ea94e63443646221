"""A database that is not in the repository, for the page's tests: a harbour's ports, vessels
and voyages (SQLite, or PostgreSQL with the same script), its dbt semantic model, two groups
and the scripted model that answers its questions with five candidates (four agreeing).

The model is one function of the question (``candidate_sql``), served in-process as a
pydantic-ai ``FunctionModel`` or over HTTP by the OpenAI-compatible stub
(``stub_responder``), so the page tests and the browser tests ask the same questions."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from stub_openai import Reply, tool_call
from test_cancelled_queries import ENDLESS, MARK

PORTS = [(1, "Valletta", "Malta"), (2, "Piraeus", "Greece"), (3, "Genoa", "Italy"),
         (4, "Tangier", "Morocco"), (5, "Sines", "Portugal"), (6, "Koper", "Slovenia")]
VESSELS = [(1, "Maris Stella", "MT", 2009), (2, "Aegean Dawn", "GR", 2015),
           (3, "Lanterna", "IT", 2001), (4, "Atlas Runner", "MA", 2019), (5, "Tejo", "PT", 2012)]


def _voyages() -> list[tuple[int, int, int, int, str, float]]:
    rows = []
    for n in range(1, 61):  # deterministic: every vessel sails between every pair in turn
        origin, target = n % 6 + 1, (n * 5) % 6 + 1
        if origin == target:
            target = target % 6 + 1
        rows.append((n, n % 5 + 1, origin, target, f"202{3 + n % 3}-{n % 12 + 1:02d}-15",
                     float(1000 + (n * 37) % 900)))
    return rows


def harbour_script() -> str:
    """The DDL and rows, in SQL that SQLite and PostgreSQL both run."""
    lines = [
        "CREATE TABLE ports (port_id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "country TEXT NOT NULL);",
        "CREATE TABLE vessels (vessel_id INTEGER PRIMARY KEY, name TEXT NOT NULL, flag TEXT, "
        "built_year INTEGER);",
        "CREATE TABLE voyages (voyage_id INTEGER PRIMARY KEY, vessel_id INTEGER REFERENCES "
        "vessels (vessel_id), from_port INTEGER REFERENCES ports (port_id), to_port INTEGER "
        "REFERENCES ports (port_id), departed_on DATE, cargo_tonnes REAL);"]
    lines += [f"INSERT INTO ports VALUES ({i}, '{name}', '{country}');"
              for i, name, country in PORTS]
    lines += [f"INSERT INTO vessels VALUES ({i}, '{name}', '{flag}', {year});"
              for i, name, flag, year in VESSELS]
    lines += [f"INSERT INTO voyages VALUES ({v}, {s}, {a}, {b}, '{d}', {t});"
              for v, s, a, b, d, t in _voyages()]
    return "\n".join(lines)


SEMANTIC_MODEL = {
    "semantic_models": [{
        "name": "voyages", "description": "Voyages of the harbour's vessels between ports.",
        "model": "ref('voyages')", "defaults": {"agg_time_dimension": "departed_on"},
        "entities": [{"name": "voyage", "type": "primary", "expr": "voyage_id"}],
        "dimensions": [{"name": "departed_on", "type": "time",
                        "type_params": {"time_granularity": "day"}}],
        "measures": [{"name": "tonnage", "agg": "sum", "expr": "cargo_tonnes",
                      "description": "Cargo carried, in tonnes."},
                     {"name": "voyage_count", "agg": "count", "expr": "voyage_id"}]}],
    "metrics": [{"name": "cargo_tonnage", "label": "Cargo tonnage", "type": "simple",
                 "description": "Tonnes of cargo carried on all voyages.",
                 "type_params": {"measure": "tonnage"}},
                {"name": "voyages_sailed", "label": "Voyages sailed", "type": "simple",
                 "description": "How many voyages departed.",
                 "type_params": {"measure": "voyage_count"}}]}



def groups(crew: list[str]) -> dict[str, Any]:
    """``crew`` query their databases; ``harbourmasters`` query and curate every one."""
    return {"crew": {"databases": crew}, "harbourmasters": {"databases": ["*"], "curator": True}}

# -- the questions and the scripted model ---------------------------------------------------

BUSIEST = "Which ports received the most cargo?"
BUSIEST_SQL = ("SELECT p.name AS port, sum(v.cargo_tonnes) AS tonnes FROM voyages v JOIN ports "
               "p ON p.port_id = v.to_port GROUP BY p.name ORDER BY tonnes DESC")
BUSIEST_OTHER = BUSIEST_SQL.replace("v.to_port", "v.from_port")  # the one that disagrees
FOLLOW_UP = "And only for 2025?"
FOLLOW_UP_SQL = BUSIEST_SQL.replace("GROUP BY", "WHERE v.departed_on >= '2025-01-01' GROUP BY")
FLEET = "How many vessels fly each flag?"
FLEET_SQL = "SELECT flag, count(*) AS vessels FROM vessels GROUP BY flag ORDER BY flag"
FEES = "What do the harbour fees add up to?"  # on the ledger, which the crew does not see
FEES_SQL = "SELECT sum(amount) AS total FROM fees"
ENDLESS_QUESTION = "How long is the longest chain of voyages?"
ENDLESS_SQL = f"/* {MARK} */ {ENDLESS}"  # runs until stopped (tests/test_cancelled_queries.py)

#: On the bundled bookstore (docs/img/web.png): four candidates leave cancelled orders out.
GENRES = "Which genres earned the most revenue?"
GENRES_SQL = ("SELECT b.genre, round(sum(oi.quantity * oi.unit_price), 2) AS revenue\n"
              "FROM order_items oi\nJOIN books b ON b.book_id = oi.book_id\n"
              "JOIN orders o ON o.order_id = oi.order_id\nWHERE o.status <> 'cancelled'\n"
              "GROUP BY b.genre\nORDER BY revenue DESC")
GENRES_OTHER = GENRES_SQL.replace("\nJOIN orders o ON o.order_id = oi.order_id\n"
                                  "WHERE o.status <> 'cancelled'", "")

_SCRIPTS = {BUSIEST: [BUSIEST_SQL, BUSIEST_SQL, BUSIEST_OTHER, BUSIEST_SQL, BUSIEST_SQL],
            FOLLOW_UP: [FOLLOW_UP_SQL] * 5, FLEET: [FLEET_SQL] * 5, FEES: [FEES_SQL] * 5,
            ENDLESS_QUESTION: [ENDLESS_SQL] * 5,
            GENRES: [GENRES_SQL, GENRES_SQL, GENRES_SQL, GENRES_OTHER, GENRES_SQL]}
_EXPLAINED = {GENRES: "Revenue is each order line's quantity times its unit price, summed per "
                      "genre; cancelled orders are left out."}


class CandidateSql:
    """The SQL of the ``n``-th candidate for a question (counted per question as requests
    come), and what was asked."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, question: str) -> tuple[str, str]:
        known = next((q for q in _SCRIPTS if q in question), None)
        if known is None:
            raise AssertionError(f"the scripted model does not know: {question!r}")
        with self.lock:
            n = self.asked[known]
            self.asked[known] += 1
        return _SCRIPTS[known][n % 5], _EXPLAINED.get(known, f"Answers: {known}")


def function_model(script: CandidateSql) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = " ".join(str(getattr(p, "content", "")) for p in messages[-1].parts) \
            if isinstance(messages[-1], ModelRequest) else ""
        sql, explanation = script(prompt)
        return ModelResponse(parts=[ToolCallPart("final_result", {
            "sql": sql, "explanation": explanation})])

    return FunctionModel(respond, model_name="scripted")


def stub_responder(script: CandidateSql) -> Any:
    def respond(body: dict[str, Any]) -> Reply:
        prompt = next(str(m.get("content")) for m in reversed(body["messages"])
                      if m["role"] == "user")
        sql, explanation = script(prompt)
        return tool_call("final_result", sql=sql, explanation=explanation)

    return respond


def write_config(folder: Path, databases: dict[str, dict[str, Any]], crew: list[str],
                 **top: Any) -> Path:
    """dbs.yaml in ``folder`` with ``databases``, the semantic model beside it, the groups
    (``crew``: the crew's databases)."""
    (folder / "harbour_metrics.yml").write_text(yaml.safe_dump(SEMANTIC_MODEL))
    for entry in databases.values():
        entry.setdefault("semantic_model", "harbour_metrics.yml")
        if entry["semantic_model"] is None:
            del entry["semantic_model"]
    path = folder / "dbs.yaml"
    path.write_text(yaml.safe_dump({"databases": databases, "agent": {"candidates": 5},
                                    "server": {"groups": groups(crew), **top.pop("server", {})},
                                    **top}))
    return path


def annotate(configs: Any) -> None:
    """Every configured database's schema cache as ``annotate-schema`` without a model writes
    it: structure, sample rows, enum screening (what the schema page shows)."""
    from nl2sql.annotation.pipeline import annotate_database

    for db_id in configs.ids():
        annotate_database(configs.get(db_id), configs.data_dir)
