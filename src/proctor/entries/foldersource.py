"""Reading an entry that arrives as a folder, with the same rules as an archive.

The walk holds a descriptor for each folder and opens every child relative to it with
``O_NOFOLLOW``, so it never leaves the folder: symlinks (wherever they point), hard-linked
files, devices, FIFOs and sockets are refused, not copied. Files are opened non-blocking, so a
FIFO swapped in after the first pass cannot hang the copy; ``fstat`` of the open file decides.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Generator
from pathlib import Path
from typing import IO

from proctor.entries.fsafe import DIR_FLAGS
from proctor.entries.limits import Kind, Member, special_kind
from proctor.entries.litter import litter_prefix
from proctor.entries.names import member_parts
from proctor.errors import ArchiveError

_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class FolderSource:
    """A folder on disk (the top-level path may be a link; nothing inside it may)."""

    packed_size: int | None = None

    def __init__(self, path: Path) -> None:
        self.path = path

    def members(self) -> Generator[Member, None, None]:
        """Every file and folder below the root, in sorted order, checked by ``lstat``."""
        root = os.open(self.path, DIR_FLAGS & ~os.O_NOFOLLOW)
        try:
            for member, _ in _walk(root, (), open_files=False):
                yield member
        finally:
            os.close(root)

    def contents(self) -> Generator[tuple[Member, IO[bytes] | None], None, None]:
        """Every member with an open stream of its data (``None`` for folders)."""
        root = os.open(self.path, DIR_FLAGS & ~os.O_NOFOLLOW)
        try:
            yield from _walk(root, (), open_files=True)
        finally:
            os.close(root)


def _walk(
    dir_fd: int, prefix: tuple[str, ...], *, open_files: bool
) -> Generator[tuple[Member, IO[bytes] | None], None, None]:
    for name in sorted(os.listdir(dir_fd)):
        path = "/".join((*prefix, name))
        parts = member_parts(path, label="file")
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            yield Member(path, parts, Kind.DIR), None
            if litter_prefix(parts, is_dir=True) is not None:
                continue  # left out whole by the unpacker: a .git/ may hold links of its own
            child = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
            try:
                yield from _walk(child, parts, open_files=open_files)
            finally:
                os.close(child)
        elif not open_files:
            yield _file_member(path, parts, info), None
        else:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
            with os.fdopen(fd, "rb") as stream:
                yield _file_member(path, parts, os.fstat(fd)), stream


def _file_member(path: str, parts: tuple[str, ...], info: os.stat_result) -> Member:
    """A ``Member`` for a regular, singly linked file, or ``ArchiveError`` saying why not."""
    kind = special_kind(info.st_mode)
    if kind == "symbolic link":
        raise ArchiveError(
            f"file {path!r} is a symbolic link: entries may not contain links; "
            "replace it with a copy of the file it points to"
        )
    if kind is not None or not stat.S_ISREG(info.st_mode):
        raise ArchiveError(
            f"file {path!r} is a {kind or 'special file'}: entries may contain only regular "
            "files and folders; remove it"
        )
    if info.st_nlink > 1:
        raise ArchiveError(
            f"file {path!r} has {info.st_nlink} hard links: entries may not contain hard links; "
            "replace it with a plain copy"
        )
    return Member(path, parts, Kind.FILE, size=info.st_size, executable=bool(info.st_mode & 0o111))
