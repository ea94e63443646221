"""Team servers as real processes, for the tests and ``bench/team_load.py``: start
``nl2sql-mcp --transport http`` for a dbs.yaml, talk to it with a real MCP client and a bearer
token, and drive many users' mixed calls over several servers at once (``run_load``)."""

from __future__ import annotations

import asyncio
import queue
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_processes import NL2SQL_MCP, start_server  # noqa: F401 (for the team tests)


def stop_server(process: subprocess.Popen[str]) -> str:
    """Stop ``process`` (``start_server``'s) as a service manager would (SIGTERM) and return
    what it wrote on stderr after its URL."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    lines: queue.Queue[str] = process.log  # type: ignore[attr-defined]
    time.sleep(0.2)  # the reader thread drains the pipe
    return "".join(lines.get() for _ in range(lines.qsize()))


def client(url: str, token: str | None, **options: Any) -> Client:
    """A client of ``url`` with ``token``; ``options`` for ``Client`` (an elicitation
    callback)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)),
                  **options)


async def confirm(context: object, params: Any) -> Any:
    """An elicitation callback: the person behind the client accepts what they are shown (a
    curator confirming the proposal their model's ``saved_query_accept`` made)."""
    from mcp_types import ElicitResult

    return ElicitResult(action="accept", content={})


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def call(url: str, token: str, tool: str, **arguments: Any) -> tuple[bool, str]:
    """One tool call in a session of its own: (is_error, text)."""
    async with client(url, token) as session:
        result = await session.call_tool(tool, arguments)
        return bool(result.is_error), text_of(result)


def status(url: str, token: str | None) -> int:
    """The HTTP status of an ``initialize`` request with ``token``."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}}
    return httpx2.post(url, json=body, headers=headers, timeout=30).status_code


# -- load: many users, mixed calls, several servers -----------------------------------------

#: One user's calls cycle through these; ``refused`` ones ask for another group's database.
MIXED_CALLS: list[tuple[str, dict[str, Any], bool]] = [
    ("db_list", {}, False),
    ("db_execute_sql", {"db_id": "chinook", "query": "SELECT count(*) AS n FROM Track"}, False),
    ("db_show_schema", {"db_id": "chinook", "tables": ["Artist"]}, False),
    ("db_execute_sql", {"db_id": "chinook", "query":
                        "SELECT Name FROM Artist ORDER BY ArtistId LIMIT 5"}, False),
    ("saved_queries_list", {}, False),
    ("db_execute_sql", {"db_id": "bookstore", "query": "SELECT 1"}, True),
    ("db_search_schema", {"question": "Which artists have the most albums?",
                          "db_id": "chinook"}, False),
    ("db_get_row_by_id", {"db_id": "chinook", "table": "Artist", "row_id": 1}, False),
    ("db_execute_sql", {"db_id": "chinook", "query":
                        "SELECT g.Name, count(*) FROM Track t JOIN Genre g USING (GenreId) "
                        "GROUP BY 1 ORDER BY 2 DESC"}, False),
    ("db_list", {}, False),
]


@dataclass
class LoadResult:
    calls: int = 0
    refused: int = 0
    errors: list[str] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


async def run_load(urls: list[str], tokens: list[str], calls_per_user: int) -> LoadResult:
    """Each user (one token each) makes ``calls_per_user`` calls from ``MIXED_CALLS``, turn by
    turn over ``urls`` (a session on each server, no stickiness), all users at once."""
    result = LoadResult()

    async def user(token: str, offset: int) -> None:
        sessions = [client(url, token) for url in urls]
        opened = [await session.__aenter__() for session in sessions]
        try:
            for n in range(calls_per_user):
                tool, arguments, refused = MIXED_CALLS[(n + offset) % len(MIXED_CALLS)]
                session = opened[n % len(opened)]
                started = time.perf_counter()
                answer = await session.call_tool(tool, arguments)
                result.latencies_ms.append((time.perf_counter() - started) * 1000)
                result.calls += 1
                if bool(answer.is_error) != refused:
                    result.errors.append(f"{tool}: {text_of(answer)[:200]}")
                elif refused:
                    result.refused += 1
        finally:
            for session in reversed(sessions):
                await session.__aexit__(None, None, None)

    started = time.perf_counter()
    await asyncio.gather(*(user(token, n) for n, token in enumerate(tokens)))
    result.seconds = time.perf_counter() - started
    return result
