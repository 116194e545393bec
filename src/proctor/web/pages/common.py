"""What every page family shares: the templates, the signed-in user, rendering, errors, forms.

Signing in takes a name or email and password (a session, ``sessions``) or an API token
(``proctor user add`` prints it), kept in a cookie that is ``HttpOnly``, ``SameSite=Lax`` (so
a link from a mail arrives signed in) and, over TLS, ``Secure``. Every form carries a CSRF token
and is refused (403) without it or when another site sent it (``web.csrf``).

A page or form is for a *role*: ``member`` (anyone signed in) or ``organizer`` (the console:
every participant gets the "not found" page, as for a thing that does not exist, so the
console tells participants nothing; nobody signed in gets 401). A route takes the signed-in
user as a dependency (``Member``, ``Organizer``; a form's ``MemberForm``, ``OrganizerForm``
check its CSRF token after the role), and its router's ``PageRoute`` answers every refusal
with the error page.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Cookie, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from proctor.errors import AuthenticationError, ProctorError
from proctor.services.platform import sessions
from proctor.services.platform.accounts import Principal
from proctor.services.platform.console import organizers_only
from proctor.services.platform.resources import Platform
from proctor.web import csrf
from proctor.web.deps import PlatformDep
from proctor.web.errors import http_status
from proctor.web.next_page import login_address
from proctor.web.security import over_tls
from proctor.wording import plural

WEB = Path(__file__).resolve().parent.parent
COOKIE = csrf.SESSION_COOKIE
COOKIE_DAYS = 30

templates = Jinja2Templates(directory=WEB / "templates")
templates.env.filters["plural"] = plural
TokenCookie = Annotated[str | None, Cookie(alias=COOKIE)]
CsrfField = Annotated[str, Form(alias=csrf.FIELD)]
Role = Literal["member", "organizer"]
SIGN_IN_FIRST = "sign in first (at /login, with your password or API token)"


def keep_session(answer: Response, request: Request, value: str) -> None:
    """Set the session cookie: ``HttpOnly``, ``SameSite=Lax``, ``Secure`` over TLS."""
    answer.set_cookie(
        COOKIE,
        value,
        max_age=COOKIE_DAYS * 86400,
        httponly=True,
        samesite="lax",
        secure=secure(request),
    )


def drop_session(answer: Response, request: Request) -> None:
    """Remove the session cookie from this browser."""
    answer.delete_cookie(COOKIE, httponly=True, samesite="lax", secure=secure(request))


def client_address(request: Request) -> str:
    """The client's address (a trusted proxy's ``X-Forwarded-For``: ``PROCTOR_TRUST_PROXY``)."""
    return request.client.host if request.client else "unknown"


def principal_of(platform: Platform, token: str | None) -> Principal | None:
    """The signed-in user, or None (no cookie, or a token revoked since)."""
    if not token:
        return None
    try:
        return sessions.who(platform, token)
    except AuthenticationError:
        return None


def signed_in_as(platform: Platform, token: str | None, role: Role) -> Principal:
    """The signed-in user allowed in ``role``: 401 for nobody, 404 for a participant (console)."""
    if not token:
        raise AuthenticationError(SIGN_IN_FIRST)
    try:
        principal = sessions.who(platform, token)
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
    """The template with the signed-in user and the CSRF token its forms carry.

    ``signup_open``: whether people may sign up (the header then links the sign-up page);
    ``login_href``, ``signup_href``: the sign-in and sign-up pages, coming back to this one
    after (``next_page``).
    """
    token, fresh = csrf.form_token(request)
    platform: Platform = request.app.state.platform
    shared = {
        "me": principal,
        "csrf": token,
        "signup_open": platform.settings.signup != "closed",
        "login_href": login_address(request),
        "signup_href": login_address(request, "/signup"),
    }
    answer = templates.TemplateResponse(request, name, {**shared, **context}, status_code=status)
    csrf.keep_nonce(answer, fresh, secure(request))
    return answer


def error_page(
    request: Request,
    principal: Principal | None,
    error: ProctorError,
    *,
    message: str | None = None,
    back: tuple[str, str] | None = None,
) -> HTMLResponse:
    """The error page: the service's message (it says what to do) and the HTTP status.

    ``message``: the page's own wording instead; ``back``: a link (address, words) to the form
    the refusal came from.
    """
    shown = message if message is not None else str(error)
    return render(request, "error.html", principal, http_status(error), message=shown, back=back)


def signed_in(principal: Principal | None) -> Principal:
    """``principal``, or the refusal that says to sign in first."""
    if principal is None:
        raise AuthenticationError(SIGN_IN_FIRST)
    return principal


def member(platform: PlatformDep, token: TokenCookie = None) -> Principal:
    """The signed-in user (a dependency): 401 for nobody."""
    return signed_in_as(platform, token, "member")


def organizer(platform: PlatformDep, token: TokenCookie = None) -> Principal:
    """The signed-in organizer (a dependency): 401 for nobody, 404 for a participant."""
    return signed_in_as(platform, token, "organizer")


def visitor(platform: PlatformDep, token: TokenCookie = None) -> Principal | None:
    """The signed-in user, or None (a dependency of the public pages)."""
    return principal_of(platform, token)


Visitor = Annotated[Principal | None, Depends(visitor)]
Member = Annotated[Principal, Depends(member)]
Organizer = Annotated[Principal, Depends(organizer)]


def member_form(request: Request, me: Member, sent: CsrfField = "") -> Principal:
    """The signed-in user sending a form of this site (its CSRF token checked after the role)."""
    csrf.check_form(request, sent)
    return me


def organizer_form(request: Request, me: Organizer, sent: CsrfField = "") -> Principal:
    """The signed-in organizer sending a form of this site (the role first, then the token)."""
    csrf.check_form(request, sent)
    return me


MemberForm = Annotated[Principal, Depends(member_form)]
OrganizerForm = Annotated[Principal, Depends(organizer_form)]


class PageRoute(APIRoute):
    """A page's route: a refusal (``ProctorError``) is the error page, with its status.

    A refusal of the route's dependencies (signed in, role, CSRF token) or of the service
    shows the service's message, for the user signed in if any; nothing changed.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """The route's handler, answering a refusal with the error page."""
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                return await handler(request)
            except ProctorError as error:
                platform: Platform = request.app.state.platform
                token = request.cookies.get(COOKIE)
                principal = await run_in_threadpool(principal_of, platform, token)
                return error_page(request, principal, error)

        return answer


def server_url(request: Request) -> str:
    """The address people reach this server at, for the links and commands a page shows.

    ``PROCTOR_PUBLIC_URL`` when the operator set it, else the address the browser used.
    """
    platform: Platform = request.app.state.platform
    return platform.settings.link_base(str(request.base_url))


def see_next(address: str) -> RedirectResponse:
    """After a form's change: the page to see next (303)."""
    return RedirectResponse(address, status_code=303)
