"""Scripted models for the annotation tests (no real LLM): read what the prompt says, answer
through the output tool the agent offers, and count requests per step and per table."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import (ModelMessage, ModelRequest, ModelResponse, ToolCallPart,
                                  ToolReturnPart, UserPromptPart)
from pydantic_ai.models.function import AgentInfo, FunctionModel


def prompt_text(messages: list[ModelMessage]) -> str:
    """The first user prompt of the run."""
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def feedback(messages: list[ModelMessage]) -> list[str]:
    """Retry messages the agent sent back (output validator / validation errors)."""
    found = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart) and part.outcome == "retried":
                    found.append(str(part.content))
    return found


def answer(info: AgentInfo, args: dict[str, Any]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def _properties(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node.get("properties", {})


def requested_columns(info: AgentInfo) -> list[str]:
    """Answer keys of the columns a description request asks for."""
    schema = info.output_tools[0].parameters_json_schema
    columns = schema.get("properties", {}).get("columns")
    return list(_properties(schema, columns)) if columns else []


def step_of(prompt: str) -> str:
    if "Decide which candidate" in prompt:
        return "enum_classification"
    if "example questions" in prompt:
        return "example_queries"
    if "description of the whole database" in prompt:
        return "database_description"
    return "table_descriptions"


def table_of(prompt: str) -> str | None:
    match = re.search(r"(?:Describe the (?:table|view)|columns of the table) `([^`]+)`", prompt)
    return match.group(1) if match else None


def schema_tables(prompt: str) -> list[tuple[str, int]]:
    """(table, row count) from the ``### name -- N rows`` headers of the examples prompt."""
    return [(name, int(rows)) for name, rows in
            re.findall(r"^### (.+?)(?: \(view\))? -- (\d+) rows$", prompt, flags=re.M)]


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class ScriptedAnnotator:
    """A model that answers every annotation step sensibly and counts its requests.

    Descriptions name the column; enum verdicts accept every candidate unless ``reject`` names
    it; example queries count rows of the first tables that have rows (valid on any backend).
    """

    def __init__(self, reject: set[str] | None = None,
                 examples: Callable[[str, list[str]], list[dict[str, str]]] | None = None) -> None:
        self.reject = reject or set()
        self.examples = examples
        self.requests: Counter[str] = Counter()
        self.tables: Counter[tuple[str, str]] = Counter()
        self.prompts: list[str] = []
        self.model = FunctionModel(self._respond, model_name="scripted")

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = prompt_text(messages)
        step = step_of(prompt)
        self.requests[step] += 1
        self.prompts.append(prompt)
        table = table_of(prompt)
        if table:
            self.tables[(step, table)] += 1
        schema = info.output_tools[0].parameters_json_schema
        if step == "table_descriptions":
            args: dict[str, Any] = {}
            if "table_description" in schema["properties"]:
                args["table_description"] = f"Rows of {table}."
            keys = requested_columns(info)
            if keys:
                args["columns"] = {key: f"The {key} of a {table} row." for key in keys}
            return answer(info, args)
        if step == "enum_classification":
            return answer(info, {key: {"is_enum": key not in self.reject,
                                       "reasoning": f"{key}: judged from its values."}
                                 for key in schema["properties"]})
        if step == "database_description":
            return answer(info, {"description": "A sample database for the tests."})
        if self.examples is not None:
            return answer(info, {"queries": self.examples(prompt, feedback(messages))})
        count = int(re.search(r"Write (\d+) diverse examples", prompt).group(1))  # type: ignore[union-attr]
        tables = [name for name, rows in schema_tables(prompt) if rows > 0][:count]
        return answer(info, {"queries": [
            {"question": f"How many rows does {name} have?",
             "sql": f"SELECT COUNT(*) AS n FROM {quote(name)}"} for name in tables]})

    @property
    def total(self) -> int:
        return sum(self.requests.values())
