"""Signing in (an API token kept in the session cookie) and out (the cookie dropped).

Signing out drops the cookie in this browser and revokes nothing: the token still works for
the CLI until ``proctor token revoke``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from proctor.errors import ProctorError
from proctor.services.platform.accounts import authenticate
from proctor.web import csrf
from proctor.web.deps import PlatformDep
from proctor.web.errors import http_status
from proctor.web.pages.common import (
    COOKIE,
    COOKIE_DAYS,
    CsrfField,
    TokenCookie,
    error_page,
    principal_of,
    render,
    secure,
)

router = APIRouter(include_in_schema=False)


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, platform: PlatformDep, token: TokenCookie = None) -> Response:
    """The sign-in form."""
    return render(request, "login.html", principal_of(platform, token))


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    platform: PlatformDep,
    token: Annotated[str, Form()] = "",
    sent: CsrfField = "",
    session: TokenCookie = None,
) -> Response:
    """Check the API token and keep it in the session cookie (the form's CSRF token first).

    The new token replaces the session of whoever was signed in; a refused one changes
    nothing, and the page says who is still signed in.
    """
    try:
        csrf.check_form(request, sent)
        principal = authenticate(platform, token.strip())
    except ProctorError as error:
        still = principal_of(platform, session)
        return render(request, "login.html", still, http_status(error), message=str(error))
    answer = RedirectResponse("/", status_code=303)
    answer.set_cookie(
        COOKIE,
        token.strip(),
        max_age=COOKIE_DAYS * 86400,
        httponly=True,
        samesite="strict",
        secure=secure(request),
    )
    platform.audit(principal.name, "web.login", principal.name)
    return answer


@router.post("/logout", response_class=HTMLResponse)
def logout(
    request: Request, platform: PlatformDep, token: TokenCookie = None, sent: CsrfField = ""
) -> Response:
    """Drop the session cookie in this browser (the token is not revoked: the CLI keeps it)."""
    try:
        csrf.check_form(request, sent)
    except ProctorError as error:
        return error_page(request, principal_of(platform, token), error)
    answer = RedirectResponse("/", status_code=303)
    answer.delete_cookie(COOKIE, httponly=True, samesite="strict", secure=secure(request))
    return answer
