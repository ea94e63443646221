"""Streamable HTTP for ``nl2sql-mcp --transport http``.

- The URL is printed to stderr once the socket is bound (``--port 0`` prints the chosen port).
- A non-loopback ``--host`` needs a bearer token (``--auth-token`` or ``NL2SQL_MCP_AUTH_TOKEN``);
  with one, every HTTP request must carry ``Authorization: Bearer <token>`` (401 otherwise,
  compared in constant time). The token is never printed or logged.
- The SDK's DNS-rebinding protection (Host and Origin checks) stays on for every bind address:
  the SDK turns it on by itself only for loopback hosts, so the settings are always passed.
  Its ``host:*`` patterns match by prefix (``127.0.0.1:8000@evil.example`` passed), so
  ``HostCheck`` first requires an exact ``name[:digits]`` Host and ``scheme://name[:digits]``
  Origin, ``name`` one of the allowed names (loopback names, the bind host, ``--allowed-host``).
- The ``Bearer`` scheme name is case-insensitive (RFC 9110, section 11.1).
"""

from __future__ import annotations

import errno
import functools
import hmac
import ipaddress
import json
import re
import socket
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from nl2sql.config.registry import ENV_AUTH_TOKEN
from nl2sql.errors import ConfigError, UsageError

MCP_PATH = "/mcp"
MIN_TOKEN_CHARS = 16
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    return host.strip("[]") in ("0.0.0.0", "::", "")


def _netloc(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def check_http_settings(host: str, token: str | None, allowed_hosts: list[str]) -> None:
    """Refuse what would expose the server: a non-loopback bind without a token, a short
    token, or a wildcard bind without the host names clients use."""
    if not is_loopback(host) and not token:
        raise ConfigError(f"--host {host} is reachable from other machines: pass --auth-token "
                          f"(or set {ENV_AUTH_TOKEN}) so every request must carry it, or bind "
                          f"to 127.0.0.1.")
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"The auth token is shorter than {MIN_TOKEN_CHARS} characters; make "
                          f"one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'")
    if is_wildcard(host) and not allowed_hosts:
        raise ConfigError(f"--host {host} listens on every interface: name the host names "
                          f"clients use with --allowed-host (the DNS-rebinding protection "
                          f"checks each request's Host header against them).")


def allowed_names(host: str, allowed_hosts: list[str]) -> list[str]:
    """The host names a request may name: loopback names, the bind host (``127.0.0.2`` too)
    unless it is a wildcard, and ``allowed_hosts``; IPv6 addresses in brackets."""
    names = list(_LOOPBACK_HOSTS)
    if not is_wildcard(host) and _netloc(host) not in names:
        names.append(_netloc(host))
    names += [_netloc(name) for name in allowed_hosts]
    return names


def transport_security(host: str, allowed_hosts: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection on: loopback names, the bind host and ``allowed_hosts``."""
    names = allowed_names(host, allowed_hosts)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names] + list(allowed_hosts),
        allowed_origins=[f"{scheme}://{name}:*" for name in names
                         for scheme in ("http", "https")])


class BearerTokenMiddleware:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` (the scheme
    name in any case)."""

    def __init__(self, app: App, token: str) -> None:
        self.app = app
        self._expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, credentials = given.partition(b" ")
            if not (scheme.lower() == b"bearer"
                    and hmac.compare_digest(credentials.strip(b" "), self._expected)):
                await _unauthorized(send)
                return
        await self.app(scope, receive, send)


class HostCheck:
    """ASGI middleware: the Host header is exactly ``name`` or ``name:port`` and an Origin
    header, when sent, exactly ``http(s)://name[:port]``, ``name`` an allowed name (421 / 403
    otherwise, as the SDK answers)."""

    def __init__(self, app: App, names: list[str]) -> None:
        self.app = app
        alternatives = "|".join(re.escape(name) for name in names)
        self._host = re.compile(rf"(?:{alternatives})(?::\d{{1,5}})?", re.IGNORECASE)
        self._origin = re.compile(rf"https?://(?:{alternatives})(?::\d{{1,5}})?", re.IGNORECASE)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            host = headers.get(b"host", b"").decode("latin-1")
            origin = headers.get(b"origin")
            if not self._host.fullmatch(host):
                await _plain(send, 421, b"Invalid Host header")
                return
            if origin is not None and not self._origin.fullmatch(origin.decode("latin-1")):
                await _plain(send, 403, b"Invalid Origin header")
                return
        await self.app(scope, receive, send)


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _unauthorized(send: Send) -> None:
    body = json.dumps({"error": "unauthorized", "error_description":
                       "Send the server's token as 'Authorization: Bearer <token>'."}).encode()
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="nl2sql-mcp"'),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def serve_http(server: Any, *, host: str, port: int, token: str | None,
               allowed_hosts: list[str], log_level: str) -> None:
    """Run ``server`` (an ``MCPServer``) over streamable HTTP until interrupted."""
    import anyio
    import uvicorn

    check_http_settings(host, token, allowed_hosts)
    app: App = server.streamable_http_app(
        streamable_http_path=MCP_PATH, host=host,
        transport_security=transport_security(host, allowed_hosts))
    app = HostCheck(app, allowed_names(host, allowed_hosts))
    if token:
        app = BearerTokenMiddleware(app, token)
    web = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level.lower()))
    listener = _listen(host, port)  # bound here: a busy port is one sentence, not uvicorn's exit

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(functools.partial(web.serve, sockets=[listener]))
            while not web.started:
                if web.should_exit:
                    return
                await anyio.sleep(0.05)
            bound = web.servers[0].sockets[0].getsockname()[1] if web.servers else port
            note = " (bearer token required)" if token else ""
            print(f"nl2sql-mcp: MCP over streamable HTTP at http://{_netloc(host)}:{bound}"
                  f"{MCP_PATH}{note}", file=sys.stderr, flush=True)
            if getattr(server, "startup_note", None):
                print(server.startup_note, file=sys.stderr, flush=True)
            # No per-client handshake to wait for here: warm up once the port is open.
            warm_up = getattr(server, "on_initialized", None)
            if warm_up is not None:
                warm_up()

    try:
        anyio.run(run)
    finally:
        listener.close()


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket for ``host:port``; a port in use (or a host that is not this
    machine's) is a ``UsageError`` naming the option to change."""
    try:
        return socket.create_server((host, port), family=_family(host), backlog=2048)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(f"Port {port} on {host} is already in use; choose another with "
                             f"--port N (or --port 0 for any free port).") from None
        raise UsageError(f"Cannot listen on {host}:{port} ({exc.strerror or exc}); choose "
                         f"another --host or --port.") from None


def _family(host: str) -> socket.AddressFamily:
    try:
        return socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    except ValueError:  # a host name: its first address decides
        return socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)[0][0]
