"""The web face's one map from exception type to HTTP status, and the error body.

Every error is ``{"error": {"kind", "message"}}``; the kind names the type, so a client (the
CLI through ``services.client``) raises the same exception again on its side. A request
FastAPI cannot validate gets the same body (kind ``usage``, status 422), and every route
documents these answers in the OpenAPI schema (``ERROR_RESPONSES``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from proctor.errors import (
    ArchiveError,
    AuthenticationError,
    ConfigError,
    EntryError,
    ForbiddenError,
    NotFoundError,
    PlatformError,
    ProctorError,
    RefusedError,
    UsageError,
)
from proctor.services.platform.throttle import TooManyAttemptsError
from proctor.services.platform.uploads import (
    ArtifactTooLargeError,
    UploadsBusyError,
    UploadTooSlowError,
    UploadTypeError,
)
from proctor.services.untrusted_tree import UnsafeTreeError

HTTP_STATUSES: Mapping[type[BaseException], int] = MappingProxyType(
    {
        UsageError: 400,
        ConfigError: 400,
        AuthenticationError: 401,
        ForbiddenError: 403,
        NotFoundError: 404,
        UploadTooSlowError: 408,
        RefusedError: 409,
        ArtifactTooLargeError: 413,
        UploadTypeError: 415,
        TooManyAttemptsError: 429,
        EntryError: 422,
        UnsafeTreeError: 422,
        ArchiveError: 422,
        PlatformError: 503,
        ProctorError: 500,
    }
)


class ErrorDetail(BaseModel):
    kind: str
    message: str


class ErrorBody(BaseModel):
    """The one error body: ``{"error": {"kind", "message"}}``."""

    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text}
    for status, text in (
        (400, "The request cannot be done as asked"),
        (401, "No valid API token"),
        (403, "The caller may not do this"),
        (404, "No such thing (or another team's)"),
        (408, "The upload's body arrived slower than the minimum rate"),
        (409, "Refused for now: quota, phase closed, already done"),
        (413, "The upload is larger than the server takes"),
        (415, "Not a form upload"),
        (422, "A malformed request or a refused entry"),
        (503, "The platform cannot do this now"),
    )
}
"""Every route documents these error answers (the OpenAPI schema lists them)."""


def http_status(error: BaseException) -> int:
    """The status of the nearest type of ``error`` along its MRO (500 if none)."""
    for kind in type(error).__mro__:
        if kind in HTTP_STATUSES:
            return HTTP_STATUSES[kind]
    return 500


def kind_of(error: BaseException) -> str:
    """The ``kind`` field naming ``error``'s type for clients (its class's ``kind``)."""
    return error.kind if isinstance(error, ProctorError) else ProctorError.kind


def install_handlers(app: FastAPI) -> None:
    """Answer every ``ProctorError`` with its status and the one error body."""

    async def handle(_: Request, error: Exception) -> JSONResponse:
        body = {"error": {"kind": kind_of(error), "message": str(error)}}
        headers = None
        if isinstance(error, UploadsBusyError):
            headers = {"Retry-After": str(error.retry_after)}
        return JSONResponse(body, status_code=http_status(error), headers=headers)

    async def malformed(_: Request, error: Exception) -> JSONResponse:
        problems = error.errors() if isinstance(error, RequestValidationError) else []
        message = "; ".join(_problem(item) for item in problems) or "malformed request"
        body = {"error": {"kind": "usage", "message": f"the request is malformed: {message}"}}
        return JSONResponse(body, status_code=422)

    app.add_exception_handler(ProctorError, handle)
    app.add_exception_handler(RequestValidationError, malformed)


def _problem(item: Any) -> str:
    """One validation problem as ``where: what`` (``body.task: Field required``)."""
    where = ".".join(str(part) for part in item.get("loc", ()))
    return f"{where}: {item.get('msg', 'invalid')}" if where else str(item.get("msg", "invalid"))
