"""Who each MCP request is made for, and the ``OpsContext`` view it runs through.

``Nl2SqlServer`` wraps every tool call, resource read and prompt in ``acting``: the caller is
the request's authenticated user when the HTTP server checks user tokens or JWTs (the SDK's
bearer middleware put a ``CallerToken`` on the request), otherwise the server's own caller
(over stdio the OS account, ``nl2sql.access.local_caller``; a one-user HTTP server its OS
account). Tools, resources and prompts then run on ``request_ops()``: the registry that caller
sees, their results folder, their name for the database and the audit. There is no fallback
to the whole registry: a request that reached a face without ``acting`` is an internal error.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from mcp.server.auth.provider import AccessToken
from pydantic import ConfigDict

from nl2sql.access.caller import Caller
from nl2sql.access.disclosure import shown_to
from nl2sql.errors import InternalError
from nl2sql.operations.ops_context import OpsContext

_VIEW: ContextVar[OpsContext | None] = ContextVar("nl2sql_mcp_request_view", default=None)


class CallerToken(AccessToken):
    """The SDK's access token with the caller it names (``nl2sql.mcp.auth``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    caller: Caller


def authenticated_caller(context: Any) -> Caller | None:
    """The caller the request's bearer token named, or None (no token checked: stdio, or an
    HTTP server without users)."""
    try:
        request = context.request_context.request
    except (AttributeError, ValueError, LookupError):  # no request context (a direct call)
        return None
    user = request.scope.get("user") if request is not None and hasattr(request, "scope") \
        else None
    token = getattr(user, "access_token", None)
    return token.caller if isinstance(token, CallerToken) else None


@contextmanager
def acting(ops_context: OpsContext, caller: Caller, face: str) -> Iterator[OpsContext]:
    """Within the block, ``request_ops()`` is ``caller``'s view of ``ops_context``."""
    view = ops_context.for_caller(caller, face)
    token = _VIEW.set(view)
    try:
        yield view
    finally:
        _VIEW.reset(token)


def caller_message(error: BaseException) -> str:
    """``error``'s sentence as the current request's caller may read it (a configured user
    is not shown the server's paths: ``nl2sql.access.disclosure``)."""
    return shown_to(_VIEW.get(), str(error))


def request_ops() -> OpsContext:
    """The current request's view (set by ``acting``)."""
    view = _VIEW.get()
    if view is None:
        raise InternalError("internal error: an MCP request ran without a caller; see the log.")
    return view
