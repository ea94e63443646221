"""Who may call the MCP server over HTTP: one token for a one-user server, or each user's own.

One-user server: one token for the whole server, from (first found) ``--auth-token-file PATH``,
``--auth-token`` or ``NL2SQL_MCP_AUTH_TOKEN``. A token on the command line is visible to every
user of the machine in the process list (``ps``), so it is warned about; the file (mode 0600, as
the secrets key file) and the variable are not. ``load_token`` is the one place a token is read
and ``BearerTokenMiddleware`` the one place a request's is checked.

Team server (users, or ``server:`` groups or ``oidc:`` in dbs.yaml): the MCP SDK's own
bearer-token support (``AuthSettings`` and a ``TokenVerifier``, ``http_auth``) checks each
request's token against nl2sql's users and identity provider (``nl2sql.access``): a user's own
token (looked up by its hash) or the provider's JWT. The SDK's middleware answers 401 to a
request without one, or with a wrong or expired one, and puts the ``CallerToken`` on the
request; ``nl2sql.mcp.callers`` reads it for every tool call, resource read and prompt. With
``oidc: resource_url`` the server also publishes OAuth protected resource metadata (RFC 9728)
naming the identity provider, so OAuth clients find where to sign in.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import stat
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from nl2sql.access.authenticate import Authenticator
from nl2sql.access.caller import Caller
from nl2sql.config.registry import ENV_AUTH_TOKEN
from nl2sql.errors import ConfigError, UsageError
from nl2sql._worker import run_in_worker
from nl2sql.mcp.callers import CallerToken
from nl2sql.operations.ops_context import OpsContext

MIN_TOKEN_CHARS = 16
#: ``AuthSettings`` wants an authorization server; without ``oidc:`` there is none (user tokens
#: are nl2sql's own), and no route or header uses this name.
_NO_AUTHORIZATION_SERVER = "https://nl2sql.invalid"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger(__name__)


def load_token(*, flag: str | None, file: str | None) -> str | None:
    """The server's token: ``--auth-token-file``'s content, else ``--auth-token`` (warned
    about: ``ps`` shows it), else ``$NL2SQL_MCP_AUTH_TOKEN``; None when none is set."""
    if flag is not None and file is not None:
        raise UsageError("Pass either --auth-token-file or --auth-token, not both.")
    if file is not None:
        return _read_token_file(Path(file).expanduser())
    if flag is not None:
        logger.warning("--auth-token is visible to every user of this machine in the process "
                       "list; use --auth-token-file PATH (mode 0600) or %s instead.",
                       ENV_AUTH_TOKEN)
        return flag or None
    return os.environ.get(ENV_AUTH_TOKEN) or None


def _read_token_file(path: Path) -> str:
    """The token in ``path``: its text without surrounding whitespace (a trailing newline)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise UsageError(f"Cannot read the auth token file {path} ({reason}); write the token "
                         f"into it (one line) or pass another --auth-token-file.") from None
    if mode & 0o077:
        raise UsageError(f"The auth token file {path} is readable by group/others (mode "
                         f"{mode:04o}); run: chmod 600 {path}")
    token = text.strip()
    if not token or any(c.isspace() for c in token):
        raise UsageError(f"The auth token file {path} must hold the token alone on one line.")
    return token


def check_token_strength(token: str | None) -> None:
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"The auth token is shorter than {MIN_TOKEN_CHARS} characters; make "
                          f"one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'")


class BearerTokenMiddleware:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` (the scheme
    name in any case, RFC 9110 section 11.1; compared in constant time)."""

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


async def _unauthorized(send: Send) -> None:
    body = json.dumps({"error": "unauthorized", "error_description":
                       "Send the server's token as 'Authorization: Bearer <token>'."}).encode()
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="nl2sql-mcp"'),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class CallerTokenVerifier:
    """``TokenVerifier``: a bearer token -> the caller it names (checked in a worker thread:
    a user token is a store lookup, a JWT may need the provider's keys fetched)."""

    def __init__(self, identify: Callable[[str], Caller | None]) -> None:
        self._identify = identify

    async def verify_token(self, token: str) -> AccessToken | None:
        caller = await run_in_worker(self._identify, token, name="checking a bearer token")
        if caller is None:
            return None
        # The token itself is not kept on the request.
        return CallerToken(token="", client_id=caller.name, subject=caller.name, scopes=[],
                           caller=caller)


def http_auth(ops: OpsContext) -> tuple[CallerTokenVerifier, AuthSettings] | None:
    """The verifier and settings for a team server, or None for a one-user server (no users,
    no groups, no identity provider: one token, or none on loopback)."""
    authenticator = Authenticator(ops.configs, ops.store)
    if not authenticator.required:
        return None
    oidc = ops.configs.server.oidc
    settings = AuthSettings(
        issuer_url=oidc.issuer if oidc else _NO_AUTHORIZATION_SERVER,  # type: ignore[arg-type]
        resource_server_url=oidc.resource_url if oidc else None,  # type: ignore[arg-type]
        validate_token_resource=False,  # the audience is checked with the signature
        required_scopes=[])
    return CallerTokenVerifier(authenticator.caller), settings
