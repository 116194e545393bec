"""Server-rendered pages for people: challenges, leaderboards, submitting, a submission's status.

The pages call the same services as the REST routes with the same principal, so they show
exactly what the API would (a board a caller may not read is listed without a link; another
team's submission is "not found"). Signing in takes an API token (``proctor user add`` prints
it) and keeps it in a cookie that is ``HttpOnly``, ``SameSite=Strict`` and, over TLS,
``Secure``. Every form carries a CSRF token and is refused (403) without it or when another
site sent it (``web.csrf``). Signing out drops the cookie in this browser and revokes nothing:
the token still works for the CLI until ``proctor token revoke``. Pages are not part of the
OpenAPI schema.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Cookie, Form, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from proctor.errors import AuthenticationError, ProctorError
from proctor.services.platform import overview, publications, standings, submissions
from proctor.services.platform.accounts import Principal, authenticate
from proctor.services.platform.resources import Platform
from proctor.web import csrf
from proctor.web.deps import PlatformDep
from proctor.web.errors import http_status
from proctor.web.security import over_tls
from proctor.web.uploads import MinimumRate, read_upload

COOKIE = csrf.SESSION_COOKIE
STYLESHEET = Path(__file__).with_name("static") / "proctor.css"
COOKIE_DAYS = 30
REFRESH_S = 2
"""Seconds between reloads of a submission's page while it is queued or running."""

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=Path(__file__).with_name("templates"))
TokenCookie = Annotated[str | None, Cookie(alias=COOKIE)]
CsrfField = Annotated[str, Form(alias=csrf.FIELD)]


def _principal(platform: Platform, token: str | None) -> Principal | None:
    """The signed-in user, or None (no cookie, or a token revoked since)."""
    if not token:
        return None
    try:
        return authenticate(platform, token)
    except AuthenticationError:
        return None


def _secure(request: Request) -> bool:
    """Whether cookies set now get ``Secure`` (the browser came over TLS)."""
    platform: Platform = request.app.state.platform
    return over_tls(request.scope, platform.settings.trust_proxy)


def _render(
    request: Request, name: str, principal: Principal | None, status: int = 200, **context: Any
) -> HTMLResponse:
    """The template with the signed-in user and the CSRF token its forms carry."""
    token, fresh = csrf.form_token(request)
    answer = templates.TemplateResponse(
        request, name, {"me": principal, "csrf": token, **context}, status_code=status
    )
    csrf.keep_nonce(answer, fresh, _secure(request))
    return answer


def _error(request: Request, principal: Principal | None, error: ProctorError) -> HTMLResponse:
    """The error page: the service's message (it says what to do) and the HTTP status."""
    return _render(request, "error.html", principal, http_status(error), message=str(error))


def _signed_in(principal: Principal | None) -> Principal:
    if principal is None:
        raise AuthenticationError("sign in with your API token first (proctor user add prints it)")
    return principal


def _act(
    request: Request,
    platform: Platform,
    token: str | None,
    change: Callable[[Principal], object],
    sid: str,
    *,
    sent: str,
) -> Response:
    """A form on a submission's page that changes something, then that page again (303).

    The form must come from this site with its CSRF token ``sent`` and its sender be signed
    in; a refusal of either, or of the service, is the error page with the service's message.
    """
    principal = _principal(platform, token)
    try:
        csrf.check_form(request, sent)
        change(_signed_in(principal))
    except ProctorError as error:
        return _error(request, principal, error)
    return RedirectResponse(f"/submissions/{quote(sid)}", status_code=303)


@router.get("/", response_class=HTMLResponse)
def home(request: Request, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """The installed challenges."""
    principal = _principal(platform, token)
    return _render(request, "home.html", principal, challenges=overview.challenge_list(platform))


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """The sign-in form."""
    return _render(request, "login.html", _principal(platform, token))


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    platform: PlatformDep,
    token: Annotated[str, Form()] = "",
    sent: CsrfField = "",
) -> Response:
    """Check the API token and keep it in the session cookie (the form's CSRF token first)."""
    try:
        csrf.check_form(request, sent)
        principal = authenticate(platform, token.strip())
    except ProctorError as error:
        return _render(request, "login.html", None, http_status(error), message=str(error))
    answer = RedirectResponse("/", status_code=303)
    answer.set_cookie(
        COOKIE,
        token.strip(),
        max_age=COOKIE_DAYS * 86400,
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )
    platform.audit(principal.name, "web.login", principal.name)
    return answer


@router.post("/logout", response_class=HTMLResponse)
def logout(
    request: Request, platform: PlatformDep, token: TokenCookie = None, sent: CsrfField = ""
) -> Response:
    """Drop the session cookie in this browser (the token is not revoked: the CLI keeps it)."""
    try:
        csrf.check_form(request, sent)
    except ProctorError as error:
        return _error(request, _principal(platform, token), error)
    answer = RedirectResponse("/", status_code=303)
    answer.delete_cookie(COOKIE, httponly=True, samesite="strict", secure=_secure(request))
    return answer


@router.get("/static/proctor.css")
def stylesheet() -> Response:
    """The pages' stylesheet (the Content-Security-Policy allows no inline style)."""
    return FileResponse(STYLESHEET, media_type="text/css")


@router.get("/challenges/{name}", response_class=HTMLResponse)
def challenge_page(
    name: str, request: Request, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """A challenge: its phases, their boards, the submission form and the team's submissions."""
    principal = _principal(platform, token)
    try:
        shown = overview.challenge_overview(platform, principal, name)
        mine = submissions.listing(platform, principal, name) if principal else []
    except ProctorError as error:
        return _error(request, principal, error)
    return _render(request, "challenge.html", principal, challenge=shown, submissions=mine)


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
    principal = _principal(platform, token)
    try:
        shown = standings.leaderboard(platform, principal, name, phase or None, board)
    except ProctorError as error:
        return _error(request, principal, error)
    columns = _columns(shown["rows"])
    return _render(request, "board.html", principal, board=shown, columns=columns)


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
    principal = await run_in_threadpool(_principal, platform, token)
    try:
        csrf.check_origin(request)  # before the body is read
        signed_in = _signed_in(principal)
        await run_in_threadpool(submissions.check_submitter, platform, signed_in, name)
        settings = platform.settings
        async with read_upload(
            request, "entry", settings.upload_bytes, MinimumRate.of(settings)
        ) as upload:
            csrf.check_form(request, upload.fields.get(csrf.FIELD))
            phase = upload.fields.get("phase") or None
            receipt = await run_in_threadpool(
                submissions.submit, platform, signed_in, name, phase, upload.file
            )
    except ProctorError as error:
        return _error(request, principal, error)
    return RedirectResponse(f"/submissions/{quote(receipt.submission)}", status_code=303)


@router.get("/submissions/{sid}", response_class=HTMLResponse)
def submission_page(
    sid: str, request: Request, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """A submission's status, stage and queue position, then its disclosed report."""
    principal = _principal(platform, token)
    try:
        shown = submissions.status(platform, _signed_in(principal), sid)
    except ProctorError as error:
        return _error(request, principal, error)
    waiting = shown["status"] in ("queued", "running")
    chosen = None
    if shown["status"] == "scored":
        chosen = publications.choices(platform, _signed_in(principal), sid)
    return _render(
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
    return _act(
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

    return _act(request, platform, token, publish, sid, sent=sent)


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
    return _act(request, platform, token, choose, sid, sent=sent)


__all__ = ["COOKIE", "router"]
