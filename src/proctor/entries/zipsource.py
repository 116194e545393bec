"""Reading a zip entry: members from the central directory, data through ``zipfile``.

Only regular files and folders pass; the Unix mode in ``external_attr >> 16`` decides the kind
and the executable bit. ``orig_filename`` is used because ``zipfile`` cuts names at a NUL.
"""

from __future__ import annotations

import stat
import zipfile
from collections.abc import Generator
from pathlib import Path
from typing import IO

from proctor.entries.limits import Kind, Member, special_kind
from proctor.entries.names import member_parts
from proctor.errors import ArchiveError

_SUPPORTED = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_ENCRYPTED = 0x1
_MAX_LINK_BYTES = 1024


class ZipSource:
    """A zip archive on disk; ``packed_size`` is its size in bytes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.packed_size: int | None = path.stat().st_size

    def members(self) -> Generator[Member, None, None]:
        """Every member as the central directory declares it, checked for kind and name."""
        with zipfile.ZipFile(self.path) as archive:
            for info in archive.infolist():
                yield zip_member(archive, info)

    def contents(self) -> Generator[tuple[Member, IO[bytes] | None], None, None]:
        """Every member with a stream of its data (``None`` for folders)."""
        with zipfile.ZipFile(self.path) as archive:
            for info in archive.infolist():
                member = zip_member(archive, info)
                if member.kind is Kind.DIR:
                    yield member, None
                    continue
                with archive.open(info) as stream:
                    yield member, stream


def zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Member:
    """Turn one central-directory record into a ``Member`` or raise ``ArchiveError``."""
    name = info.orig_filename
    what = f"member {name!r}"
    parts = member_parts(name)
    if info.flag_bits & _ENCRYPTED:
        raise ArchiveError(f"{what} is encrypted: create the archive without a password")
    if info.compress_type not in _SUPPORTED:
        raise ArchiveError(
            f"{what} uses compression method {info.compress_type}, which is not supported: "
            "re-create the archive with the usual deflate compression"
        )
    mode = info.external_attr >> 16
    kind = special_kind(mode)
    if kind == "symbolic link":
        raise ArchiveError(
            f"{what} is a symbolic link (to {_link_target(archive, info)!r}): archives may not "
            "contain links; put the file itself in the archive (zip without -y / --symlinks)"
        )
    if kind is not None:
        raise ArchiveError(
            f"{what} is a {kind}: archives may contain only regular files and folders; remove it"
        )
    if name.endswith("/") or stat.S_ISDIR(mode):
        if info.file_size:
            raise ArchiveError(f"{what} is a folder that holds data: re-create the archive")
        return Member(name, parts, Kind.DIR)
    return Member(
        name,
        parts,
        Kind.FILE,
        size=info.file_size,
        packed=info.compress_size,
        executable=bool(mode & 0o111),
    )


def _link_target(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    """The target a symlink member names, for the message only; ``?`` if unreadable."""
    if info.file_size > _MAX_LINK_BYTES or info.compress_size > _MAX_LINK_BYTES:
        return "?"
    try:
        return archive.read(info).decode("utf-8", "replace")
    except Exception:  # any failure only costs the message its detail
        return "?"
