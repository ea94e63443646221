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


SELECTION_MARK = "Several SQL queries were written"  # the selection step's prompt


def group_showing(prompt: str, text: str) -> int:
    """The number of the selection prompt's "## Group N" section that shows ``text`` (the
    groups are numbered by their lowest candidate, which depends on the order requests came)."""
    import re

    sections = re.split(r"^## Group (\d+):", prompt, flags=re.MULTILINE)
    return next(int(number) for number, body in zip(sections[1::2], sections[2::2])
                if text in body)


@dataclass
class CandidateScripts:
    """A ``FunctionModel`` for N candidates running at once: each new conversation (a request
    with no model response yet) takes the next script, in the order the requests arrive; later
    requests of that conversation are answered from its own script (found by the tool-call ids
    this model gave out). The selection step's request is answered from ``selection`` (a part,
    or a function of the prompt's text returning one)."""

    scripts: list[list[Any]]
    selection: list[Any] = field(default_factory=list)
    delay: float = 0.0  # seconds each request takes (asyncio.sleep: candidates overlap)
    requests: list[tuple[int | None, list[ModelMessage], AgentInfo]] = field(default_factory=list)
    started: int = 0

    async def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        import asyncio

        if self.delay:
            await asyncio.sleep(self.delay)
        if SELECTION_MARK in _prompt_text(messages):
            self.requests.append((None, list(messages), info))
            step = sum(1 for owner, _, _ in self.requests if owner is None) - 1
            part = self.selection[step]
            part = part(_prompt_text(messages)) if callable(part) else part
            return ModelResponse(parts=[_with_id(part, f"sel_{step}")])
        answered = [m for m in messages if isinstance(m, ModelResponse)]
        if answered:
            owner = int(str(answered[0].parts[0].tool_call_id).split("_")[1])
        else:
            owner, self.started = self.started, self.started + 1
        self.requests.append((owner, list(messages), info))
        step = len(answered)
        script = self.scripts[owner]
        if step >= len(script):
            raise AssertionError(f"candidate script {owner} has {len(script)} steps; "
                                 f"request {step + 1} came")
        return ModelResponse(parts=[_with_id(script[step], f"c_{owner}_{step}")])

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(self.respond, model_name="scripted")

    def of(self, owner: int | None) -> list[AgentInfo]:
        return [info for who, _, info in self.requests if who == owner]

    def selection_prompt(self) -> str:
        return next(_prompt_text(m) for who, m, _ in self.requests if who is None)


def _with_id(part: Any, call_id: str) -> Any:
    if isinstance(part, ToolCallPart):
        return ToolCallPart(part.tool_name, part.args, tool_call_id=call_id)
    return part


def _prompt_text(messages: list[ModelMessage]) -> str:
    first = messages[0]
    return " ".join(str(getattr(p, "content", "")) for p in first.parts) \
        if isinstance(first, ModelRequest) else ""
