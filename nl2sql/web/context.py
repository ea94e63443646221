"""What every request of the page works with: the server's ``OpsContext``, the sign-in check,
the model, and the caller's view (``OpsContext.for_caller(caller, "web")``) each endpoint runs
on, so the same ``can()``, results folder and audit apply as in the other faces."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from nl2sql._worker import run_in_worker
from nl2sql.access.caller import Caller
from nl2sql.llm.providers import no_model_error
from nl2sql.operations.ops_context import OpsContext
from nl2sql.web.auth import WebAuth, request_token
from nl2sql.web.render import SignInNeeded, error_response

FACE = "web"
NO_TOKEN = ("Sign in with your token (your administrator makes one with nl2sql-secrets "
            "add-user).")
REFUSED = ("That token was refused: it is wrong, expired, or its user was removed; sign in "
           "with a current token.")

Handler = Callable[[Request, OpsContext], Awaitable[Response]]


@dataclass
class Web:
    """The page's server-wide state (``request.app.state.web``)."""

    ops: OpsContext
    auth: WebAuth
    model: Any = None  # a pydantic-ai model or model string; None: the configured one

    @property
    def model_configured(self) -> bool:
        configs = self.ops.configs
        return bool(self.model or configs.model or configs.agent.models)

    async def caller(self, request: Request) -> Caller:
        """The request's caller (401 ``SignInNeeded`` without one)."""
        token = request_token(request)
        if token is None and self.auth.needs_sign_in:
            raise SignInNeeded(NO_TOKEN)
        caller = await run_in_worker(self.auth.caller, token, name="checking a token")
        if caller is None:
            raise SignInNeeded(REFUSED)
        return caller

    def page(self, ops: OpsContext | None) -> dict[str, Any]:
        """What every page shows: who is signed in, whether a model answers questions."""
        caller = ops.caller if ops is not None else None
        return {"user": caller.name if caller else None,
                "groups": list(caller.groups) if caller else [],
                "can_sign_out": self.auth.needs_sign_in, "oidc": self.auth.oidc,
                "model": self.model_configured,
                "model_hint": None if self.model_configured else str(no_model_error())}


def web_of(request: Request) -> Web:
    return request.app.state.web  # type: ignore[no-any-return]


def signed_in(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint run on the caller's view; a refused sign-in or any error answers through
    ``render.error_response`` (the one error shape)."""

    @functools.wraps(handler)
    async def endpoint(request: Request) -> Response:
        web = web_of(request)
        ops = None
        try:
            ops = web.ops.for_caller(await web.caller(request), FACE)
            return await handler(request, ops)
        except Exception as exc:  # noqa: BLE001 - the page's edge: one shape for all
            return error_response(request, exc, page=web.page(ops), ops=ops)

    return endpoint
