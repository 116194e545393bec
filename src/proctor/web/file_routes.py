"""File routes under ``/api/v1/challenges/{name}/files``: the listing and each download.

Who may list and download is ``services.platform.files.may_download``; anyone else, and any
name that is not a listed file (a path, ``..``, an encoded slash), gets 404.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from proctor.services.platform import files
from proctor.services.platform.file_answers import FileListing
from proctor.web.deps import MaybePrincipalDep, PlatformDep
from proctor.web.downloads import download
from proctor.web.errors import ERROR_RESPONSES

router = APIRouter(prefix="/api/v1/challenges/{name}/files", responses=ERROR_RESPONSES)
PUBLIC: dict[str, Any] = {"security": [{}, {"HTTPBearer": []}]}


@router.get("", openapi_extra=PUBLIC)
async def list_files(name: str, platform: PlatformDep, principal: MaybePrincipalDep) -> FileListing:
    """The challenge's files: public data, starting kit, environment images, extras.

    Each with name, phase, kind, size, sha256 and url; built on the first call.
    """
    return await run_in_threadpool(files.listing, platform, principal, name)


@router.get(
    "/{file}",
    openapi_extra=PUBLIC,
    response_class=Response,
    responses={200: {"content": {"application/octet-stream": {}}}, 206: {}, 304: {}},
)
async def get_file(
    name: str, file: str, request: Request, platform: PlatformDep, principal: MaybePrincipalDep
) -> Response:
    """One file's bytes, streamed; ``Range`` and ``If-Range`` honoured, ETag the sha256."""
    info, path = await run_in_threadpool(files.open_file, platform, principal, name, file)
    return download(request, info, path)
