"""What every page family shares: the templates, the signed-in user, rendering, errors, forms.

Signing in takes an API token (``proctor user add`` prints it) and keeps it in a cookie that is
``HttpOnly``, ``SameSite=Strict`` and, over TLS, ``Secure``. Every form carries a CSRF token
and is refused (403) without it or when another site sent it (``web.csrf``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Cookie, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from proctor.errors import AuthenticationError, ProctorError
from proctor.services.platform.accounts import Principal, authenticate
from proctor.services.platform.resources import Platform
from proctor.web import csrf
from proctor.web.errors import http_status
from proctor.web.security import over_tls

WEB = Path(__file__).resolve().parent.parent
COOKIE = csrf.SESSION_COOKIE
COOKIE_DAYS = 30

templates = Jinja2Templates(directory=WEB / "templates")
TokenCookie = Annotated[str | None, Cookie(alias=COOKIE)]
CsrfField = Annotated[str, Form(alias=csrf.FIELD)]


def principal_of(platform: Platform, token: str | None) -> Principal | None:
    """The signed-in user, or None (no cookie, or a token revoked since)."""
    if not token:
        return None
    try:
        return authenticate(platform, token)
    except AuthenticationError:
        return None


def secure(request: Request) -> bool:
    """Whether cookies set now get ``Secure`` (the browser came over TLS)."""
    platform: Platform = request.app.state.platform
    return over_tls(request.scope, platform.settings.trust_proxy)


def render(
    request: Request, name: str, principal: Principal | None, status: int = 200, **context: Any
) -> HTMLResponse:
    """The template with the signed-in user and the CSRF token its forms carry."""
    token, fresh = csrf.form_token(request)
    answer = templates.TemplateResponse(
        request, name, {"me": principal, "csrf": token, **context}, status_code=status
    )
    csrf.keep_nonce(answer, fresh, secure(request))
    return answer


def error_page(request: Request, principal: Principal | None, error: ProctorError) -> HTMLResponse:
    """The error page: the service's message (it says what to do) and the HTTP status."""
    return render(request, "error.html", principal, http_status(error), message=str(error))


def signed_in(principal: Principal | None) -> Principal:
    """``principal``, or the refusal that says to sign in first."""
    if principal is None:
        raise AuthenticationError("sign in with your API token first (proctor user add prints it)")
    return principal


def act(
    request: Request,
    platform: Platform,
    token: str | None,
    change: Callable[[Principal], object],
    sid: str,
    *,
    sent: str,
) -> Response:
    """A form on a submission's page that changes something, then that page again (303).

    The form must come from this site with its CSRF token ``sent`` and its sender be signed
    in; a refusal of either, or of the service, is the error page with the service's message.
    """
    principal = principal_of(platform, token)
    try:
        csrf.check_form(request, sent)
        change(signed_in(principal))
    except ProctorError as error:
        return error_page(request, principal, error)
    return RedirectResponse(f"/submissions/{quote(sid)}", status_code=303)
