"""Making an account and getting back into one: sign-up, its confirmation, password reset.

``/signup`` (fields ``name``, ``email``, ``password``) and ``/password-reset`` (``email``)
answer every request the same way, whatever accounts exist (``signup``, ``signin``). A link
from a mail opens a page whose button uses it (``/signup/verify``, ``/password-reset/new``):
a mail scanner that fetches the link does not use it up. Every form carries its CSRF token;
nobody needs to be signed in.
"""

from __future__ import annotations

import contextlib
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from proctor.errors import ProctorError
from proctor.services.platform import signin, signup
from proctor.web import csrf
from proctor.web.deps import PlatformDep
from proctor.web.errors import http_status
from proctor.web.next_page import safe_next
from proctor.web.pages.common import (
    CsrfField,
    PageRoute,
    Visitor,
    client_address,
    render,
    see_next,
)

router = APIRouter(include_in_schema=False, route_class=PageRoute)
FormText = Annotated[str, Form()]


@router.get("/signup", response_class=HTMLResponse)
def signup_page(request: Request, platform: PlatformDep, me: Visitor, next: str = "") -> Response:
    """The sign-up form (or why there is none: sign-up is closed on this server).

    ``next``: the page of this site to come back to, carried by the mailed link to sign-in.
    """
    return render(
        request, "signup.html", me, mode=platform.settings.signup, next_page=safe_next(next)
    )


@router.post("/signup", response_class=HTMLResponse)
def signup_form(
    request: Request,
    platform: PlatformDep,
    me: Visitor,
    *,
    name: FormText = "",
    email: FormText = "",
    password: FormText = "",
    next: FormText = "",
    sent: CsrfField = "",
) -> Response:
    """Sign up; the same answer whatever accounts exist (a refusal says what to change)."""
    back = safe_next(next)
    try:
        csrf.check_form(request, sent)
        answer = signup.sign_up(platform, name, email, password, client_address(request), then=back)
    except ProctorError as error:
        return render(
            request,
            "signup.html",
            me,
            http_status(error),
            mode=platform.settings.signup,
            message=str(error),
            user_name=name,
            email=email,
            next_page=back,
        )
    return render(request, "mail_sent.html", me, title="Check your mail", message=answer.message)


@router.get("/signup/verify", response_class=HTMLResponse)
def confirm_page(
    request: Request, platform: PlatformDep, me: Visitor, t: str = "", next: str = ""
) -> Response:
    """The page a confirmation link opens: whose account, and the button that confirms it."""
    user = signup.account_of_link(platform, t)
    return render(request, "confirm.html", me, user=user, link=t, next_page=safe_next(next))


@router.post("/signup/verify", response_class=HTMLResponse)
def confirm_form(
    request: Request,
    platform: PlatformDep,
    *,
    t: FormText = "",
    next: FormText = "",
    sent: CsrfField = "",
) -> Response:
    """Confirm the email (the link is used up), then the sign-in page says what comes next.

    Once signed in, the person goes on to ``next`` (the page that sent them to sign up).
    """
    csrf.check_form(request, sent)
    done = signup.confirm(platform, t)
    back = safe_next(next)
    then = "" if back == "/" else f"&next={quote(back, safe='')}"
    word = "waiting" if done.waits_for_approval else "confirmed"
    return see_next(f"/login?done={word}{then}")


@router.get("/password-reset", response_class=HTMLResponse)
def reset_page(request: Request, me: Visitor) -> Response:
    """The form that asks for a password reset link."""
    return render(request, "password_reset.html", me)


@router.post("/password-reset", response_class=HTMLResponse)
def reset_form(
    request: Request,
    platform: PlatformDep,
    me: Visitor,
    *,
    email: FormText = "",
    sent: CsrfField = "",
) -> Response:
    """Mail a reset link; the same answer whether or not an account has the address."""
    try:
        csrf.check_form(request, sent)
        answer = signin.request_reset(platform, email, client_address(request))
    except ProctorError as error:
        return render(
            request,
            "password_reset.html",
            me,
            http_status(error),
            message=str(error),
            email=email,
        )
    return render(request, "mail_sent.html", me, title="Check your mail", message=answer.message)


@router.get("/password-reset/new", response_class=HTMLResponse)
def new_password_page(
    request: Request, platform: PlatformDep, me: Visitor, t: str = ""
) -> Response:
    """The page a reset link opens: the new password's form."""
    user = signin.account_of_link(platform, t)
    return render(request, "password_new.html", me, user=user, link=t)


@router.post("/password-reset/new", response_class=HTMLResponse)
def new_password_form(
    request: Request,
    platform: PlatformDep,
    me: Visitor,
    *,
    t: FormText = "",
    password: FormText = "",
    sent: CsrfField = "",
) -> Response:
    """Set the new password (the link is used up; the account's browser sessions end)."""
    try:
        csrf.check_form(request, sent)
        signin.reset(platform, t, password)
    except ProctorError as error:
        user = None
        with contextlib.suppress(ProctorError):
            user = signin.account_of_link(platform, t)
        return render(
            request,
            "password_new.html",
            me,
            http_status(error),
            message=str(error),
            user=user,
            link=t,
        )
    return see_next("/login?done=reset")
