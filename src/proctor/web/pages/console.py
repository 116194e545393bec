"""The organizer console's lists: the challenges, a challenge's submissions, flagged, bundles.

Server-rendered like the other pages, through ``pages.common`` with the role ``organizer``:
a participant gets the 404 page (``console.organizers_only``), a visitor not signed in the
401 page; every form carries its CSRF token; no script. The pages call the same use cases as
the console's REST routes (``web.console_routes``). A submission's record is
``console_record``; what changes a challenge's phases or the accounts is ``console_admin``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from proctor.errors import ProctorError
from proctor.services.platform import installs, overview, refunds, registration_admin
from proctor.services.platform.submissions_list import Filters, challenge_submissions
from proctor.web import csrf
from proctor.web.deps import PlatformDep
from proctor.web.pages.common import (
    Organizer,
    OrganizerForm,
    PageRoute,
    TokenCookie,
    error_page,
    principal_of,
    render,
    see_next,
    signed_in_as,
)
from proctor.web.uploads import MinimumRate, read_upload

router = APIRouter(include_in_schema=False, route_class=PageRoute)


@router.get("/console", response_class=HTMLResponse)
def console_home(request: Request, platform: PlatformDep, me: Organizer) -> Response:
    """The console's start: the installed challenges (registrations pending) and other pages."""
    return render(
        request,
        "console/home.html",
        me,
        challenges=overview.challenge_list(platform),
        pending=registration_admin.pending_counts(platform, me),
    )


def listing_filters(
    *,
    phase: str = "",
    team: str = "",
    status: str = "",
    failure: str = "",
    page_number: Annotated[int, Query(alias="page", ge=1)] = 1,
) -> Filters:
    """The console list's filters from the query (empty: any), and the page asked for."""
    return Filters(phase or None, team or None, status or None, failure or None, page_number)


@router.get("/console/challenges/{name}", response_class=HTMLResponse)
def challenge_console(
    name: str,
    request: Request,
    platform: PlatformDep,
    me: Organizer,
    filters: Annotated[Filters, Depends(listing_filters)],
) -> Response:
    """Every submission of a challenge with filters and scores; the phases' dates; rescore."""
    listed = challenge_submissions(platform, me, name, filters)
    shown = overview.challenge_overview(platform, me, name)
    columns = sorted({(t, m) for s in listed.submissions for t, ms in s.scores.items() for m in ms})
    return render(
        request,
        "console/challenge.html",
        me,
        listed=listed,
        challenge=shown,
        filters=filters,
        columns=columns,
    )


@router.get("/console/flagged", response_class=HTMLResponse)
def flagged_page(request: Request, platform: PlatformDep, me: Organizer) -> Response:
    """The flagged submissions (lost workers, platform failures on hidden data), to refund."""
    flagged = refunds.flagged(platform, me).flagged
    return render(request, "console/flagged.html", me, flagged=flagged)


@router.post("/console/submissions/{sid}/refund", response_class=HTMLResponse)
def refund_form(sid: str, platform: PlatformDep, me: OrganizerForm) -> Response:
    """Refund a flagged submission, then the flagged list again."""
    refunds.refund(platform, me, sid)
    return see_next("/console/flagged")


@router.get("/console/install", response_class=HTMLResponse)
def install_page(request: Request, me: Organizer) -> Response:
    """The form to install or update a challenge from its bundle's archive."""
    return render(request, "console/install.html", me, installed=None)


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
    _, challenge = await run_in_threadpool(installs.current, platform, done.name)
    return render(
        request, "console/install.html", me, installed=done.to_json(), title=challenge.title
    )


__all__ = ["router"]
