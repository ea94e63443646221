"""Scripted models for agent tests: a ``FunctionModel`` that answers each request with the next
step of a script (a tool call, a final answer, or text), recording what it was sent."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import (ModelMessage, ModelRequest, ModelResponse, TextPart,
                                  ToolCallPart, ToolReturnPart)
from pydantic_ai.models.function import AgentInfo, FunctionModel


def tool(name: str, **args: Any) -> ToolCallPart:
    return ToolCallPart(name, args)


def final(sql: str, explanation: str = "Counts what was asked.") -> ToolCallPart:
    return ToolCallPart("final_result", {"sql": sql, "explanation": explanation})


def choose(db_id: str, reasoning: str = "Its tables hold the answer.") -> ToolCallPart:
    return ToolCallPart("final_result", {"db_id": db_id, "reasoning": reasoning})


def text(content: str) -> TextPart:
    return TextPart(content)


@dataclass
class Script:
    steps: list[Any]
    requests: list[list[ModelMessage]] = field(default_factory=list)
    instructions: list[str | None] = field(default_factory=list)

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        self.instructions.append(info.instructions)
        if len(self.requests) > len(self.steps):
            raise AssertionError(f"the script has {len(self.steps)} steps; request "
                                 f"{len(self.requests)} came")
        return ModelResponse(parts=[self.steps[len(self.requests) - 1]])

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(self.respond, model_name="scripted")

    def last_feedback(self) -> str:
        """What the model was told after its previous step (a tool return or a retry)."""
        request = self.requests[-1][-1]
        assert isinstance(request, ModelRequest)
        return " ".join(str(getattr(p, "content", "")) for p in request.parts)

    def feedback(self, index: int) -> str:
        request = self.requests[index][-1]
        return " ".join(str(getattr(p, "content", p)) for p in request.parts)


def tool_pairs_complete(messages: list[ModelMessage]) -> bool:
    """Every tool call has its return (or retry) somewhere after it, and vice versa."""
    calls = {p.tool_call_id for m in messages for p in m.parts if isinstance(p, ToolCallPart)}
    returns = {p.tool_call_id for m in messages for p in m.parts
               if isinstance(p, ToolReturnPart) or type(p).__name__ == "RetryPromptPart"}
    return calls == returns


def dumps(value: Any) -> str:
    return json.dumps(value)
