"""CSRF protection of the pages' forms: a token per browser and session, and the origin.

A browser gets a random nonce in the ``proctor_csrf`` cookie (``HttpOnly``, ``SameSite=Lax`` as
the session cookie) the first time a page is shown to it. Every form carries the field ``csrf``:
the HMAC-SHA256 of that nonce keyed by the browser's session cookie (the session's secret or API
token, or nothing before signing in). Another site can neither read the cookie nor compute the
HMAC, and a nonce planted in the victim's browser is useless without the victim's session, so a
form it makes the browser send has no valid token. A form is refused (403) when:

- its ``Origin`` is ``null`` (Chromium sends it after a cross-origin redirect) or another
  host, or ``Sec-Fetch-Site`` says another site sent it;
- its ``csrf`` field is missing or is not the token of this browser and session.

A form with the right token and no ``Origin`` (older browsers) is taken. Signing in (login CSRF
would sign the victim in as the attacker) and signing out are forms like the others.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

from fastapi import Request
from fastapi.responses import Response

from proctor.errors import ForbiddenError

NONCE_COOKIE = "proctor_csrf"
FIELD = "csrf"
SESSION_COOKIE = "proctor_token"
SAME_SITE_FETCHES = ("same-origin", "none")


def _token(nonce: str, session: str) -> str:
    return hmac.new(session.encode(), nonce.encode(), hashlib.sha256).hexdigest()


def form_token(request: Request) -> tuple[str, str | None]:
    """The ``csrf`` field for the forms of a page, and a new nonce to set (None: it has one)."""
    nonce = request.cookies.get(NONCE_COOKIE)
    fresh = None
    if not nonce:
        nonce = fresh = secrets.token_urlsafe(32)
    return _token(nonce, request.cookies.get(SESSION_COOKIE, "")), fresh


def keep_nonce(response: Response, nonce: str | None, secure: bool) -> None:
    """Set the browser's new nonce cookie (for a session: no ``Max-Age``)."""
    if nonce is not None:
        response.set_cookie(NONCE_COOKIE, nonce, httponly=True, samesite="lax", secure=secure)


def check_origin(request: Request) -> None:
    """Refuse a form whose ``Origin`` or ``Sec-Fetch-Site`` names another site (or ``null``)."""
    origin = request.headers.get("origin")
    if origin is not None and (origin == "null" or urlsplit(origin).netloc != request.url.netloc):
        raise ForbiddenError("this form was sent from another site: use Proctor's own page")
    fetch = request.headers.get("sec-fetch-site")
    if fetch is not None and fetch not in SAME_SITE_FETCHES:
        raise ForbiddenError("this form was sent from another site: use Proctor's own page")


def check_form(request: Request, sent: str | None) -> None:
    """Refuse a form from another site, or without this browser's and session's token."""
    check_origin(request)
    nonce = request.cookies.get(NONCE_COOKIE)
    expected = _token(nonce, request.cookies.get(SESSION_COOKIE, "")) if nonce else None
    if not sent or expected is None or not hmac.compare_digest(sent, expected):
        raise ForbiddenError(
            "this form has no valid CSRF token (it came from another site, or from a page "
            "shown before you signed in or out): reload Proctor's page and send it again"
        )
