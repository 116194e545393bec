"""The pages' static files: the stylesheet, the scripts, the favicon (nothing inline: CSP)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, Response

from proctor.web.pages.common import WEB

STATIC = WEB / "static"
TYPES = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}

router = APIRouter(include_in_schema=False)


@router.get("/static/{name}")
def static_file(name: str) -> Response:
    """One file of ``web/static`` (a plain name: no folder, no way out of it)."""
    path = STATIC / name
    kind = TYPES.get(path.suffix)
    if kind is None or "/" in name or name.startswith(".") or not path.is_file():
        raise HTTPException(404, f"no static file {name!r}")
    return FileResponse(path, media_type=kind, headers={"Cache-Control": "no-cache"})


@router.get("/favicon.ico")
def favicon() -> Response:
    """The favicon browsers ask for by this name (the pages link the SVG one)."""
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")
