"""Upload refusals the faces map, and the slots that bound how many uploads unpack at once.

Too large (re-exported from the artifact store), the wrong type, too slow (a body under the
minimum rate), or every unpacking slot busy past the bounded wait (503 with ``Retry-After``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

from proctor.errors import PlatformError, UsageError
from proctor.services.platform.resources import Platform
from proctor.store.artifacts import ArtifactTooLargeError


class UploadTypeError(UsageError):
    """A request body that is not the form upload a route takes (wrong content type)."""


class UploadTooSlowError(UsageError):
    """A request body arriving slower than the service's minimum rate (cut off, 408)."""


class UploadsBusyError(PlatformError):
    """Every unpacking slot stayed busy for the bounded wait; try again in ``retry_after`` s."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@contextmanager
def unpacking_slot(platform: Platform) -> Iterator[None]:
    """Hold one of the platform's unpacking slots; wait up to ``upload_wait_s`` for one.

    Raises ``UploadsBusyError`` when none came free in time (nothing was stored).
    """
    wait_s = platform.settings.upload_wait_s
    if not platform.unpacking.acquire(timeout=wait_s):
        retry = max(1, math.ceil(wait_s))
        raise UploadsBusyError(
            f"{platform.settings.upload_unpacks} uploads are being checked and none finished "
            f"within {wait_s:g} s: nothing was stored, send the entry again in {retry} s",
            retry,
        )
    try:
        yield
    finally:
        platform.unpacking.release()


__all__ = [
    "ArtifactTooLargeError",
    "UploadTooSlowError",
    "UploadTypeError",
    "UploadsBusyError",
    "unpacking_slot",
]
