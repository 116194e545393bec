"""Files as HTTP answers: challenge files (streamed, ranged) and small kept files.

A challenge file is streamed from disk, with ``Range``, ``ETag`` and 304; a small kept file
(an entry image's ``Dockerfile``) is an attachment, never shown inline. The ETag is the
file's sha256 (a strong validator: the bytes never change under a name of an installed
version). ``If-None-Match`` naming it answers 304; ``Range`` (and ``If-Range``) are
Starlette's ``FileResponse``'s, which reads the file in bounded chunks.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import Request, Response
from fastapi.responses import FileResponse

from proctor.services.platform.file_answers import ChallengeFile
from proctor.services.platform.image_facts import ImageFile

MEDIA_TYPES = {".gz": "application/gzip", ".tar": "application/x-tar"}


class ChunkedFile(FileResponse):
    """A ``FileResponse`` reading 1 MiB at a time (its memory per download: one chunk).

    A sixteenth of the ASGI messages of Starlette's 64 KiB reads: twice the throughput.
    """

    chunk_size = 1 << 20


def download(request: Request, info: ChallengeFile, path: Path) -> Response:
    """The file's answer: 304 when the client's copy is current, else the (ranged) bytes."""
    etag = f'"{info.sha256}"'
    headers = {"etag": etag, "cache-control": "private, max-age=0, must-revalidate"}
    asked = request.headers.get("if-none-match", "")
    if etag in [tag.strip().removeprefix("W/") for tag in asked.split(",")] or asked == "*":
        return Response(status_code=304, headers=headers)
    media = MEDIA_TYPES.get(path.suffix, "application/octet-stream")
    return ChunkedFile(
        path,
        media_type=media,
        filename=info.name,
        headers=headers,
        content_disposition_type="attachment",
    )


def attachment(kept: ImageFile) -> Response:
    """A kept file as a download, never shown inline (a participant wrote it)."""
    disposition = f'attachment; filename="{kept.filename}"'
    return Response(kept.data, media_type=kept.media_type,
                    headers={"Content-Disposition": disposition})  # fmt: skip
