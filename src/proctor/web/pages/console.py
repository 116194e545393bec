"""The organizer console's lists: the challenges, a challenge's submissions, flagged, bundles.

Server-rendered like the other pages, through ``pages.common`` with the role ``organizer``:
a participant gets the 404 page (``console.organizers_only``), a visitor not signed in the
401 page; every form carries its CSRF token; no script. The pages call the same use cases as
the console's REST routes (``web.console_routes``). A submission's record is
``console_record``; what changes a challenge's phases or the accounts is ``console_admin``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from proctor.errors import ProctorError
from proctor.services.platform import installs, overview, refunds
from proctor.services.platform.accounts import Principal
from proctor.services.platform.submissions_list import Filters, challenge_submissions
from proctor.web import csrf
from proctor.web.deps import PlatformDep
from proctor.web.pages.common import (
    CsrfField,
    TokenCookie,
    act,
    error_page,
    page,
    principal_of,
    render,
    signed_in_as,
)
from proctor.web.uploads import MinimumRate, read_upload

router = APIRouter(include_in_schema=False)


@router.get("/console", response_class=HTMLResponse)
def console_home(request: Request, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """The console's start: the installed challenges and the console's other pages."""

    def view(me: Principal) -> tuple[str, dict[str, Any]]:
        return "console/home.html", {"challenges": overview.challenge_list(platform)}

    return page(request, platform, token, view, role="organizer")


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

    def view(me: Principal) -> tuple[str, dict[str, Any]]:
        listed = challenge_submissions(platform, me, name, filters)
        shown = overview.challenge_overview(platform, me, name)
        columns = sorted(
            {(t, m) for s in listed.submissions for t, ms in s.scores.items() for m in ms}
        )
        return "console/challenge.html", {
            "listed": listed,
            "challenge": shown,
            "filters": filters,
            "columns": columns,
        }

    return page(request, platform, token, view, role="organizer")


@router.get("/console/flagged", response_class=HTMLResponse)
def flagged_page(request: Request, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """The flagged submissions (lost workers, platform failures on hidden data), to refund."""

    def view(me: Principal) -> tuple[str, dict[str, Any]]:
        return "console/flagged.html", {"flagged": refunds.flagged(platform, me).flagged}

    return page(request, platform, token, view, role="organizer")


@router.post("/console/submissions/{sid}/refund", response_class=HTMLResponse)
def refund_form(
    sid: str,
    request: Request,
    platform: PlatformDep,
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Refund a flagged submission, then the flagged list again."""

    def refund(me: Principal) -> None:
        refunds.refund(platform, me, sid)

    return act(request, platform, token, sent, refund, role="organizer", then="/console/flagged")


@router.get("/console/install", response_class=HTMLResponse)
def install_page(request: Request, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """The form to install or update a challenge from its bundle's archive."""

    def view(me: Principal) -> tuple[str, dict[str, Any]]:
        return "console/install.html", {"installed": None}

    return page(request, platform, token, view, role="organizer")


@router.post("/console/install", response_class=HTMLResponse)
async def install_form(
    request: Request, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """Install the uploaded bundle archive and say what was installed."""
    try:
        csrf.check_origin(request)  # before the body is read
        me = await run_in_threadpool(signed_in_as, platform, token, "organizer")
        settings = platform.settings
        async with read_upload(
            request, "bundle", settings.upload_bytes, MinimumRate.of(settings)
        ) as upload:
            csrf.check_form(request, upload.fields.get(csrf.FIELD))
            done = await run_in_threadpool(installs.install_archive, platform, me, upload.file)
    except ProctorError as error:
        shown = await run_in_threadpool(principal_of, platform, token)
        return error_page(request, shown, error)
    return render(request, "console/install.html", me, installed=done.to_json())


__all__ = ["router"]
