"""Signing in (a password, or an API token for scripts) and out.

The sign-in form takes ``login`` (a name or email) and ``password``, which opens a browser
session (``signin``, rate-limited, one answer for every wrong login); or ``token``, an API
token kept in the session cookie as before. Either way the person then lands on ``next``, the
page that sent them to sign in, when it is a page of this site (``web.next_page``). Signing
out ends a password session; with a token it drops the cookie in this browser and revokes
nothing: the token still works for the CLI until it is revoked on the account page or with
``proctor token revoke``. A token the server does not hold is refused as the API refuses it
(``web.token_refusals``): the data folder the server reads is named to a caller on this
machine, anyone else is pointed to the server's log.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from proctor.errors import ProctorError
from proctor.services.platform import sessions, signin
from proctor.services.platform.accounts import UnknownTokenError
from proctor.web import csrf
from proctor.web.deps import PlatformDep
from proctor.web.errors import http_status
from proctor.web.next_page import safe_next
from proctor.web.pages.common import (
    CsrfField,
    TokenCookie,
    client_address,
    drop_session,
    error_page,
    keep_session,
    principal_of,
    render,
)
from proctor.web.token_refusals import refusal

router = APIRouter(include_in_schema=False)
FormText = Annotated[str, Form()]


@router.get("/login", response_class=HTMLResponse)
def login_page(
    request: Request,
    platform: PlatformDep,
    token: TokenCookie = None,
    done: str = "",
    next: str = "",
) -> Response:
    """The sign-in form.

    ``done``: a word on what just happened (e.g. an email confirmed); ``next``: the page of
    this site to go to once signed in (``next_page.safe_next``).
    """
    notes = {
        "confirmed": "Your email is confirmed: sign in with your name or email and password.",
        "waiting": "Your email is confirmed. An organizer approves new accounts: "
        "you will get a mail when yours is.",
        "reset": "Your new password is set: sign in with it.",
    }
    return render(
        request,
        "login.html",
        principal_of(platform, token),
        note=notes.get(done),
        signup=platform.settings.signup != "closed",
        next_page=safe_next(next),
    )


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    platform: PlatformDep,
    *,
    login: FormText = "",
    password: FormText = "",
    token: FormText = "",
    next: FormText = "",
    sent: CsrfField = "",
    session: TokenCookie = None,
) -> Response:
    """Sign in with ``login`` and ``password``, or with an API ``token`` (the CSRF token first).

    Then go to ``next`` when it is a page of this site (else the home page). The new session
    replaces the one of whoever was signed in; a refusal changes nothing, and the page says
    who is still signed in.
    """
    try:
        csrf.check_form(request, sent)
        if token.strip():
            try:
                principal = sessions.who(platform, token.strip())
            except UnknownTokenError as error:  # what to fix, as the API's 401 says it
                raise UnknownTokenError(refusal(error, request, platform.settings)) from None
            cookie, name = token.strip(), principal.name
            platform.audit(name, "web.login", name, "token")
        else:
            signed = signin.sign_in(platform, login, password, client_address(request))
            cookie, name = signed.cookie, signed.user
    except ProctorError as error:
        still = principal_of(platform, session)
        return render(
            request,
            "login.html",
            still,
            http_status(error),
            message=str(error),
            login=login,
            signup=platform.settings.signup != "closed",
            next_page=safe_next(next),
        )
    if session != cookie:
        sessions.end(platform, session)
    answer = RedirectResponse(safe_next(next), status_code=303)
    keep_session(answer, request, cookie)
    return answer


@router.post("/logout", response_class=HTMLResponse)
def logout(
    request: Request, platform: PlatformDep, token: TokenCookie = None, sent: CsrfField = ""
) -> Response:
    """End this browser's session (a token is not revoked: the CLI keeps it)."""
    try:
        csrf.check_form(request, sent)
    except ProctorError as error:
        return error_page(request, principal_of(platform, token), error)
    sessions.end(platform, token)
    answer = RedirectResponse("/", status_code=303)
    drop_session(answer, request)
    return answer
