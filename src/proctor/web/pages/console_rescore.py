"""Rescoring a phase in the console: a preview of every score and rank, then apply or cancel.

The challenge's console asks for a preview (``rescore.preview``: nothing changes) and shows
it at its own address; its page applies it (``rescore.apply``) or drops it. A preview that no
longer holds (a submission scored since, a newer bundle) is shown again with why, and a
button to preview again. Organizers only (``pages.common``, role ``organizer``).
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from proctor.errors import RefusedError
from proctor.services.platform import installs, rescore
from proctor.web.deps import PlatformDep
from proctor.web.pages.common import Organizer, OrganizerForm, PageRoute, render, see_next
from proctor.web.pages.figures import Numbers

router = APIRouter(include_in_schema=False, route_class=PageRoute)
TEMPLATE = "console/rescore.html"


def _numbers(platform: PlatformDep, name: str) -> Numbers:
    """How the challenge's pages show its metrics (precision per metric)."""
    _, challenge = installs.current(platform, name)
    return Numbers(challenge)


def _address(name: str, preview: str) -> str:
    return f"/console/challenges/{quote(name)}/rescores/{quote(preview)}"


@router.post("/console/challenges/{name}/rescore", response_class=HTMLResponse)
def preview_form(
    name: str, platform: PlatformDep, me: OrganizerForm, phase: Annotated[str, Form()] = ""
) -> Response:
    """Score the phase again as a preview (nothing changes), then show it at its address."""
    shown = rescore.preview(platform, me, name, phase or None)
    return see_next(_address(name, shown.preview))


@router.get("/console/challenges/{name}/rescores/{preview}", response_class=HTMLResponse)
def preview_page(
    name: str, preview: str, request: Request, platform: PlatformDep, me: Organizer
) -> Response:
    """A preview: each score and rank before and after, with the forms to apply or cancel it."""
    shown = rescore.shown_preview(platform, me, name, preview)
    return render(request, TEMPLATE, me, done=shown, numbers=_numbers(platform, name))


@router.post("/console/challenges/{name}/rescores/{preview}/apply", response_class=HTMLResponse)
def apply_form(
    name: str, preview: str, request: Request, platform: PlatformDep, me: OrganizerForm
) -> Response:
    """Store the preview's scores and show them as applied; a stale preview, shown with why."""
    stale: str | None = None
    try:
        shown = rescore.apply(platform, me, name, preview)
    except RefusedError as refused:
        shown, stale = rescore.shown_preview(platform, me, name, preview), str(refused)
    status = 409 if stale else 200
    numbers = _numbers(platform, name)
    return render(request, TEMPLATE, me, status, done=shown, stale=stale, numbers=numbers)


@router.post("/console/challenges/{name}/rescores/{preview}/cancel", response_class=HTMLResponse)
def cancel_form(name: str, preview: str, platform: PlatformDep, me: OrganizerForm) -> Response:
    """Drop the preview unapplied, then the challenge's console again."""
    rescore.cancel(platform, me, name, preview)
    return see_next(f"/console/challenges/{quote(name)}")


__all__ = ["router"]
