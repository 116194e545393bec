"""A content-addressed artifact store: files named by their sha256 on a folder workers share.

``put`` writes through a temporary file in the store and renames it into place, so a reader
never sees half a file and two writers of the same content agree. An upload that must be
checked first is ``staged`` (copied under the size cap, read chunk by chunk) and only then
``kept``; a staged file that is not kept is deleted. Layout:
``ROOT/ab/cdef...`` (the first two hex digits name a folder).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from proctor.errors import UsageError

CHUNK = 1024 * 1024


class ArtifactTooLargeError(UsageError):
    """An upload is larger than the store accepts."""

    kind = "too_large"


@dataclass(frozen=True, slots=True)
class Staged:
    """An upload copied into the store but not yet an artifact: its file, sha256 and size."""

    path: Path
    sha256: str
    size: int


def _copy_capped(stream: BinaryIO, fd: int, max_bytes: int | None) -> tuple[str, int]:
    """Copy ``stream`` to the open file ``fd`` in chunks; its sha256 and size."""
    digest = hashlib.sha256()
    size = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := stream.read(CHUNK):
            size += len(chunk)
            if max_bytes is not None and size > max_bytes:
                raise ArtifactTooLargeError(
                    f"the upload is larger than {max_bytes} bytes: make the entry "
                    "smaller (leave training data and caches out)"
                )
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest(), size


class ArtifactStore:
    """Files by sha256 under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, digest: str) -> Path:
        """Where the artifact ``digest`` lives (it may not exist)."""
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise UsageError(f"{digest!r} is not a sha256 digest")
        return self.root / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        """True when the artifact ``digest`` is stored."""
        return self.path(digest).is_file()

    def put_stream(self, stream: BinaryIO, *, max_bytes: int | None = None) -> str:
        """Store what ``stream`` holds and return its sha256.

        Raises ``ArtifactTooLargeError`` past ``max_bytes`` (nothing is kept).
        """
        with self.staged(stream, max_bytes=max_bytes) as staged:
            return self.keep(staged)

    @contextmanager
    def staged(self, stream: BinaryIO, *, max_bytes: int | None = None) -> Iterator[Staged]:
        """Copy ``stream`` into a temporary file of the store, the cap checked while reading.

        The file is checked by the caller and either made an artifact (:meth:`keep`) or, when
        the block ends without that, deleted: a refused upload leaves nothing behind.
        Raises ``ArtifactTooLargeError`` as soon as more than ``max_bytes`` have been read.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".upload-", dir=self.root)
        try:
            digest, size = _copy_capped(stream, fd, max_bytes)
            yield Staged(Path(name), digest, size)
        finally:
            Path(name).unlink(missing_ok=True)

    def keep(self, staged: Staged) -> str:
        """Move a staged file into place as the artifact named by its sha256; the digest."""
        final = self.path(staged.sha256)
        final.parent.mkdir(exist_ok=True)
        os.replace(staged.path, final)
        return staged.sha256

    def copy_to(self, digest: str, dest: Path) -> Path:
        """Copy the artifact to ``dest`` (a file path) and return ``dest``."""
        shutil.copyfile(self.path(digest), dest)
        return dest
