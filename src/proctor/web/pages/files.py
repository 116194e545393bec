"""The Files page of a challenge: its public data, starting kit, environment images, extras.

The page and its downloads ask ``services.platform.files`` exactly what the REST routes ask,
with the signed-in person (cookie) instead of a token: a refused download is "not found".
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from proctor.services.platform import files, installs, registrations
from proctor.services.platform.answers import size_words
from proctor.web.deps import PlatformDep
from proctor.web.downloads import download
from proctor.web.pages.common import PageRoute, Visitor, render, server_url
from proctor.web.pages.navigation import challenge_nav

router = APIRouter(include_in_schema=False, route_class=PageRoute)
KIND_ORDER = {"kit": 0, "data": 1, "environment": 2, "other": 3}
KIND_TITLES = {"kit": "starting kit", "data": "data", "environment": "environment", "other": "file"}


@router.get("/challenges/{name}/files", response_class=HTMLResponse)
async def files_page(
    name: str, request: Request, platform: PlatformDep, principal: Visitor
) -> Response:
    """The challenge's files with size and sha256, a download link each, and the CLI commands."""
    _, challenge = installs.current(platform, name)
    allowed = files.may_download(platform, principal, challenge)
    why = "" if allowed else registrations.status(platform, principal, name).reason
    rows = await run_in_threadpool(files.listing, platform, principal, name) if allowed else None
    shown = (
        sorted(rows.files, key=lambda r: (KIND_ORDER[r.kind], r.phase or "", r.name))
        if rows
        else []
    )
    return render(
        request,
        "files.html",
        principal,
        challenge=challenge,
        nav=challenge_nav(platform, principal, challenge, "files"),
        files=shown,
        allowed=allowed,
        why=why,
        base=f"/challenges/{quote(name, safe='')}/files/",
        server=server_url(request),
        size=size_words,
        kinds=KIND_TITLES,
    )


@router.get("/challenges/{name}/files/{file}")
async def page_download(
    name: str, file: str, request: Request, platform: PlatformDep, principal: Visitor
) -> Response:
    """One file for the signed-in person (the page's links): streamed, Range and ETag."""
    info, path = await run_in_threadpool(files.open_file, platform, principal, name, file)
    return download(request, info, path)
