"""A scorer's page for a submission (a Codabench ``detailed_results.html``), sandboxed.

The page is HTML an organizer's program wrote after reading hidden references, possibly
quoting what the entry wrote, so it is never part of Proctor's own pages: it has an address
of its own, which the submission's page (and the console's record) frame with an empty
``sandbox`` attribute, and it is answered with ``security.SCORER_PAGE_POLICY``: the CSP
``sandbox`` directive (an opaque origin: no script, no form, no cookie, no same-origin
request), nothing fetched but ``data:`` images, framed by Proctor's pages only, with
``nosniff``. Who may read it is ``scorer_pages``' rule; everyone else gets 404.
"""

from __future__ import annotations

from html import escape

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from proctor.errors import ProctorError
from proctor.services.platform import scorer_pages
from proctor.web.deps import PlatformDep
from proctor.web.errors import http_status
from proctor.web.pages.common import TokenCookie, principal_of
from proctor.web.security import SCORER_PAGE_POLICY

router = APIRouter(include_in_schema=False)
HEADERS = {
    "Content-Security-Policy": SCORER_PAGE_POLICY,
    "X-Frame-Options": "SAMEORIGIN",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
}


def _notice(text: str, status: int) -> Response:
    """A short page of Proctor's own, with the same headers (it shows inside the frame)."""
    html = f"<!doctype html><title>detailed results</title><p>{escape(text)}</p>"
    return HTMLResponse(html, status_code=status, headers=HEADERS)


@router.get("/submissions/{sid}/detailed/{task}")
def detailed_results(
    sid: str, task: str, platform: PlatformDep, token: TokenCookie = None
) -> Response:
    """Task ``task``'s detailed results of submission ``sid``, as the scorer wrote them."""
    try:
        page = scorer_pages.detailed_page(platform, principal_of(platform, token), sid, task)
    except ProctorError as error:
        return _notice(str(error), http_status(error))
    if page.html is None:
        return _notice(
            f"The detailed results of task {task} are {page.size:,} bytes, more than the "
            f"{scorer_pages.MAX_PAGE_BYTES:,} shown here; the organizers have them in the "
            "submission's run artifact.",
            200,
        )
    return Response(page.html, media_type="text/html; charset=utf-8", headers=HEADERS)


__all__ = ["router"]
