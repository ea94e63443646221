"""The faces of governed metrics on the bundled bookstore and its dbt model: MCP tools through a
real client session, the Python API (an Answer with the compiled SQL, verified like any other),
the NL2SQL agent answering with ``query_metrics`` (scripted models), and the context engine
putting the right metric first."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from agent_scripts import Script, final, tool
from mcp import Client
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

import nl2sql
from conftest import build_cache
from nl2sql.mcp import build_server
from nl2sql.semantic import MetricQuery, compile_for
from nl2sql.operations.ops_context import OpsContext


def _compiled(ops: OpsContext, *metrics: str, dimensions: tuple[str, ...] = ()) -> str:
    return compile_for(ops.config("bookstore"), MetricQuery(metrics, dimensions),
                       ops.db_info("bookstore")).sql


async def test_mcp_metric_tools(tmp_path: Path) -> None:
    ops = OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    build_cache(ops.config("bookstore"), ops.data_dir)
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    async with Client(server) as client:
        listed = await client.call_tool("metrics_list", {"db_id": "bookstore"})
        queried = await client.call_tool("metrics_query", {
            "db_id": "bookstore", "metrics": ["revenue", "order_count"],
            "dimensions": ["metric_time__year"], "order_by": ["-revenue"], "limit": 2})
        wrong = await client.call_tool("metrics_query", {"db_id": "bookstore",
                                                         "metrics": ["revenu"]})
    text = listed.content[0].text
    assert not listed.is_error and "- revenue (Revenue): Money from books sold" in text
    assert "group by: metric_time, order__ordered_at, order__status" in text
    shown = queried.content[0].text
    saved = re.search(r"2 rows x 3 columns saved to (revenue_order_count_metric_\w+)\.csv",
                      shown)
    assert not queried.is_error and saved, shown
    sql = _compiled(ops, "revenue", "order_count", dimensions=("metric_time__year",))
    metadata = json.loads((tmp_path / "ws" / f"{saved.group(1)}.metadata.json").read_text())
    assert metadata["sql_query"].startswith(sql.split("ORDER BY")[0]) and "LIMIT 2" in \
        metadata["sql_query"] and f"```sql\n{metadata['sql_query']}\n```" in shown
    assert metadata["db_id"] == "bookstore" and metadata["row_count"] == 2
    assert wrong.is_error and "Unknown metric 'revenu'. Did you mean 'revenue'?" in \
        wrong.content[0].text
    ops.close()


def test_python_api_answers_and_the_answer_can_be_verified(bookstore_ops: OpsContext) -> None:
    names = [metric["name"] for metric in nl2sql.metrics("bookstore", config=bookstore_ops)]
    assert {"revenue", "average_order_value", "cumulative_revenue"} <= set(names)
    answer = nl2sql.query_metrics("bookstore", "revenue", dimensions=["metric_time__year"],
                                  question="What was our revenue per year?",
                                  config=bookstore_ops)
    assert answer.source == "metric:revenue" and answer.usage.requests == 0
    assert answer.sql == _compiled(bookstore_ops, "revenue", dimensions=("metric_time__year",))
    assert list(answer.df.columns) == ["metric_time__year", "revenue"] and len(answer.df) == 3
    assert "governed metric revenue (no model request)" in answer.receipt_line()
    verified = answer.accept()
    served = nl2sql.ask("What was our revenue per year?", model=Script([]).model,
                        config=bookstore_ops)
    assert served.source == f"verified:{verified.id}" and served.sql == answer.sql


def test_the_agent_answers_with_a_metric(bookstore_ops: OpsContext) -> None:
    script = Script([tool("query_metrics", metrics=["revenu"]),
                     tool("query_metrics", metrics=["revenue"],
                          dimensions=["metric_time__year"])])
    answer = nl2sql.ask("What was our revenue per year?", model=script.model,
                        config=bookstore_ops)
    assert "Unknown metric 'revenu'. Did you mean 'revenue'?" in script.feedback(1)
    assert answer.sql == _compiled(bookstore_ops, "revenue", dimensions=("metric_time__year",))
    assert answer.source == "metric:revenue" and answer.row_count == 3
    assert "governed metric revenue, chosen by model" in answer.receipt_line()
    assert answer.explanation.startswith("The governed metric(s) revenue by metric_time__year")
    assert answer.context.metrics[0].name == "revenue"
    instructions = script.instructions[0] or ""
    assert "## Governed metrics: answer with `query_metrics` when one fits" in instructions
    assert "- revenue (Revenue): Money from books sold" in instructions
    assert [a.error is not None for a in answer.attempts] == [True, False]


def test_the_agent_writes_sql_when_no_metric_fits(bookstore_ops: OpsContext) -> None:
    sql = "SELECT title FROM books WHERE genre = 'mystery'"
    script = Script([final(sql, "No metric lists books: plain SQL.")])
    answer = nl2sql.ask("List the titles of the mystery books.", model=script.model,
                        config=bookstore_ops)
    assert answer.source == "model" and answer.sql == sql
    assert all(metric.matched is None for metric in answer.context.metrics)


def test_no_metric_tools_for_a_database_without_metrics(chinook_ops: OpsContext) -> None:
    seen: dict[str, list[str]] = {}

    def respond(messages: list, info: AgentInfo) -> ModelResponse:  # noqa: ANN001
        seen["tools"] = [t.name for t in info.function_tools]
        seen["outputs"] = [t.name for t in info.output_tools]
        seen["instructions"] = [info.instructions or ""]
        return ModelResponse(parts=[final("SELECT 1 AS one")])

    nl2sql.ask("How many tracks?", db_id="chinook", model=FunctionModel(respond),
               config=chinook_ops)
    assert "query_metrics" not in seen["outputs"] and "final_result" in seen["outputs"]
    assert "metrics_list" not in seen["tools"] and "db_execute_sql" in seen["tools"]
    assert "Governed metrics" not in seen["instructions"][0]


@pytest.mark.parametrize(("question", "first"), [
    ("What was the average order value per country in 2024?", "average_order_value"),
    ("Show the revenue by month", "revenue"),
    ("cumulative revenue over the years", "cumulative_revenue"),
    ("How many new customers joined each year?", "new_customers"),
    ("what is the retrun rate by reason", "return_rate"),  # a typo
    # each word of the label, not in a row
    ("What was the value of an average order per country?", "average_order_value"),
    ("How many books were sold each month?", "books_sold"),
])
def test_context_puts_the_right_metric_first(bookstore_ops: OpsContext, question: str,
                                             first: str) -> None:
    ctx = nl2sql.context(question, db_id="bookstore", config=bookstore_ops)
    assert ctx.metrics[0].name == first and ctx.metrics[0].matched, ctx.metrics[:3]
    assert ctx.metrics[0].dimensions and "Governed metrics of bookstore" in ctx.render()


@pytest.mark.parametrize("question", ["List the titles of the mystery books.",
                                      "Which authors were born before 1950?",
                                      "What is the email of customer 12?"])
def test_no_metric_is_matched_for_questions_no_metric_answers(bookstore_ops: OpsContext,
                                                              question: str) -> None:
    ctx = nl2sql.context(question, db_id="bookstore", config=bookstore_ops)
    assert ctx.metrics and all(metric.matched is None for metric in ctx.metrics), [
        (m.name, m.matched) for m in ctx.metrics if m.matched]


def test_glossary_synonyms_lead_to_the_metric(bookstore_ops: OpsContext) -> None:
    glossary = bookstore_ops.data_dir / "glossary" / "bookstore.yaml"
    glossary.parent.mkdir(parents=True, exist_ok=True)
    glossary.write_text("terms:\n  - term: revenue\n    synonyms: [turnover, takings]\n"
                        "    definition: what we sold, cancelled orders excluded\n")
    ctx = nl2sql.context("What were the takings in each month?", db_id="bookstore",
                         config=bookstore_ops)
    assert ctx.metrics[0].name == "revenue"
    assert ctx.metrics[0].matched == "the question says 'takings' (a glossary synonym)"


def test_a_big_model_shows_the_group_bys_the_question_names_first() -> None:
    from nl2sql.agents.instructions import MAX_GROUP_BYS, metrics_lines
    from nl2sql.context_engine.prompt_context import MetricHint, PromptContext

    names = [f"table{i}__column{i}" for i in range(80)] + ["book__genre", "metric_time"]
    context = PromptContext(question="revenue per genre", db_id="shop", metrics=[
        MetricHint(name="revenue", matched="the question says 'revenue'", dimensions=names),
        MetricHint(name="order_count")])
    lines = metrics_lines(context).splitlines()
    assert lines[1].startswith("  group by: metric_time, book__genre, table0__column0")
    assert lines[1].count(", ") == MAX_GROUP_BYS - 1
    assert lines[1].endswith("(+42 more: metrics_list shows them)")
    assert lines[2] == "- order_count"  # not matched: its name only
