"""Upload refusals the faces map: too large (re-exported from the artifact store), wrong type."""

from __future__ import annotations

from proctor.errors import UsageError
from proctor.store.artifacts import ArtifactTooLargeError


class UploadTypeError(UsageError):
    """A request body that is not the form upload a route takes (wrong content type)."""


__all__ = ["ArtifactTooLargeError", "UploadTypeError"]
