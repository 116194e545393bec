"""The participant's registration pages: the terms to accept, and the register form.

``/challenges/{name}/register`` shows the challenge's terms (sanitized, ``bundle_pages``) and
a form accepting their version (the sha256 of the terms file shown); registering calls the
same service as ``POST /api/v1/challenges/{name}/registration``.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from proctor.services.platform import installs, registrations
from proctor.web.deps import PlatformDep
from proctor.web.pages.bundle_pages import render_page
from proctor.web.pages.common import MemberForm, PageRoute, Visitor, render, see_next
from proctor.web.pages.navigation import challenge_nav

router = APIRouter(include_in_schema=False, route_class=PageRoute)


@router.get("/challenges/{name}/register", response_class=HTMLResponse)
def register_page(
    name: str, request: Request, platform: PlatformDep, principal: Visitor
) -> Response:
    """The terms to accept and the form that registers the signed-in person."""
    _, challenge = installs.current(platform, name)
    shown = registrations.status(platform, principal, name)
    terms = render_page(challenge, "terms") if challenge.terms_page else None
    return render(
        request,
        "register.html",
        principal,
        challenge=challenge,
        registration=shown,
        terms=terms,
        nav=challenge_nav(platform, principal, challenge, "register"),
    )


@router.post("/challenges/{name}/register", response_class=HTMLResponse)
def register_form(
    name: str,
    platform: PlatformDep,
    me: MemberForm,
    accept: Annotated[str, Form()] = "",
    terms_version: Annotated[str, Form()] = "",
) -> Response:
    """Register, accepting the terms shown (their version); then the challenge's page."""
    accepted = terms_version if accept == "yes" else None
    registrations.register(platform, me, name, accepted)
    return see_next(f"/challenges/{quote(name)}")


__all__ = ["router"]
