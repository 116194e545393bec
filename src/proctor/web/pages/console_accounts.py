"""The console's accounts waiting for approval (``PROCTOR_SIGNUP=approval``): approve or deny.

Organizers only; each decision mails the person and is in the audit log (``approvals``).
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from proctor.services.platform import approvals
from proctor.web.deps import PlatformDep
from proctor.web.pages.common import Organizer, OrganizerForm, PageRoute, render, see_next

router = APIRouter(include_in_schema=False, route_class=PageRoute)
PAGE = "/console/accounts"


@router.get(PAGE, response_class=HTMLResponse)
def accounts_page(
    request: Request, platform: PlatformDep, me: Organizer, done: str = ""
) -> Response:
    """The confirmed accounts waiting for approval, oldest first."""
    waiting = approvals.pending(platform, me)
    return render(
        request,
        "console/accounts.html",
        me,
        waiting=waiting,
        mode=platform.settings.signup,
        done=done,
    )


@router.post(PAGE + "/{name}/approve", response_class=HTMLResponse)
def approve(name: str, platform: PlatformDep, me: OrganizerForm) -> Response:
    """Approve the account: its owner may sign in, and gets a mail."""
    approvals.decide(platform, me, name, approve=True)
    return see_next(f"{PAGE}?done={quote(name)}+approved")


@router.post(PAGE + "/{name}/deny", response_class=HTMLResponse)
def deny(name: str, platform: PlatformDep, me: OrganizerForm) -> Response:
    """Deny the account: it is disabled, and its owner gets a mail."""
    approvals.decide(platform, me, name, approve=False)
    return see_next(f"{PAGE}?done={quote(name)}+denied")
