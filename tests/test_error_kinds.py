"""Each error class carries its kind on the wire; a client finds the class again by its kind.

The server answers ``{"error": {"kind", "message"}}`` (``web.errors.kind_of``) and the client
raises the class ``proctor.errors.error_type`` finds for the kind; a kind it does not know is a
platform fault.
"""

from __future__ import annotations

import httpx
import pytest

from proctor.errors import (
    ArchiveError,
    AuthenticationError,
    ConfigError,
    EntryError,
    ForbiddenError,
    InputFileError,
    JobCancelledError,
    ManifestError,
    NotFoundError,
    PlatformError,
    ProctorError,
    RefusedError,
    UsageError,
    error_type,
)
from proctor.services.platform.client import _error_of
from proctor.services.platform.uploads import (
    ArtifactTooLargeError,
    UploadsBusyError,
    UploadTooSlowError,
)
from proctor.web.errors import kind_of

NAMED = [
    ("usage", UsageError),
    ("config", ConfigError),
    ("unauthenticated", AuthenticationError),
    ("not_found", NotFoundError),
    ("forbidden", ForbiddenError),
    ("refused", RefusedError),
    ("archive", ArchiveError),
    ("entry", EntryError),
    ("platform", PlatformError),
    ("too_large", ArtifactTooLargeError),
]


def _answer(kind: str, message: str = "said so") -> httpx.Response:
    return httpx.Response(400, json={"error": {"kind": kind, "message": message}})


@pytest.mark.parametrize(("kind", "error"), NAMED)
def test_each_kind_names_its_class_both_ways(kind: str, error: type[ProctorError]) -> None:
    assert kind_of(error("x")) == kind
    assert error_type(kind) is error
    raised = _error_of(_answer(kind))
    assert type(raised) is error and str(raised) == "said so"


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ManifestError("x"), "entry"),
        (InputFileError("x"), "usage"),
        (UploadTooSlowError("x"), "usage"),
        (UploadsBusyError("x", 3), "platform"),
        (JobCancelledError("x"), "internal"),
        (ValueError("x"), "internal"),
    ],
)
def test_an_error_without_a_kind_of_its_own_goes_by_its_parents(
    error: BaseException, kind: str
) -> None:
    assert kind_of(error) == kind


@pytest.mark.parametrize("kind", ["internal", "no_such_kind", ""])
def test_a_kind_the_client_does_not_know_is_a_platform_fault(kind: str) -> None:
    raised = _error_of(_answer(kind))
    assert type(raised) is PlatformError and str(raised) == "said so"
