"""The one list of operations and its two faces (MCP tools, agent tools) cannot drift apart,
and each face translates errors at its edge: MCP ``ToolError``, agent ``ModelRetry`` or stop."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from mcp import Client
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from nl2sql import operations
from nl2sql.agents import tools as agent_tools
from nl2sql.errors import QueryExecutionError, UnknownDatabaseError
from nl2sql.mcp import build_server
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.registry import OPERATIONS, operation
from nl2sql.workspace.results import safe_name_from_query

#: MCP tool names MCP clients and outside checks rely on (ARCHITECTURE.md "Contracts").
CONTRACT_TOOLS = {"db_list", "db_show_schema", "db_execute_sql", "db_get_row_by_id",
                  "saved_queries_list", "saved_query_get_details", "csv_head", "csv_tail"}


def test_each_operation_is_listed_once_with_its_function() -> None:
    names = [op.name for op in OPERATIONS]
    assert len(names) == len(set(names)) and CONTRACT_TOOLS <= set(names)
    for op in OPERATIONS:
        assert op.function.__name__ == f"{op.name}_op"
        assert getattr(operations, f"{op.name}_op") is op.function  # exported by the package
        assert op.title and len(op.description) > 60
        first = next(iter(inspect.signature(op.function).parameters.values()))
        assert first.name == "ctx", op.name
        for param in op.parameters():  # every public parameter is described for models
            assert "description" in repr(param.annotation), f"{op.name}.{param.name}"
        # Only accepting an answer as right is a person's alone (no agent offers it).
        assert op.agents or op.name == "saved_query_accept", op.name


async def test_mcp_tools_are_the_operations(tmp_path: Path) -> None:
    server = build_server(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    async with Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(tools) == [op.name for op in OPERATIONS]
    for op in OPERATIONS:
        tool = tools[op.name]
        assert tool.title == op.title and tool.description == op.description
        assert tool.annotations.read_only_hint is op.read_only
        assert set(tool.input_schema.get("properties", {})) == {p.name for p in op.parameters()}


def test_agent_tools_are_the_operations() -> None:
    assert list(agent_tools.AGENT_TOOLS) == [op.name for op in OPERATIONS]
    for op in OPERATIONS:
        tool = getattr(agent_tools, f"{op.name}_tool")  # MCP db_list -> agent db_list_tool
        assert tool is agent_tools.AGENT_TOOLS[op.name]
        assert tool.name == op.name and tool.description == op.description
        schema = tool.tool_def.parameters_json_schema
        assert set(schema.get("properties", {})) == {p.name for p in op.parameters()}
    offered = {tool.name for agent in ("catalog", "nl2sql") for tool in
               agent_tools.tools_for(agent)}
    answers = {op.name for op in agent_tools.answer_operations("nl2sql")}
    assert answers == {"metrics_query"} and not offered & answers  # an output tool instead
    assert offered | answers == {op.name for op in OPERATIONS} - {"saved_query_accept"}
    for tool in agent_tools.tools_for("nl2sql"):  # pinned: the model picks no database or file
        properties = set(tool.tool_def.parameters_json_schema.get("properties", {}))
        assert properties == {p.name for p in operation(tool.name).parameters()} - {
            "db_id", "output_file", "overwrite"}, tool.name


def test_agent_edge_retries_what_the_model_can_fix() -> None:
    fixable = agent_tools.agent_error(QueryExecutionError("no such column: titel"))
    assert isinstance(fixable, ModelRetry) and str(fixable) == "no such column: titel"
    setup = UnknownDatabaseError("Unknown database 'x'.")
    setup.model_fixable = False
    assert agent_tools.agent_error(setup) is setup


def _script(calls: list[tuple[str, dict]]):  # noqa: ANN202
    """A FunctionModel script: the given tool calls in turn, then a text answer."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = sum(1 for m in messages for p in m.parts if isinstance(p, ToolCallPart))
        if done < len(calls):
            name, args = calls[done]
            return ModelResponse(parts=[ToolCallPart(name, args)])
        returns = [p.model_response_str() for m in messages for p in m.parts
                   if isinstance(p, ToolReturnPart)]
        return ModelResponse(parts=[TextPart(" | ".join(returns))])

    return respond


def test_agent_tools_run_operations_and_retry_bad_sql(tmp_path: Path) -> None:
    ops = OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    count = "SELECT count(*) AS n FROM books"
    name = safe_name_from_query(count) + ".csv"  # the NL2SQL agent's model names no file
    agent = Agent(FunctionModel(_script([
        ("db_execute_sql", {"query": "SELECT titel FROM books"}),
        ("db_execute_sql", {"query": count}),
        ("csv_head", {"csv_file": name, "n": 1}),
    ])), deps_type=agent_tools.PinnedDeps, tools=agent_tools.tools_for("nl2sql"))
    try:
        result = agent.run_sync("How many books?",
                                deps=agent_tools.PinnedDeps(ops=ops, db_id="bookstore"))
    finally:
        ops.close()
    retried = [p for m in result.all_messages() for p in m.parts
               if isinstance(p, ToolReturnPart) and p.outcome == "retried"]
    assert len(retried) == 1 and "no such column: titel" in str(retried[0].content)
    assert f"First 1 of 1 rows of {name}" in result.output
    assert (tmp_path / "ws" / name).is_file()


def test_agent_setup_errors_stop_the_run(tmp_path: Path) -> None:
    ops = OpsContext.load(None, data_dir=tmp_path / "data", workspace=tmp_path / "ws")
    agent = Agent(FunctionModel(_script([("db_show_schema", {"db_id": "bookstore"})])),
                  deps_type=OpsContext, tools=agent_tools.tools_for("catalog"))
    with pytest.raises(Exception) as raised:  # no schema cache yet: not the model's to fix
        agent.run_sync("Which tables?", deps=ops)
    assert type(raised.value).__name__ == "SchemaCacheMissingError"
    assert "annotate-schema" in str(raised.value)
