"""The MCP face's error edge: every failure a client can cause reaches it as one sentence.

- A tool's own failure: ``nl2sql.mcp.tools`` turns an ``Nl2SqlError`` into ``ToolError`` with
  its message and anything else into "internal error, see the log" (details only in the log),
  through ``nl2sql.errors.as_one_sentence``.
- Arguments that do not match a tool's schema: the SDK would answer with pydantic's multi-line
  report and its errors.pydantic.dev link; ``Nl2SqlServer.call_tool`` answers one sentence
  built from the structured errors (field and reason), never the rejected values.
- A line on stdio that is not JSON: the SDK drops it silently, so the client waits forever;
  here it gets the JSON-RPC error -32700 (parse error), or -32600 for JSON that is not a
  JSON-RPC message.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from nl2sql.access.caller import Caller
from nl2sql.errors import AccessDeniedError, as_one_sentence, did_you_mean
from nl2sql.mcp.callers import acting, authenticated_caller, caller_message
from nl2sql.mcp.stdio import stdio_server
from nl2sql.operations.ops_context import OpsContext

logger = logging.getLogger(__name__)


@contextmanager
def tool_errors(tool: str) -> Iterator[None]:
    """A tool's failure as one sentence: ``ToolError`` (``isError=True``) with the message of an
    ``Nl2SqlError``, "internal error, see the log" for anything else."""
    try:
        yield
    except ToolError:
        raise
    except Exception as exc:  # noqa: BLE001 - the face's edge: one sentence for all
        raise ToolError(caller_message(as_one_sentence(exc, tool))) from None


def unknown_arguments(tool: str, arguments: dict[str, Any], accepted: list[str]) -> None:
    """Refuse arguments ``tool`` does not take, naming the accepted parameters (pydantic would
    drop them silently: ``natural_language_query`` for ``nl_query`` would be lost)."""
    unknown = [key for key in arguments if key not in accepted]
    if not unknown:
        return
    hint = did_you_mean(unknown[0], accepted, capitalize=False)
    takes = ", ".join(accepted) if accepted else "no arguments"
    raise ToolError(f"Unknown argument '{unknown[0]}' for {tool}{f'; {hint}' if hint else ''}"
                    f"{'' if hint else '; '}{tool} takes: {takes}.")


def validation_sentence(tool: str, error: ValidationError) -> str:
    """``Invalid arguments for csv_head: n: Input should be less than or equal to 1000.``"""
    parts = []
    for item in error.errors(include_url=False, include_input=False):
        field = ".".join(str(p) for p in item.get("loc", ()) if p != "arguments") or "arguments"
        parts.append(f"{field}: {item.get('msg', 'invalid value')}")
    return f"Invalid arguments for {tool}: {'; '.join(parts)}; see the tool's input schema."


class Nl2SqlServer(MCPServer[Any]):
    """``MCPServer`` with nl2sql's error edge for argument errors and stray stdio lines, and
    every tool call, resource read and prompt run for its caller (``nl2sql.mcp.callers``).

    ``on_initialized``: called once when the client's ``notifications/initialized`` arrives on
    stdio (the server's warm-up, ``nl2sql.mcp.warmup``). ``startup_note``: a line for stderr once
    the server is up (where the caches and results are without a dbs.yaml). ``ops_context``:
    the server's context; ``face``: ``mcp-stdio`` or ``mcp-http``; ``default_caller``: who a
    request without a checked bearer token is made for (a function, asked at each request;
    None when every request needs a user's token)."""

    on_initialized: Callable[[], object] | None = None
    startup_note: str | None = None
    ops_context: OpsContext | None = None
    face: str = "mcp-stdio"
    default_caller: Callable[[], Caller] | None = None

    def acting(self, context: Any) -> AbstractContextManager[OpsContext]:
        """The block runs as the request's caller (``request_ops()`` is their view)."""
        caller = authenticated_caller(context) or (
            self.default_caller() if self.default_caller is not None else None)
        if caller is None or self.ops_context is None:
            raise AccessDeniedError("This server needs a user's bearer token; send it as "
                                    "'Authorization: Bearer <token>'.")
        return acting(self.ops_context, caller, self.face)

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        schema = self._tool_input_schema(name)
        if schema is not None:  # an argument the tool does not take is an error, not dropped
            unknown_arguments(name, arguments, list(schema.get("properties", {})))
        with self.acting(context):
            try:
                return await super().call_tool(name, arguments, context)
            except UnexpectedToolError as exc:  # raised outside our tool body (a validator)
                error = caller_message(as_one_sentence(exc.__cause__ or exc, name))
                raise ToolError(f"Error executing tool {name}: {error}") from exc
            except ToolError as exc:
                if isinstance(exc.__cause__, ValidationError):
                    raise ToolError(validation_sentence(name, exc.__cause__)) from None
                raise

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        with self.acting(context):
            return await super().read_resource(uri, context)

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Any = None) -> Any:
        with self.acting(context):
            return await super().get_prompt(name, arguments, context)

    async def run_stdio_async(self) -> None:
        async with stdio_server() as (read_stream, write_stream):
            inner_send, inner_receive = create_context_streams[SessionMessage | Exception](0)

            async def answer_unreadable_lines() -> None:
                waiting = self.on_initialized
                async with inner_send:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            await write_stream.send(SessionMessage(_parse_error(item)))
                            continue
                        await inner_send.send(item)
                        if waiting is not None and _is_initialized(item):
                            waiting()
                            waiting = None

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(answer_unreadable_lines)
                await self._lowlevel_server.run(
                    inner_receive, write_stream,
                    self._lowlevel_server.create_initialization_options())
                tasks.cancel_scope.cancel()


def _is_initialized(item: SessionMessage) -> bool:
    message = item.message
    return (isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/initialized")


def _parse_error(exc: Exception) -> types.JSONRPCError:
    not_json = isinstance(exc, ValidationError) and any(
        e.get("type") == "json_invalid" for e in exc.errors(include_url=False))
    code = types.PARSE_ERROR if not_json else types.INVALID_REQUEST
    message = ("Parse error: the line is not JSON" if not_json
               else "Invalid request: the line is not a JSON-RPC 2.0 message")
    logger.warning("stdio: %s", message)
    return types.JSONRPCError(jsonrpc="2.0", id=None,
                              error=types.ErrorData(code=code, message=message))
