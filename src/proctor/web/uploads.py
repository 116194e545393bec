"""Form uploads read as a stream: the size cap and a minimum rate enforced while reading.

FastAPI's ``File()`` parameters parse the whole body before a route runs, with no cap on
its size; upload routes take the request instead and read it through :func:`read_upload`,
which counts the body's bytes as they arrive and stops at the cap (plus room for the form's
headers and small fields), and cuts off a body that brings less than ``min_bytes`` in any
``window_s`` seconds (:class:`MinimumRate`; 408, nothing stored). The file part is spooled
(at most 1 MiB in memory, the rest on disk) and handed to the services as a stream, which copy
it under the exact cap.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from fastapi import Request
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from proctor.errors import UsageError
from proctor.services.platform.uploads import (
    ArtifactTooLargeError,
    UploadTooSlowError,
    UploadTypeError,
)
from proctor.settings import ServiceSettings

MAX_FIELDS = 40
"""Text fields a form may carry: phase, CSRF token and a challenge's submission fields."""
FORM_SLACK = 64 * 1024
"""Bytes a form may carry besides its file: part headers, boundaries, small fields."""


@dataclass(frozen=True, slots=True)
class Upload:
    """The file of a form upload (a spooled stream), its name as sent, the text fields."""

    file: BinaryIO
    fields: Mapping[str, str]
    file_name: str | None = None


@dataclass
class MinimumRate:
    """A body must bring ``min_bytes`` in every ``window_s`` seconds (a sliding window).

    :meth:`deadline` is the moment the body is too slow if nothing more arrives; every chunk
    that arrives is :meth:`counted`. ``min_bytes`` 0 turns the check off.
    """

    min_bytes: int
    window_s: float
    started: float = field(default_factory=time.monotonic)
    _arrivals: deque[tuple[float, int]] = field(default_factory=deque)

    @classmethod
    def of(cls, settings: ServiceSettings) -> MinimumRate:
        """The service's rate (``PROCTOR_UPLOAD_MIN_BYTES`` in ``PROCTOR_UPLOAD_WINDOW_S``)."""
        return cls(settings.upload_min_bytes, settings.upload_window_s)

    def counted(self, size: int) -> None:
        """Note ``size`` bytes arriving now."""
        self._arrivals.append((time.monotonic(), size))

    def deadline(self) -> float | None:
        """When the window would hold less than ``min_bytes``; None when the check is off."""
        if self.min_bytes <= 0:
            return None
        total = 0
        for index in range(len(self._arrivals) - 1, -1, -1):
            at, size = self._arrivals[index]
            total += size
            if total >= self.min_bytes:
                for _ in range(index):  # older arrivals no longer matter
                    self._arrivals.popleft()
                return at + self.window_s
        return self.started + self.window_s

    def too_slow(self) -> UploadTooSlowError:
        """The refusal of a body that fell under the rate."""
        return UploadTooSlowError(
            f"the upload arrived slower than {self.min_bytes} bytes in {self.window_s:g} s and "
            "was cut off, nothing stored: send it again over a faster connection"
        )


async def _paced(request: Request, rate: MinimumRate | None) -> AsyncGenerator[bytes, None]:
    """The body's chunks; ``UploadTooSlowError`` once they arrive slower than ``rate``."""
    chunks = request.stream()
    while True:
        deadline = rate.deadline() if rate is not None else None
        try:
            if deadline is None:
                chunk = await anext(chunks)
            else:
                chunk = await asyncio.wait_for(anext(chunks), deadline - time.monotonic())
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise (rate or MinimumRate(0, 0)).too_slow() from None
        if rate is not None:
            rate.counted(len(chunk))
        yield chunk


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


async def _capped(
    request: Request, limit: int, rate: MinimumRate | None
) -> AsyncGenerator[bytes, None]:
    """The request body chunk by chunk; ``ArtifactTooLargeError`` once past ``limit``."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit + FORM_SLACK:
        raise _too_large(limit)
    seen = 0
    async for chunk in _paced(request, rate):
        seen += len(chunk)
        if seen > limit + FORM_SLACK:
            raise _too_large(limit)
        yield chunk


@asynccontextmanager
async def read_upload(
    request: Request, field: str, limit: int, rate: MinimumRate | None = None
) -> AsyncIterator[Upload]:
    """The form's file ``field`` and text fields; the spooled file is closed afterwards.

    Refusals: ``UploadTypeError`` (not a form upload), ``UsageError`` (a malformed form, no
    file in ``field``), ``ArtifactTooLargeError`` (the body passed ``limit`` bytes and room
    for the form, found while reading, so a large body is never read whole),
    ``UploadTooSlowError`` (the body fell under ``rate``).
    """
    _check_type(request, field)
    body = _capped(request, limit, rate)
    parser = MultiPartParser(request.headers, body, max_files=1, max_fields=MAX_FIELDS)
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
        yield Upload(found.file, fields, found.filename)
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
