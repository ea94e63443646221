"""Streamable HTTP for ``nl2sql-mcp --transport http``.

- The URL is printed to stderr once the socket is bound (``--port 0`` prints the chosen port).
- A non-loopback ``--host`` needs a bearer token (``nl2sql.mcp.auth``); with one, every HTTP
  request must carry ``Authorization: Bearer <token>`` (401 otherwise). The token is never
  printed or logged.
- The SDK's DNS-rebinding protection (Host and Origin checks) stays on for every bind address:
  the SDK turns it on by itself only for loopback hosts, so the settings are always passed.
  Its ``host:*`` patterns match by prefix (``127.0.0.1:8000@evil.example`` passed) and it
  refused ``Host: localhost`` without a port, so ``HostCheck`` decides first: one Host header,
  exactly ``name[:digits]``, and at most one Origin, ``scheme://name[:digits]``, ``name`` one of
  the allowed names (loopback names, the bind host, ``--allowed-host``) in any case, with a
  DNS name's trailing dot, an IPv6 address in any spelling; it passes them on as the SDK's
  settings list them.
- The token (where it comes from, and its check on every request): ``nl2sql.mcp.auth``.
"""

from __future__ import annotations

import errno
import ipaddress
import re
import socket
import sys
from collections.abc import Callable
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from nl2sql.config.registry import ENV_AUTH_TOKEN
from nl2sql.errors import ConfigError, UsageError
from nl2sql.mcp.auth import App, BearerTokenMiddleware, Receive, Scope, Send, check_token_strength

MCP_PATH = "/mcp"
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    return host.strip("[]") in ("0.0.0.0", "::", "")


def netloc(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def check_http_settings(host: str, token: str | None, allowed_hosts: list[str], *,
                        users: bool = False) -> None:
    """Refuse what would expose the server: a non-loopback bind without a token (or users),
    a short token, or a wildcard bind without the host names clients use."""
    if not is_loopback(host) and not token and not users:
        raise ConfigError(f"--host {host} is reachable from other machines: pass "
                          f"--auth-token-file PATH (or set {ENV_AUTH_TOKEN}) so every request "
                          f"must carry the token, configure users (docs/team.md), or bind to "
                          f"127.0.0.1.")
    check_token_strength(token)
    unusable = [name for name in allowed_hosts if host_key(netloc(name)) is None]
    if unusable:
        raise ConfigError(f"--allowed-host {unusable[0]} is not a host name; give the name "
                          f"alone (no scheme, port or path), e.g. --allowed-host nl2sql.example.")
    if is_wildcard(host) and not allowed_hosts:
        raise ConfigError(f"--host {host} listens on every interface: name the host names "
                          f"clients use with --allowed-host (the DNS-rebinding protection "
                          f"checks each request's Host header against them).")


def allowed_names(host: str, allowed_hosts: list[str]) -> list[str]:
    """The host names a request may name, as ``host_key`` writes them: loopback names, the bind
    host (``127.0.0.2`` too) unless it is a wildcard, and ``allowed_hosts``."""
    names = [*_LOOPBACK_HOSTS, *([] if is_wildcard(host) else [netloc(host)]),
             *(netloc(name) for name in allowed_hosts)]
    keys = (host_key(name) for name in names)
    return list(dict.fromkeys(key for key in keys if key is not None))


def host_key(name: str) -> str | None:
    """``name`` as the Host check compares it: lower case, a DNS name without its one trailing
    dot (``localhost.`` is ``localhost``, fully qualified), an IPv6 address compressed in
    brackets (``[0:0::1]`` is ``[::1]``); None when it is no host name."""
    if name.startswith("[") or name.endswith("]"):
        if not (name.startswith("[") and name.endswith("]")):
            return None
        try:
            return f"[{ipaddress.IPv6Address(name[1:-1]).compressed}]"
        except ValueError:
            return None
    name = name.lower()
    if name.endswith(".") and not _is_ipv4(name[:-1]):
        name = name[:-1]
    if not name or name.startswith((".", "-")) or ".." in name:
        return None
    return name


def _is_ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def transport_security(host: str, allowed_hosts: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection on: loopback names, the bind host and ``allowed_hosts``, with and
    without a port (``HostCheck`` hands the SDK's check the headers as ``host_key`` writes
    them, so the two checks agree)."""
    names = allowed_names(host, allowed_hosts)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}{port}" for name in names for port in ("", ":*")],
        allowed_origins=[f"{scheme}://{name}{port}" for name in names
                         for scheme in ("http", "https") for port in ("", ":*")])


#: A Host header: ``name`` or ``name:port``, ``name`` an IPv6 address in brackets or letters,
#: digits, dots, hyphens and underscores (Docker's service names have them; no user part, path,
#: space or second colon).
_NETLOC = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?")
_ORIGIN = re.compile(r"(https?)://(.+)", re.IGNORECASE)


class HostCheck:
    """ASGI middleware: exactly one Host header, ``name`` or ``name:port``, and at most one
    Origin header, ``http(s)://name[:port]``, ``name`` an allowed name (421 / 403 otherwise, as
    the SDK answers). Names compare as ``host_key`` writes them (any case, ``localhost.``,
    ``[0:0:0:0:0:0:0:1]``), and go on to the app (and the SDK's own check) written that way."""

    def __init__(self, app: App, names: list[str]) -> None:
        self.app = app
        self._names = frozenset(names)

    def _netloc(self, value: bytes) -> str | None:
        match = _NETLOC.fullmatch(value.decode("latin-1"))
        key = host_key(match[1]) if match else None
        if key is None or key not in self._names:
            return None
        return f"{key}:{match[2]}" if match[2] else key  # type: ignore[index]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = list(scope.get("headers") or [])
            hosts = [value for name, value in headers if name == b"host"]
            origins = [value for name, value in headers if name == b"origin"]
            host = self._netloc(hosts[0]) if len(hosts) == 1 else None
            if host is None:
                await _plain(send, 421, b"Invalid Host header")
                return
            kept = [(name, value) for name, value in headers if name not in (b"host", b"origin")]
            kept.append((b"host", host.encode()))
            if origins:
                origin = _ORIGIN.fullmatch(origins[0].decode("latin-1"))
                netloc = self._netloc(origin[2].encode("latin-1")) if origin else None
                if len(origins) > 1 or netloc is None:
                    await _plain(send, 403, b"Invalid Origin header")
                    return
                kept.append((b"origin", f"{origin[1].lower()}://{netloc}".encode()))  # type: ignore[index]
            scope = {**scope, "headers": kept}
        await self.app(scope, receive, send)


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def serve_http(server: Any, *, host: str, port: int, token: str | None,
               allowed_hosts: list[str], log_level: str) -> None:
    """Run ``server`` (an ``MCPServer``) over streamable HTTP until interrupted."""
    users = server.settings.auth is not None  # the SDK checks each request's user token
    if users and token:
        raise UsageError(f"The server token (--auth-token, --auth-token-file or "
                         f"{ENV_AUTH_TOKEN}) is for a one-user server; with users, groups or "
                         f"oidc configured every request carries its user's own token: drop "
                         f"it.")
    check_http_settings(host, token, allowed_hosts, users=users)
    app: App = mcp_app(server, host=host, allowed_hosts=allowed_hosts)
    app = HostCheck(app, allowed_names(host, allowed_hosts))
    if token:
        app = BearerTokenMiddleware(app, token)
    note = " (user tokens required)" if users else " (bearer token required)" if token else ""

    def started(bound: int) -> None:
        print(f"nl2sql-mcp: MCP over streamable HTTP at http://{netloc(host)}:{bound}"
              f"{MCP_PATH}{note}", file=sys.stderr, flush=True)
        if getattr(server, "startup_note", None):
            print(server.startup_note, file=sys.stderr, flush=True)
        # No per-client handshake to wait for here: warm up once the port is open.
        warm_up = getattr(server, "on_initialized", None)
        if warm_up is not None:
            warm_up()

    run_app(app, host=host, port=port, log_level=log_level, started=started)


def mcp_app(server: Any, *, host: str, allowed_hosts: list[str]) -> App:
    """``server``'s streamable HTTP app (a Starlette app serving ``MCP_PATH``), with the
    DNS-rebinding settings for ``host`` and ``allowed_hosts``."""
    return server.streamable_http_app(  # type: ignore[no-any-return]
        streamable_http_path=MCP_PATH, host=host,
        transport_security=transport_security(host, allowed_hosts))


def run_app(app: App, *, host: str, port: int, log_level: str,
            started: Callable[[int], object]) -> None:
    """Serve the ASGI ``app`` with uvicorn on ``host:port`` until interrupted; ``started`` gets
    the bound port (``--port 0`` picks one) once the server accepts connections."""
    import anyio
    import uvicorn

    web = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level.lower()))
    listener = _listen(host, port)  # bound here: a busy port is one sentence, not uvicorn's exit

    interrupted: list[KeyboardInterrupt] = []

    async def serve() -> None:
        # uvicorn shuts down gracefully on SIGINT/SIGTERM, then raises the signal again for
        # the handler it found (cli/signals.py's). Where SIGINT is ignored (a background job)
        # that handler raises KeyboardInterrupt right here, inside the task group, which
        # asyncio then logged as a traceback: keep it, and raise it once the loop is done.
        try:
            await web.serve(sockets=[listener])
        except KeyboardInterrupt as exc:
            interrupted.append(exc)

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(serve)
            while not web.started:
                if web.should_exit:
                    return
                await anyio.sleep(0.05)
            started(web.servers[0].sockets[0].getsockname()[1] if web.servers else port)

    try:
        anyio.run(run)
    finally:
        listener.close()
    if interrupted:
        raise interrupted[0]


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
