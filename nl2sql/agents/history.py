"""What a conversation keeps of a turn: what the user and the model said and did.

A turn's history is its question, the model's text and tool calls (the SQL it tried), the
database's answers (errors, row previews) and the final answer, with a preview of the answer's
rows. The context the model was shown (the instructions holding the schema, value hints,
examples and glossary, and schema text a tool returned) is rebuilt for every question from
today's cache, so it is neither stored nor counted against ``agent: history_tokens``:
pydantic-ai records the run's instructions on every request of it (a turn with one retry held
the whole context twice), and ``turn_history`` removes them before a turn is stored. It is
applied again when a turn is read, so turns stored before keep loading, without their context.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from pydantic_ai.messages import (InstructionBaselinePart, InstructionDeltaPart, ModelMessage,
                                  ModelRequest, ModelResponse, SystemPromptPart, TextPart,
                                  ToolCallPart, ToolReturnPart, UserPromptPart)

from nl2sql.agents.sql_agent import FINAL_RESULT
from nl2sql.operations.registry import OPERATIONS

#: Tools whose result is context (schema text): a turn keeps the call, not the text.
CONTEXT_TOOLS = frozenset(op.name for op in OPERATIONS if op.context)
CONTEXT_OMITTED = "(schema text: not kept in the conversation; today's is in the instructions)"
_CONTEXT_PARTS = (SystemPromptPart, InstructionBaselinePart, InstructionDeltaPart)


def turn_history(messages: Sequence[ModelMessage], *,
                 result_preview: str | None = None) -> list[ModelMessage]:
    """``messages`` (one agent run) without the context: no instructions or system prompt on
    any request, schema tools' text replaced by a note; ``result_preview`` (the answer's rows)
    in place of the final answer's bare acknowledgement."""
    kept: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            parts = [_without_context(part, result_preview) for part in message.parts
                     if not isinstance(part, _CONTEXT_PARTS)]
            if parts:
                kept.append(dataclasses.replace(message, parts=parts, instructions=None))
        else:
            kept.append(message)
    return kept


def _without_context(part: Any, result_preview: str | None) -> Any:
    if isinstance(part, ToolReturnPart) and part.outcome == "success":
        if part.tool_name in CONTEXT_TOOLS:
            return dataclasses.replace(part, content=CONTEXT_OMITTED)
        if part.tool_name == FINAL_RESULT and result_preview:
            return dataclasses.replace(part, content=f"The answer's SQL ran: {result_preview}")
    return part


def said_and_done(question: str, sql: str, explanation: str) -> list[ModelMessage]:
    """The history of a turn answered without the model (a verified answer): the question and
    the answer's SQL, as the model's own reply."""
    return [ModelRequest(parts=[UserPromptPart(question)]),
            ModelResponse(parts=[TextPart(f"{explanation}\n```sql\n{sql}\n```")])]


def history_tokens(messages: Sequence[ModelMessage]) -> int:
    """A size estimate of what ``messages`` add to a prompt: the characters of their text,
    tool arguments and tool results, over 4."""
    return sum(len(_text(part)) for message in messages for part in message.parts) // 4


def _text(part: Any) -> str:
    if isinstance(part, ToolCallPart):
        return part.tool_name + part.args_as_json_str()
    content = getattr(part, "content", "")
    return content if isinstance(content, str) else json.dumps(content, default=str)
