"""What every page family shares: the templates, the signed-in user, rendering, errors, forms.

Signing in takes an API token (``proctor user add`` prints it) and keeps it in a cookie that is
``HttpOnly``, ``SameSite=Strict`` and, over TLS, ``Secure``. Every form carries a CSRF token
and is refused (403) without it or when another site sent it (``web.csrf``).

A page or form is for a *role*: ``member`` (anyone signed in) or ``organizer`` (the console:
every participant gets the "not found" page, as for a thing that does not exist, so the
console tells participants nothing; nobody signed in gets 401).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Cookie, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from proctor.errors import AuthenticationError, ProctorError
from proctor.services.platform.accounts import Principal, authenticate
from proctor.services.platform.console import organizers_only
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
Role = Literal["member", "organizer"]
View = Callable[[Principal], tuple[str, dict[str, Any]]]
"""A page's content for the signed-in user: its template and the template's context."""
Then = str | Callable[[Principal, Any], Response]
"""After a form's change: the address to see next (303), or the answer made from the
signed-in user and what the change returned (a page shown once, e.g. a new token)."""


def principal_of(platform: Platform, token: str | None) -> Principal | None:
    """The signed-in user, or None (no cookie, or a token revoked since)."""
    if not token:
        return None
    try:
        return authenticate(platform, token)
    except AuthenticationError:
        return None


def signed_in_as(platform: Platform, token: str | None, role: Role) -> Principal:
    """The signed-in user allowed in ``role``: 401 for nobody, 404 for a participant (console)."""
    if not token:
        raise AuthenticationError("sign in with your API token first (proctor user add prints it)")
    try:
        principal = authenticate(platform, token)
    except AuthenticationError as error:
        raise AuthenticationError(f"sign in again: {error}") from None
    return organizers_only(principal) if role == "organizer" else principal


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


def page(
    request: Request, platform: Platform, token: str | None, view: View, *, role: Role
) -> Response:
    """A page for ``role``: ``view`` gives its template and context; a refusal, the error page."""
    try:
        me = signed_in_as(platform, token, role)
        name, context = view(me)
    except ProctorError as error:
        return error_page(request, principal_of(platform, token), error)
    return render(request, name, me, **context)


def act(
    request: Request,
    platform: Platform,
    token: str | None,
    sent: str | None,
    change: Callable[[Principal], object],
    *,
    role: Role,
    then: Then,
) -> Response:
    """A form that changes something: who may send it first, its CSRF token, then ``change``.

    The sender must be signed in (and an organizer for the console: a participant gets "not
    found" before anything else is looked at), the form must come from this site with the
    token ``sent``. A refusal of any of them, or of the service, is the error page with the
    service's message; nothing changed. Then ``then`` (see ``Then``).
    """
    try:
        me = signed_in_as(platform, token, role)
        csrf.check_form(request, sent)
        done = change(me)
    except ProctorError as error:
        return error_page(request, principal_of(platform, token), error)
    if isinstance(then, str):
        return RedirectResponse(then, status_code=303)
    return then(me, done)
