r"""Where a person lands after signing in: the page they came from, never another site.

A page that needs a signed-in person links ``/login?next=PATH`` (``login_address``); the
sign-in form carries ``next`` and, once signed in, goes there (``safe_next``). Only a path of
this site is taken: it starts with one ``/``, names no scheme or host, and holds no backslash
or control character (browsers read a backslash as a slash: ``/\\x`` names a host).
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


def login_address(request: Request) -> str:
    """The sign-in page, coming back to this page after (for a page a GET request showed)."""
    path = request.url.path
    if request.method != "GET" or path == HOME or path.startswith(NOT_RETURNED_TO):
        return "/login"
    here = path + (f"?{request.url.query}" if request.url.query else "")
    if safe_next(here) == HOME:
        return "/login"
    return "/login?next=" + quote(here, safe="")
