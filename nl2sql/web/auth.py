"""Who is using the page, checked on every request.

A person signs in once with their token (``nl2sql-secrets add-user``) or an identity
provider's JWT in the ``Token`` field; the page keeps it in an HttpOnly, ``SameSite=Strict``
cookie (script cannot read it, other sites cannot send it) and checks it again on every
request with the same ``Authenticator`` the MCP endpoint uses, so a removed user or an expired
JWT is refused at once. Scripts and the JSON twins may send ``Authorization: Bearer <token>``
instead. Like ``nl2sql-mcp --transport http``: without users, groups or ``oidc:`` the page is a
one-user page for the account running it (full access), behind the server token when one is
given (``--auth-token-file``), else open on loopback only.
"""

from __future__ import annotations

import hmac

from starlette.requests import Request

from nl2sql.access.authenticate import Authenticator
from nl2sql.access.caller import Caller, os_caller
from nl2sql.operations.ops_context import OpsContext

#: The cookie holding the signed-in person's token.
COOKIE = "nl2sql_token"
#: How long the browser keeps the cookie; the token itself is checked on every request.
COOKIE_SECONDS = 12 * 3600


class WebAuth:
    """Names the caller of a request's token: a user (users, groups or ``oidc:`` configured),
    or the account running the server (a one-user page, with or without the server token)."""

    def __init__(self, ops: OpsContext, server_token: str | None) -> None:
        self.authenticator = Authenticator(ops.configs, ops.store)
        self.users = self.authenticator.required
        self.server_token = server_token

    @property
    def needs_sign_in(self) -> bool:
        return self.users or self.server_token is not None

    @property
    def oidc(self) -> bool:
        return self.authenticator.configs.server.oidc is not None

    def caller(self, token: str | None) -> Caller | None:
        """The caller ``token`` names, or None (blocking: a store lookup or the JWKS)."""
        if not self.needs_sign_in:
            return os_caller()
        if not token:
            return None
        if self.users:
            return self.authenticator.caller(token)
        assert self.server_token is not None
        return os_caller() if hmac.compare_digest(token.encode(),
                                                  self.server_token.encode()) else None


def request_token(request: Request) -> str | None:
    """The token a request carries: ``Authorization: Bearer`` first, else the cookie."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.cookies.get(COOKIE) or None
