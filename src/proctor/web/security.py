"""Security headers on every answer, and whether the browser reached the server over TLS.

Every answer but a scorer's page forbids framing (``X-Frame-Options: DENY``,
``frame-ancestors 'none'``), content sniffing and cross-site referrers, and carries a strict
Content-Security-Policy: the pages
load nothing but Proctor's own files (``web/static``: the stylesheet, the favicon, the
script that polls a running submission's status and the one that shows an upload's progress),
run no inline script, no ``eval`` and no
inline style, fetch only from Proctor and post forms only to Proctor. Over
TLS (the request's scheme, or a trusted proxy's ``X-Forwarded-Proto``) browsers are told to
keep to HTTPS (``Strict-Transport-Security``). FastAPI's interactive API docs (``/docs``,
``/redoc``) load their script from a CDN and get a policy that allows it, framing still denied.
Pages may frame only Proctor's own addresses (``frame-src 'self'``): a scorer's page, which
is served with ``SCORER_PAGE_POLICY`` (a sandbox) and may be framed by them alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; "
    "img-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'"
)
SCORER_PAGE_POLICY = (
    "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
    "form-action 'none'; frame-ancestors 'self'; base-uri 'none'"
)
"""A scorer's page (``pages.scorer_page``): a sandbox with an opaque origin (no script, no
form, no popup, no navigation of the page around it, no cookie), nothing fetched (images
only as ``data:`` URIs, its own inline styles), framed only by Proctor's own pages."""
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; img-src 'self' data: "
    "https://fastapi.tiangolo.com; frame-ancestors 'none'; base-uri 'none'"
)
DOCS_PATHS = ("/docs", "/docs/oauth2-redirect", "/redoc")
HEADERS: Mapping[str, str] = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
HSTS = "max-age=31536000"


def over_tls(scope: Scope, trust_proxy: bool) -> bool:
    """True when the browser reached the server over HTTPS (a trusted proxy's word counts)."""
    if scope.get("scheme") == "https":
        return True
    if not trust_proxy:
        return False
    forwarded = Headers(scope=scope).get("x-forwarded-proto", "")
    return forwarded.split(",")[0].strip().lower() == "https"


class SecurityHeaders:
    """ASGI middleware adding the headers above to every HTTP answer."""

    def __init__(self, app: ASGIApp, *, trust_proxy: bool) -> None:
        self.app = app
        self.trust_proxy = trust_proxy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; add the headers when the answer starts."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = DOCS_POLICY if scope.get("path") in DOCS_PATHS else PAGE_POLICY
        tls = over_tls(scope, self.trust_proxy)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers.setdefault(name, value)
                headers.setdefault("Content-Security-Policy", policy)
                if tls:
                    headers.setdefault("Strict-Transport-Security", HSTS)
            await send(message)

        await self.app(scope, receive, send_with_headers)
