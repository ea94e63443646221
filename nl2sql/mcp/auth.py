"""Who may call the MCP server over HTTP: the bearer token, where it comes from, and its check.

One token for the whole server, from (first found) ``--auth-token-file PATH``, ``--auth-token``
or ``NL2SQL_MCP_AUTH_TOKEN``. A token on the command line is visible to every user of the
machine in the process list (``ps``), so it is warned about; the file (mode 0600, as the
secrets key file) and the variable are not. ``load_token`` is the one place a token is read and
``BearerTokenMiddleware`` the one place a request's is checked: per-user tokens would extend
these two.
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

from nl2sql.config.registry import ENV_AUTH_TOKEN
from nl2sql.errors import ConfigError, UsageError

MIN_TOKEN_CHARS = 16

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
