"""How the page answers: a Jinja template for a person, the same data as JSON for a program
(each page's ``.json`` twin, datasette's idea), and every error in one shape, rendered here
only: ``{"error": sentence, "status": code}`` (a sentence saying what to do next; never a
traceback: anything unexpected is "internal error, see the log", the details logged)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from nl2sql.access.disclosure import shown_to
from nl2sql.agents.conversations import ConversationNotFoundError
from nl2sql.errors import (AccessDeniedError, Nl2SqlError, UnknownDatabaseError,
                           UnknownTableError, VerifiedAnswerError, WorkspaceFileError,
                           WorkspacePathError, as_one_sentence)

if TYPE_CHECKING:
    from nl2sql.operations.ops_context import OpsContext

TEMPLATES = Environment(loader=PackageLoader("nl2sql.web", "templates"),
                        autoescape=select_autoescape(["html"]), trim_blocks=True,
                        lstrip_blocks=True)
TEMPLATES.filters["tojson_compact"] = lambda value: json.dumps(value, separators=(",", ":"))


def when(value: str | datetime | None) -> Markup | str:
    """A stored instant for people: ``2026-11-28 06:18 UTC`` in a ``<time>`` element that keeps
    the exact ISO text (``2026-11-28T06:18:30.485819Z``) for programs; text that is not an
    ISO instant as it is."""
    if not value:
        return ""
    try:
        instant = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    if instant.tzinfo is not None:
        instant = instant.astimezone(timezone.utc)
    return Markup('<time datetime="{}">{} UTC</time>').format(
        instant.isoformat(), instant.strftime("%Y-%m-%d %H:%M"))


TEMPLATES.filters["when"] = when
#: An error's HTTP status by its kind (others: 400, the request can be changed).
_STATUS: list[tuple[type[Nl2SqlError], int]] = [
    (AccessDeniedError, 403), (UnknownDatabaseError, 404), (ConversationNotFoundError, 404),
    (UnknownTableError, 404), (WorkspacePathError, 404), (WorkspaceFileError, 404),
    (VerifiedAnswerError, 404)]


class SignInNeeded(Exception):
    """The request carries no token, or one that names nobody (401)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def wants_json(request: Request) -> bool:
    """A ``.json`` path, or a script that asked for JSON (``Accept: application/json``)."""
    accept = request.headers.get("accept", "")
    return request.url.path.endswith(".json") or (
        "application/json" in accept and "text/html" not in accept)


def render(template: str, **context: Any) -> str:
    return TEMPLATES.get_template(template).render(**context)


def respond(request: Request, template: str, data: dict[str, Any], *, status: int = 200,
            page: dict[str, Any] | None = None) -> Response:
    """``data`` as JSON for a ``.json`` request, else the template with ``data`` and ``page``
    (what every page shows: who is signed in, the navigation)."""
    if wants_json(request):
        return JSONResponse(data, status_code=status)
    return HTMLResponse(render(template, **data, page=page or {}), status_code=status)


def status_of(error: Nl2SqlError) -> int:
    return next((status for kind, status in _STATUS if isinstance(error, kind)), 400)


def error_response(request: Request, exc: BaseException, *,
                   page: dict[str, Any] | None = None, ops: OpsContext | None = None) -> Response:
    """The one rendering of an error: JSON ``{error, status}`` or the error page; as ``ops``'
    caller may read it (no server path for a configured user)."""
    if isinstance(exc, SignInNeeded):
        status, message = 401, exc.message
    else:
        error = as_one_sentence(exc, f"web {request.url.path}")
        status = 500 if error is not exc else status_of(error)
        message = shown_to(ops, str(error))
    if wants_json(request):
        return JSONResponse({"error": message, "status": status}, status_code=status)
    template = "signin.html" if status == 401 else "error.html"
    return HTMLResponse(render(template, error=message, status=status, page=page or {}),
                        status_code=status)


def twin_routes(path: str, endpoint: Callable[..., Any],
                methods: Sequence[str] = ("GET",)) -> list[Route]:
    """The page at ``path`` and its JSON twin (``path.json``; ``/index.json`` for ``/``); the
    twin first, so that ``/schema/{db_id}`` does not take ``/schema/chinook.json``."""
    twin = "/index.json" if path == "/" else f"{path}.json"
    return [Route(twin, endpoint, methods=list(methods)),
            Route(path, endpoint, methods=list(methods))]
