"""Form uploads read as a stream: the size cap enforced while reading, files spooled to disk.

FastAPI's ``File()`` parameters parse the whole body before a route runs, with no cap on
its size; upload routes take the request instead and read it through :func:`read_upload`,
which counts the body's bytes as they arrive and stops at the cap (plus room for the form's
headers and small fields). The file part is spooled (at most 1 MiB in memory, the rest on
disk) and handed to the services as a stream, which copy it under the exact cap.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO

from fastapi import Request
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from proctor.errors import UsageError
from proctor.services.platform.uploads import ArtifactTooLargeError, UploadTypeError

FORM_SLACK = 64 * 1024
"""Bytes a form may carry besides its file: part headers, boundaries, small fields."""


@dataclass(frozen=True, slots=True)
class Upload:
    """The file of a form upload (a spooled stream) and the form's text fields."""

    file: BinaryIO
    fields: Mapping[str, str]


def _too_large(limit: int) -> ArtifactTooLargeError:
    return ArtifactTooLargeError(
        f"the upload is larger than {limit} bytes: make the entry smaller (leave training "
        "data and caches out)"
    )


def _check_type(request: Request, field: str) -> None:
    """Refuse a body that is not ``multipart/form-data`` with a boundary."""
    kind = request.headers.get("content-type", "")
    if not kind.lower().startswith("multipart/form-data") or "boundary=" not in kind:
        raise UploadTypeError(
            f"this route takes a multipart/form-data upload with the archive in the field "
            f"{field!r}, not {kind or 'a body without a content type'}: send the file as a "
            f"form upload (curl -F {field}=@entry.tar.gz, or the proctor command)"
        )


async def _capped(request: Request, limit: int) -> AsyncGenerator[bytes, None]:
    """The request body chunk by chunk; ``ArtifactTooLargeError`` once past ``limit``."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit + FORM_SLACK:
        raise _too_large(limit)
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > limit + FORM_SLACK:
            raise _too_large(limit)
        yield chunk


@asynccontextmanager
async def read_upload(request: Request, field: str, limit: int) -> AsyncIterator[Upload]:
    """The form's file ``field`` and text fields; the spooled file is closed afterwards.

    Refusals: ``UploadTypeError`` (not a form upload), ``UsageError`` (a malformed form, no
    file in ``field``), ``ArtifactTooLargeError`` (the body passed ``limit`` bytes and room
    for the form, found while reading, so a large body is never read whole).
    """
    _check_type(request, field)
    parser = MultiPartParser(request.headers, _capped(request, limit), max_files=1, max_fields=8)
    try:
        form = await parser.parse()
    except (MultiPartException, KeyError, ValueError) as err:
        raise UsageError(
            f"the upload is not a well-formed multipart form ({err}): send the file as a form "
            f"upload in the field {field!r}"
        ) from None
    try:
        found = form.get(field)
        if not isinstance(found, UploadFile):
            raise UsageError(
                f"the form has no file in the field {field!r}: send the archive as {field}=@FILE"
            )
        fields = {k: v for k, v in form.multi_items() if isinstance(v, str)}
        yield Upload(found.file, fields)
    finally:
        await form.close()


def form_body(field: str, description: str, **text: str) -> dict[str, Any]:
    """The OpenAPI ``requestBody`` of a form upload with file ``field`` and ``text`` fields."""
    properties: dict[str, Any] = {
        field: {"type": "string", "format": "binary", "description": description}
    }
    properties |= {name: {"type": "string", "description": doc} for name, doc in text.items()}
    schema = {"type": "object", "required": [field], "properties": properties}
    return {
        "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": schema}}}
    }
