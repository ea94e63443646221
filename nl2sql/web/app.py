"""``build_app``: the page and, in the same process, the MCP endpoint at ``/mcp`` with the same
users (one ``OpsContext``: the same connections, caches, store and audit trail).

The page's routes (``pages``, ``streams``, ``actions``) and its static files sit beside the MCP
server's streamable HTTP app, whose lifespan (the session manager) runs inside the page's. The
Host/Origin check of ``nl2sql-mcp --transport http`` (``HostCheck``, DNS rebinding) guards every
request, and every page is sent with a Content-Security-Policy that lets it load and call
nothing but this server (every asset is nl2sql's own: no CDN).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from nl2sql.config.registry import ENV_AUTH_TOKEN
from nl2sql.errors import UsageError
from nl2sql.mcp.auth import App, BearerTokenMiddleware, Receive, Scope, Send
from nl2sql.mcp.http import MCP_PATH, HostCheck, allowed_names, check_http_settings, mcp_app
from nl2sql.mcp.server import build_server
from nl2sql.operations.first_use import prepare_context_engine
from nl2sql.web import actions, pages, streams
from nl2sql.web.auth import WebAuth
from nl2sql.web.context import Web

STATIC = Path(__file__).with_name("static")
#: Everything a page loads or calls is this server's; images may be data: URLs (the charts).
_POLICY = ("default-src 'self'; img-src 'self' data:; script-src 'self'; style-src 'self'; "
           "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
_HEADERS = [(b"content-security-policy", _POLICY.encode()),
            (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin")]


def build_app(config_path: str | Path | None = None, *, data_dir: str | Path | None = None,
              workspace: str | Path | None = None, host: str = "127.0.0.1",
              allowed_hosts: list[str] | None = None, server_token: str | None = None,
              model: Any = None, log_level: str = "WARNING") -> App:
    """The ASGI app of ``nl2sql-web`` for the registry at ``config_path``. ``server_token``:
    a one-user server's token (``--auth-token-file``); ``model``: a pydantic-ai model or
    model string instead of the configured one."""
    allowed = list(allowed_hosts or [])
    server = build_server(config_path, data_dir=data_dir, workspace=workspace,
                          log_level=log_level.upper(), transport="http")  # type: ignore[arg-type]
    ops = server.ops_context
    assert ops is not None
    users = server.settings.auth is not None
    if users and server_token:
        raise UsageError(f"The server token (--auth-token-file or {ENV_AUTH_TOKEN}) is for a "
                         f"one-user server; with users, groups or oidc configured each person "
                         f"signs in with their own token: drop it.")
    check_http_settings(host, server_token, allowed, users=users)
    mcp_starlette = mcp_app(server, host=host, allowed_hosts=allowed)
    mcp: App = BearerTokenMiddleware(mcp_starlette, server_token) if server_token \
        else mcp_starlette

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with mcp_starlette.router.lifespan_context(mcp_starlette):
            server.on_initialized()  # the warm-up: imports in a thread once serving
            # The page asks questions: load the context engine too (under first_use's lock,
            # so a question that arrives meanwhile waits for it instead of importing alongside).
            threading.Thread(target=prepare_context_engine, name="nl2sql-warm-up-context",
                             daemon=True).start()
            yield

    app = Starlette(
        routes=[Route(MCP_PATH, mcp), Route("/.well-known/{rest:path}", mcp),
                Mount("/static", StaticFiles(directory=STATIC), name="static"),
                *actions.routes(), *streams.routes(), *pages.routes()],
        lifespan=lifespan)
    app.state.web = Web(ops=ops, auth=WebAuth(ops, server_token), model=model)
    return HostCheck(SecurityHeaders(app), allowed_names(host, allowed))


class SecurityHeaders:
    """ASGI middleware: the page's security headers on every response but the MCP
    endpoint's."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path", "").startswith(MCP_PATH):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *_HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)
