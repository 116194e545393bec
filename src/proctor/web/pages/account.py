"""A person's account page: their API tokens for the CLI, and their mail switch.

``/account`` lists the working tokens; "make a token" shows the new one on its answer only,
once (it is stored as a hash); "revoke" ends one token. The switch says whether a mail comes
when a submission of theirs finishes. Signed-in people only; every form with its CSRF token.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from proctor.services.platform import profile, tokens
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import IssuedToken
from proctor.web.deps import PlatformDep
from proctor.web.pages.common import Member, MemberForm, PageRoute, render, see_next, server_url

router = APIRouter(include_in_schema=False, route_class=PageRoute)


def _page(
    request: Request, platform: PlatformDep, me: Principal, new: IssuedToken | None
) -> Response:
    """The account page (``new``: a token just made, shown this once)."""
    found = profile.account(platform, me)
    return render(request, "account.html", me, account=found, new=new, server=server_url(request))


@router.get("/account", response_class=HTMLResponse)
def account_page(request: Request, platform: PlatformDep, me: Member) -> Response:
    """The signed-in person's account: tokens and the mail switch."""
    return _page(request, platform, me, None)


@router.post("/account/tokens", response_class=HTMLResponse)
def new_token(request: Request, platform: PlatformDep, me: MemberForm) -> Response:
    """Make an API token: the answer shows it once."""
    made = tokens.issue(platform, me.name, actor=me.name)
    return _page(request, platform, me, made)


@router.post("/account/tokens/{token_id}/revoke", response_class=HTMLResponse)
def revoke_token(token_id: int, platform: PlatformDep, me: MemberForm) -> Response:
    """Revoke one of the person's tokens, then the account page again."""
    tokens.revoke_one(platform, me, token_id)
    return see_next("/account")


@router.post("/account/notifications", response_class=HTMLResponse)
def notifications(
    platform: PlatformDep, me: MemberForm, finished: Annotated[str, Form()] = ""
) -> Response:
    """Switch the "email me when a submission finishes" mail (checked: on)."""
    profile.set_notify_finished(platform, me, finished == "on")
    return see_next("/account")
