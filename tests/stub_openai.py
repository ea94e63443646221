"""A local OpenAI-compatible chat-completions server for tests: no model is ever reached.

The server listens on 127.0.0.1 (a free port) and answers ``POST /v1/chat/completions`` with the
next reply of a script, so the real ``openai`` client, pydantic-ai's ``OpenAIChatModel`` (model
strings ``openai-chat:<name>``) and nl2sql's tools all run. Every request body is recorded.

    with StubOpenAI([tool_call("db_execute_sql", query="SELECT 1"),
                     tool_call("final_result", sql="SELECT 1", explanation="One.")]) as stub:
        env = stub.env()   # OPENAI_BASE_URL pointed at the stub, a dummy OPENAI_API_KEY
        ...
    stub.requests[0]["messages"], stub.requests[0]["tools"]

Replies: ``tool_call(name, **arguments)`` (several in one reply: ``tool_calls(...)``),
``text(content)``, ``http_error(status, retry_after=None)``; or pass ``responder``, a function
of the request body returning a reply, for concurrent callers whose order is not fixed. In
pytest, the ``stub_openai`` fixture (tests/conftest.py) starts one and sets the environment.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_STRING = "openai-chat:stub-model"  # the model string that reaches this server
_ids = itertools.count(1)


@dataclass
class Reply:
    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 50
    completion_tokens: int = 10
    delay: float = 0.0  # seconds the server takes before answering (concurrent requests overlap)


def tool_call(name: str, **arguments: Any) -> Reply:
    return tool_calls((name, arguments))


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> Reply:
    return Reply(tool_calls=[{"id": f"call_{next(_ids)}", "type": "function",
                              "function": {"name": name, "arguments": json.dumps(arguments)}}
                             for name, arguments in calls])


def text(content: str) -> Reply:
    return Reply(content=content)


def http_error(status: int, message: str = "stub error", retry_after: float | None = None
               ) -> Reply:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Reply(content=message, status=status, headers=headers)


class StubOpenAI:
    MODEL_STRING = MODEL_STRING

    def __init__(self, replies: Iterable[Reply] = (), *,
                 responder: Callable[[dict[str, Any]], Reply] | None = None) -> None:
        self.replies = list(replies)
        self.responder = responder
        self.requests: list[dict[str, Any]] = []  # chat completions requests
        self.paths: list[str] = []  # every POST's path, answered or not (404)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="stub-openai")

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def env(self) -> dict[str, str]:
        """Environment variables that point the openai client at this server."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": "sk-stub-not-a-real-key"}

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    @property
    def remaining(self) -> int:
        return len(self.replies)

    def __enter__(self) -> StubOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # -- serving ----------------------------------------------------------------------------
    def _next(self, body: dict[str, Any]) -> Reply | None:
        with self._lock:
            self.requests.append(body)
            if self.responder is not None:
                return self.responder(body)
            return self.replies.pop(0) if self.replies else None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                return None

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                stub.paths.append(self.path)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                reply = stub._next(body)
                if reply is not None and reply.delay:
                    time.sleep(reply.delay)  # outside the lock: this request's thread only
                if reply is None:
                    return self._send(500, {"error": {
                        "message": "the stub's script has no more replies", "type": "stub"}})
                if reply.status != 200:
                    return self._send(reply.status, {"error": {
                        "message": reply.content, "type": "stub_error",
                        "code": "rate_limit_exceeded" if reply.status == 429 else None}},
                        reply.headers)
                message: dict[str, Any] = {"role": "assistant", "content": reply.content}
                if reply.tool_calls:
                    message["tool_calls"] = reply.tool_calls
                self._send(200, {
                    "id": f"chatcmpl-{next(_ids)}", "object": "chat.completion",
                    "created": int(time.time()), "model": body.get("model", "stub-model"),
                    "choices": [{"index": 0, "message": message, "logprobs": None,
                                 "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
                    "usage": {"prompt_tokens": reply.prompt_tokens,
                              "completion_tokens": reply.completion_tokens,
                              "total_tokens": reply.prompt_tokens + reply.completion_tokens}})

            def _send(self, status: int, payload: dict[str, Any],
                      headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def messages_text(request: dict[str, Any]) -> str:
    """Every message content of one recorded request, as one string (for assertions)."""
    parts = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            parts += [str(item.get("text", item)) for item in content]
        elif content:
            parts.append(str(content))
        for call in message.get("tool_calls") or []:
            parts.append(call["function"]["arguments"])
    return "\n".join(parts)
