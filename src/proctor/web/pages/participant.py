"""The participant's pages: the challenges, a challenge, its boards, submitting, a submission.

The pages call the same services as the REST routes with the same principal, so they show
exactly what the API would (a board a caller may not read is listed without a link; another
team's submission is "not found"). Pages are not part of the OpenAPI schema.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from proctor.errors import ProctorError
from proctor.services.platform import overview, publications, standings, submissions
from proctor.services.platform.accounts import Principal
from proctor.web import csrf
from proctor.web.deps import PlatformDep
from proctor.web.pages.common import (
    CsrfField,
    TokenCookie,
    act,
    error_page,
    principal_of,
    render,
    signed_in,
)
from proctor.web.uploads import MinimumRate, read_upload

REFRESH_S = 2
"""Seconds between reloads of a submission's page while it is queued or running."""

router = APIRouter(include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
def home(request: Request, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """The installed challenges."""
    principal = principal_of(platform, token)
    return render(request, "home.html", principal, challenges=overview.challenge_list(platform))


@router.get("/challenges/{name}", response_class=HTMLResponse)
def challenge_page(
    name: str, request: Request, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """A challenge: its phases, their boards, the submission form and the team's submissions."""
    principal = principal_of(platform, token)
    try:
        shown = overview.challenge_overview(platform, principal, name)
        mine = submissions.listing(platform, principal, name) if principal else []
    except ProctorError as error:
        return error_page(request, principal, error)
    return render(request, "challenge.html", principal, challenge=shown, submissions=mine)


@router.get("/challenges/{name}/leaderboards/{board}", response_class=HTMLResponse)
def board_page(  # noqa: PLR0917 - FastAPI maps parameters to the request
    name: str,
    board: str,
    request: Request,
    platform: PlatformDep,
    phase: str | None = None,
    token: TokenCookie = None,
) -> Response:
    """One leaderboard as a table (the same rows as the REST board)."""
    principal = principal_of(platform, token)
    try:
        shown = standings.leaderboard(platform, principal, name, phase or None, board)
    except ProctorError as error:
        return error_page(request, principal, error)
    columns = _columns(shown["rows"])
    return render(request, "board.html", principal, board=shown, columns=columns)


def _columns(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(task, metric) pairs of the board's score columns, in first-seen order."""
    seen: dict[tuple[str, str], None] = {}
    for row in rows:
        for task, metrics in row["scores"].items():
            for metric in metrics:
                seen[(task, metric)] = None
    return list(seen)


@router.post("/challenges/{name}/submit", response_class=HTMLResponse)
async def submit_page(
    name: str, request: Request, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """Take the form's entry archive and show its submission's page."""
    principal = await run_in_threadpool(principal_of, platform, token)
    try:
        csrf.check_origin(request)  # before the body is read
        member = signed_in(principal)
        await run_in_threadpool(submissions.check_submitter, platform, member, name)
        settings = platform.settings
        async with read_upload(
            request, "entry", settings.upload_bytes, MinimumRate.of(settings)
        ) as upload:
            csrf.check_form(request, upload.fields.get(csrf.FIELD))
            phase = upload.fields.get("phase") or None
            receipt = await run_in_threadpool(
                submissions.submit, platform, member, name, phase, upload.file
            )
    except ProctorError as error:
        return error_page(request, principal, error)
    return RedirectResponse(f"/submissions/{quote(receipt.submission)}", status_code=303)


@router.get("/submissions/{sid}", response_class=HTMLResponse)
def submission_page(
    sid: str, request: Request, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """A submission's status, stage and queue position, then its disclosed report."""
    principal = principal_of(platform, token)
    try:
        shown = submissions.status(platform, signed_in(principal), sid)
    except ProctorError as error:
        return error_page(request, principal, error)
    waiting = shown["status"] in ("queued", "running")
    chosen = None
    if shown["status"] == "scored":
        chosen = publications.choices(platform, signed_in(principal), sid)
    return render(
        request,
        "submission.html",
        principal,
        s=shown,
        chosen=chosen,
        refresh=REFRESH_S if waiting else None,
    )


@router.post("/submissions/{sid}/cancel", response_class=HTMLResponse)
def cancel_page(
    sid: str,
    request: Request,
    platform: PlatformDep,
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Cancel the submission, then show its page again."""
    return act(
        request, platform, token, lambda me: submissions.cancel(platform, me, sid), sid, sent=sent
    )


@router.post("/submissions/{sid}/publish", response_class=HTMLResponse)
def publish_page(  # noqa: PLR0917 - FastAPI maps parameters to the request
    sid: str,
    request: Request,
    platform: PlatformDep,
    task: Annotated[str, Form()],
    part: Annotated[str, Form()] = "",
    published: Annotated[bool, Form()] = True,
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Publish or withdraw a task's (or part's) result, then show the submission again."""

    def publish(me: Principal) -> None:
        publications.publish(platform, me, sid, task, part=part, published=published)

    return act(request, platform, token, publish, sid, sent=sent)


@router.post("/submissions/{sid}/final", response_class=HTMLResponse)
def final_page(
    sid: str,
    request: Request,
    platform: PlatformDep,
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Choose the submission as a final entry of its team, then show it again."""
    choose = partial(publications.choose_final, platform, sid=sid)
    return act(request, platform, token, choose, sid, sent=sent)


__all__ = ["router"]
