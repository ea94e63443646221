"""What a person does besides asking: sign in and out, accept or propose an answer, reject a
proposal, download a result's whole CSV.

Accepting and rejecting answer JSON (``{answer, status, html}``: the page puts ``html`` where
the buttons were). Accepting goes through ``verified_answers.accept_answer`` as a person's
accept: a curator of the database (``can(caller, "curate", db_id)``) makes a verified answer,
anyone else a proposal that a curator then accepts or rejects on the Proposals page.
"""

from __future__ import annotations

import functools
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from nl2sql._worker import run_in_worker
from nl2sql.errors import WorkspacePathError
from nl2sql.operations.ops_context import OpsContext
from nl2sql.operations.recorded import recorded
from nl2sql.operations.verified_answers import accept_answer, reject_proposal
from nl2sql.web.auth import COOKIE, COOKIE_SECONDS
from nl2sql.web.context import REFUSED, signed_in, web_of
from nl2sql.web.render import SignInNeeded, error_response, render, respond
from nl2sql.web.views import answer_status
from nl2sql.workspace.results import CSV_SUFFIX, read_metadata_for_csv, resolve_workspace_path


async def sign_in_form(request: Request) -> Response:
    web = web_of(request)
    if not web.auth.needs_sign_in:
        return RedirectResponse("/", status_code=303)
    return respond(request, "signin.html", {"error": None}, page=web.page(None))


async def sign_in(request: Request) -> Response:
    """Check the token of the form and keep it in the session cookie; 401 when it names
    nobody."""
    web = web_of(request)
    token = str((await request.form()).get("token") or "").strip()
    caller = await run_in_worker(web.auth.caller, token, name="checking a token") \
        if token else None
    if caller is None:
        return error_response(request, SignInNeeded(REFUSED), page=web.page(None))
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(COOKIE, token, max_age=COOKIE_SECONDS, httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")
    return response


async def sign_out(request: Request) -> Response:
    response = RedirectResponse("/signin", status_code=303)
    response.delete_cookie(COOKIE, httponly=True, samesite="strict")
    return response


def _decided(ops: OpsContext, tool: str, decide: Any) -> dict[str, Any]:
    with recorded(ops, tool) as record:
        decided = decide()
        record.note(decided)
    return {"answer": decided.model_dump(mode="json"),
            "status": answer_status(ops, decided.db_id, decided.id)}


@signed_in
async def accept(request: Request, ops: OpsContext) -> Response:
    """Accept (a curator: verified) or propose (anyone else) the answer or proposal."""
    answer_id = request.path_params["answer_id"]
    data = await run_in_worker(functools.partial(
        _decided, ops, "accept", lambda: accept_answer(ops, answer_id, curator=True)),
        name="web accept")
    data["html"] = render("_status.html", status=data["status"])
    return JSONResponse(data)


@signed_in
async def reject(request: Request, ops: OpsContext) -> Response:
    """A curator rejects a proposal."""
    proposal_id = request.path_params["answer_id"]
    data = await run_in_worker(functools.partial(
        _decided, ops, "reject", lambda: reject_proposal(ops, proposal_id)), name="web reject")
    data["html"] = render("_status.html", status=data["status"])
    return JSONResponse(data)


@signed_in
async def download(request: Request, ops: OpsContext) -> Response:
    """A result's whole CSV, from the caller's own workspace."""
    csv_file = request.path_params["csv_file"]
    if not csv_file.endswith(CSV_SUFFIX):
        raise WorkspacePathError(f"Only result files (.csv) can be downloaded, not {csv_file}.")

    def find() -> Any:
        path = resolve_workspace_path(ops.workspace, csv_file, must_exist=True)
        metadata = read_metadata_for_csv(path, ops.workspace)
        with recorded(ops, "csv_download", db_id=metadata.db_id if metadata else None,
                      sql=metadata.sql_query if metadata else None) as record:
            record.row_count = metadata.row_count if metadata else None
        return path

    path = await run_in_worker(find, name="web download")
    return FileResponse(path, media_type="text/csv; charset=utf-8", filename=path.name)


def routes() -> list[Route]:
    return [Route("/signin", sign_in_form, methods=["GET"]),
            Route("/signin", sign_in, methods=["POST"]),
            Route("/signout", sign_out, methods=["POST"]),
            Route("/answers/{answer_id}/accept", accept, methods=["POST"]),
            Route("/answers/{answer_id}/reject", reject, methods=["POST"]),
            Route("/download/{csv_file:path}", download, methods=["GET"])]
