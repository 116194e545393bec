"""Rescoring a phase in the console: a preview of every score and rank, then apply or cancel.

The challenge's console asks for a preview (``rescore.preview``: nothing changes) and shows
it at its own address; its page applies it (``rescore.apply``) or drops it. A preview that no
longer holds (a submission scored since, a newer bundle) is shown again with why, and a
button to preview again. Organizers only (``pages.common``, role ``organizer``).
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from proctor.errors import RefusedError
from proctor.services.platform import answers, installs, rescore
from proctor.services.platform.accounts import Principal
from proctor.web.deps import PlatformDep
from proctor.web.pages.common import CsrfField, TokenCookie, act, page, render
from proctor.web.pages.figures import Numbers

router = APIRouter(include_in_schema=False)
TEMPLATE = "console/rescore.html"


def _numbers(platform: PlatformDep, name: str) -> Numbers:
    """How the challenge's pages show its metrics (precision per metric)."""
    _, challenge = installs.current(platform, name)
    return Numbers(challenge)


def _address(name: str, preview: str) -> str:
    return f"/console/challenges/{quote(name)}/rescores/{quote(preview)}"


@router.post("/console/challenges/{name}/rescore", response_class=HTMLResponse)
def preview_form(  # noqa: PLR0917 - FastAPI maps parameters to the request
    name: str,
    request: Request,
    platform: PlatformDep,
    phase: Annotated[str, Form()] = "",
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Score the phase again as a preview (nothing changes), then show it at its address."""

    def change(me: Principal) -> answers.Rescored:
        return rescore.preview(platform, me, name, phase or None)

    def then(me: Principal, shown: answers.Rescored) -> Response:
        return RedirectResponse(_address(name, shown.preview), status_code=303)

    return act(request, platform, token, sent, change, role="organizer", then=then)


@router.get("/console/challenges/{name}/rescores/{preview}", response_class=HTMLResponse)
def preview_page(
    name: str, preview: str, request: Request, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """A preview: each score and rank before and after, with the forms to apply or cancel it."""

    def view(me: Principal) -> tuple[str, dict[str, Any]]:
        shown = rescore.shown_preview(platform, me, name, preview)
        return TEMPLATE, {"done": shown, "numbers": _numbers(platform, name)}

    return page(request, platform, token, view, role="organizer")


@router.post("/console/challenges/{name}/rescores/{preview}/apply", response_class=HTMLResponse)
def apply_form(  # noqa: PLR0917 - FastAPI maps parameters to the request
    name: str,
    preview: str,
    request: Request,
    platform: PlatformDep,
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Store the preview's scores and show them as applied; a stale preview, shown with why."""

    def change(me: Principal) -> tuple[answers.Rescored, str | None]:
        try:
            return rescore.apply(platform, me, name, preview), None
        except RefusedError as refused:
            return rescore.shown_preview(platform, me, name, preview), str(refused)

    def then(me: Principal, done: tuple[answers.Rescored, str | None]) -> Response:
        shown, stale = done
        status = 409 if stale else 200
        numbers = _numbers(platform, name)
        return render(request, TEMPLATE, me, status, done=shown, stale=stale, numbers=numbers)

    return act(request, platform, token, sent, change, role="organizer", then=then)


@router.post("/console/challenges/{name}/rescores/{preview}/cancel", response_class=HTMLResponse)
def cancel_form(  # noqa: PLR0917 - FastAPI maps parameters to the request
    name: str,
    preview: str,
    request: Request,
    platform: PlatformDep,
    token: TokenCookie = None,
    sent: CsrfField = "",
) -> Response:
    """Drop the preview unapplied, then the challenge's console again."""

    def change(me: Principal) -> None:
        rescore.cancel(platform, me, name, preview)

    then = f"/console/challenges/{quote(name)}"
    return act(request, platform, token, sent, change, role="organizer", then=then)


__all__ = ["router"]
