"""The organizer console's pages: submissions, a submission's record, flagged, users, bundles.

Server-rendered like the other pages (``web.pages``): signed in with the API token's cookie,
every form with its CSRF token (``web.csrf``), no script. Organizers only: a participant
gets the 404 page (``console.organizers_only``), a visitor not signed in the 401 page. The
pages call the same use cases as the console's REST routes (``web.console_routes``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, BinaryIO

from fastapi import APIRouter, Cookie, Form, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from proctor.errors import AuthenticationError, ProctorError
from proctor.services.platform import installs, overview, records, refunds
from proctor.services.platform.accounts import Principal, authenticate
from proctor.services.platform.console import organizers_only
from proctor.services.platform.resources import Platform
from proctor.services.platform.submissions_list import Filters, challenge_submissions
from proctor.web import csrf
from proctor.web.deps import PlatformDep
from proctor.web.errors import http_status
from proctor.web.security import over_tls
from proctor.web.uploads import MinimumRate, read_upload

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=Path(__file__).with_name("templates"))
TokenCookie = Annotated[str | None, Cookie(alias=csrf.SESSION_COOKIE)]
CsrfField = Annotated[str, Form(alias=csrf.FIELD)]


def organizer_of(platform: Platform, token: str | None) -> Principal:
    """The signed-in organizer: 401 when nobody is signed in, 404 for a participant."""
    if not token:
        raise AuthenticationError("sign in with an organizer's API token first")
    try:
        principal = authenticate(platform, token)
    except AuthenticationError as error:
        raise AuthenticationError(f"sign in again: {error}") from None
    return organizers_only(principal)


def _me(platform: Platform, token: str | None) -> Principal | None:
    """Who is signed in, for the header (None: nobody, or a token refused since)."""
    try:
        return authenticate(platform, token) if token else None
    except AuthenticationError:
        return None


def render(
    request: Request, name: str, me: Principal | None, status: int = 200, **context: Any
) -> HTMLResponse:
    """A console template with the signed-in user and the CSRF token its forms carry."""
    token, fresh = csrf.form_token(request)
    answer = templates.TemplateResponse(
        request, name, {"me": me, "csrf": token, **context}, status_code=status
    )
    platform: Platform = request.app.state.platform
    csrf.keep_nonce(answer, fresh, over_tls(request.scope, platform.settings.trust_proxy))
    return answer


def page(
    request: Request,
    platform: Platform,
    token: str | None,
    show: Callable[[Principal], tuple[str, dict[str, Any]]],
) -> Response:
    """An organizer's page: ``show`` gives its template and context; errors as the error page."""
    try:
        me = organizer_of(platform, token)
        name, context = show(me)
    except ProctorError as error:
        shown = _me(platform, token)
        return render(request, "error.html", shown, http_status(error), message=str(error))
    return render(request, name, me, **context)


def act(
    request: Request,
    platform: Platform,
    token: str | None,
    sent: str | None,
    change: Callable[[Principal], Response],
) -> Response:
    """An organizer's form: the CSRF check first, then ``change`` (its answer)."""
    try:
        me = organizer_of(platform, token)
        csrf.check_form(request, sent)
        return change(me)
    except ProctorError as error:
        shown = _me(platform, token)
        return render(request, "error.html", shown, http_status(error), message=str(error))


def back(url: str) -> Response:
    """See the page at ``url`` after a form changed something (303)."""
    return RedirectResponse(url, status_code=303)


@router.get("/console", response_class=HTMLResponse)
def console_home(request: Request, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """The console's start: the installed challenges and the console's other pages."""
    return page(
        request,
        platform,
        token,
        lambda me: ("console/home.html", {"challenges": overview.challenge_list(platform)}),
    )


@router.get("/console/challenges/{name}", response_class=HTMLResponse)
def challenge_console(  # noqa: PLR0917 - FastAPI maps parameters to the request
    name: str,
    request: Request,
    platform: PlatformDep,
    token: TokenCookie = None,
    phase: str = "",
    team: str = "",
    status: str = "",
    failure: str = "",
    page_number: Annotated[int, Query(alias="page", ge=1)] = 1,
) -> Response:
    """Every submission of a challenge with filters and scores; the phases' dates; rescore."""
    filters = Filters(phase or None, team or None, status or None, failure or None, page_number)

    def show(me: Principal) -> tuple[str, dict[str, Any]]:
        listed = challenge_submissions(platform, me, name, filters)
        shown = overview.challenge_overview(platform, me, name)
        columns = sorted(
            {(t, m) for s in listed["submissions"] for t, ms in s["scores"].items() for m in ms}
        )
        return "console/challenge.html", {
            "listed": listed,
            "challenge": shown,
            "filters": filters,
            "columns": columns,
        }

    return page(request, platform, token, show)


@router.get("/console/submissions/{sid}", response_class=HTMLResponse)
def record_page(
    sid: str, request: Request, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """A submission's full record: each stage's diagnostics, its cases, the entry to download."""

    def show(me: Principal) -> tuple[str, dict[str, Any]]:
        record = records.submission_record(platform, me, sid)
        return "console/record.html", {"r": record, "case_columns": CASE_COLUMNS}

    return page(request, platform, token, show)


CASE_COLUMNS = (
    "stage",
    "record",
    "ok",
    "problem",
    "exit_status",
    "timed_out",
    "wall_s",
    "cpu_s",
    "peak_memory_bytes",
)
"""The columns of ``cases.jsonl``'s table (the log tails follow each row)."""


@router.get("/console/submissions/{sid}/entry")
def entry_download(
    sid: str, request: Request, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """The submission's entry archive, byte for byte as uploaded."""
    try:
        me = organizer_of(platform, token)
        path, filename = records.entry_archive(platform, me, sid)
    except ProctorError as error:
        shown = _me(platform, token)
        return render(request, "error.html", shown, http_status(error), message=str(error))
    return FileResponse(path, media_type="application/octet-stream", filename=filename)


@router.get("/console/flagged", response_class=HTMLResponse)
def flagged_page(request: Request, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """The flagged submissions (lost workers, platform failures on hidden data), to refund."""
    return page(
        request,
        platform,
        token,
        lambda me: ("console/flagged.html", refunds.flagged(platform, me)),
    )


@router.post("/console/submissions/{sid}/refund", response_class=HTMLResponse)
def refund_form(
    sid: str,
    request: Request,
    platform: PlatformDep,
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Refund a flagged submission, then the flagged list again."""

    def change(me: Principal) -> Response:
        refunds.refund(platform, me, sid)
        return back("/console/flagged")

    return act(request, platform, token, sent, change)


@router.get("/console/install", response_class=HTMLResponse)
def install_page(request: Request, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """The form to install or update a challenge from its bundle's archive."""
    return page(request, platform, token, lambda me: ("console/install.html", {"installed": None}))


@router.post("/console/install", response_class=HTMLResponse)
async def install_form(
    request: Request, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """Install the uploaded bundle archive and say what was installed."""
    me = None
    try:
        csrf.check_origin(request)  # before the body is read
        me = await run_in_threadpool(organizer_of, platform, token)
        settings = platform.settings
        async with read_upload(
            request, "bundle", settings.upload_bytes, MinimumRate.of(settings)
        ) as upload:
            csrf.check_form(request, upload.fields.get(csrf.FIELD))
            done = await run_in_threadpool(_install, platform, me, upload.file)
    except ProctorError as error:
        shown = await run_in_threadpool(_me, platform, token)
        return render(request, "error.html", shown, http_status(error), message=str(error))
    return render(request, "console/install.html", me, installed=done)


def _install(platform: Platform, principal: Principal, stream: BinaryIO) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "bundle"
        with path.open("wb") as out:
            shutil.copyfileobj(stream, out)
        return installs.install_archive(platform, principal, path).to_json()


__all__ = ["router"]
