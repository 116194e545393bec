"""The console's registrations page: approve or deny, invite, the participants CSV.

Organizers only, through ``pages.common`` like the other console pages; the forms call
``services.platform.registration_admin``, the same use cases as the REST routes of
``web.registration_routes``.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from proctor.services.platform import registration_admin
from proctor.web.deps import PlatformDep
from proctor.web.pages.common import Organizer, OrganizerForm, PageRoute, render, see_next

router = APIRouter(include_in_schema=False, route_class=PageRoute)


def _address(name: str) -> str:
    return f"/console/challenges/{quote(name)}/registrations"


@router.get("/console/challenges/{name}/registrations", response_class=HTMLResponse)
def registrations_page(
    name: str, request: Request, platform: PlatformDep, me: Organizer
) -> Response:
    """Every registration (pending first) with approve and deny, the invited, the CSV link."""
    listed = registration_admin.registrations(platform, me, name)
    return render(request, "console/registrations.html", me, listed=listed)


@router.post(
    "/console/challenges/{name}/registrations/{user}/{decision}", response_class=HTMLResponse
)
def decide_form(
    name: str,
    user: str,
    decision: str,
    platform: PlatformDep,
    me: OrganizerForm,
) -> Response:
    """Approve or deny one registration, then the list again."""
    registration_admin.decide(platform, me, name, user, decision)
    return see_next(_address(name))


@router.post(
    "/console/challenges/{name}/registrations/approve-pending", response_class=HTMLResponse
)
def approve_pending_form(name: str, platform: PlatformDep, me: OrganizerForm) -> Response:
    """Approve every pending registration at once, then the list again."""
    registration_admin.approve_pending(platform, me, name)
    return see_next(_address(name))


@router.post("/console/challenges/{name}/invitations", response_class=HTMLResponse)
def invite_form(
    name: str, platform: PlatformDep, me: OrganizerForm, people: Annotated[str, Form()] = ""
) -> Response:
    """Invite the user names or emails written one per line (or by commas), then the list."""
    registration_admin.invite(platform, me, name, people.replace(",", "\n").splitlines())
    return see_next(_address(name))


@router.get("/console/challenges/{name}/participants.csv")
def participants_csv(name: str, platform: PlatformDep, me: Organizer) -> Response:
    """The participants as a CSV download (``registration_admin.CSV_COLUMNS``)."""
    text = registration_admin.participants_csv(platform, me, name)
    return Response(
        text,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}-participants.csv"'},
    )


__all__ = ["router"]
