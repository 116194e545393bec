r"""Where a person lands after signing in: the page they came from, never another site.

A page that needs a signed-in person links ``/login?next=PATH`` and ``/signup?next=PATH``
(``login_address``); sign-up carries ``next`` through the mailed confirmation link to the
sign-in page, whose form carries it and, once signed in, goes there (``safe_next``). Only a
path of this site is taken: it starts with one ``/``, names no scheme or host, and holds no
backslash or control character (browsers read a backslash as a slash: ``/\\x`` is a host).
Anything else lands on the home page: a link cannot send a person who signs in elsewhere.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from starlette.requests import Request

HOME = "/"
LONGEST = 2000
UNSAFE = re.compile(r"[\x00-\x20\x7f\\]")
NOT_RETURNED_TO = ("/login", "/logout", "/signup", "/password-reset")


def safe_next(text: str | None) -> str:
    """``text`` when it is a path of this site (``/teams/join/CODE``), else ``/``."""
    if not text or len(text) > LONGEST or not text.startswith("/") or text.startswith("//"):
        return HOME
    if UNSAFE.search(text):
        return HOME
    parts = urlsplit(text)
    if parts.scheme or parts.netloc:
        return HOME
    return text


def login_address(request: Request, page: str = "/login") -> str:
    """The sign-in (or sign-up) ``page``, coming back to this page after (a page a GET showed).

    On the sign-in and sign-up pages themselves, the ``next`` they were given is kept.
    """
    path = request.url.path
    if path.startswith(NOT_RETURNED_TO):
        given = safe_next(request.query_params.get("next"))
        return page if given == HOME else f"{page}?next={quote(given, safe='')}"
    if request.method != "GET" or path == HOME:
        return page
    here = path + (f"?{request.url.query}" if request.url.query else "")
    if safe_next(here) == HOME:
        return page
    return f"{page}?next={quote(here, safe='')}"
