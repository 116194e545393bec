"""Archive member names: the one place that decides whether a name is safe to create.

A safe name is relative, uses ``/`` as its only separator, has no ``..`` component, no control
characters, is valid UTF-8 and stays within modest length and depth bounds. ``.`` components
and repeated slashes are dropped, so ``./entry//next.sh`` becomes ``("entry", "next.sh")``.
"""

from __future__ import annotations

import re
import unicodedata

from proctor.errors import ArchiveError

MAX_PATH_BYTES = 1024
"""Longest accepted member path, in UTF-8 bytes."""

MAX_PART_BYTES = 255
"""Longest accepted path component, in UTF-8 bytes (the usual file system limit)."""

MAX_DEPTH = 64
"""Deepest accepted folder nesting; also bounds the open descriptors of a folder walk."""

_DRIVE = re.compile(r"[A-Za-z]:")


def member_parts(name: str, *, label: str = "member") -> tuple[str, ...]:
    """Split ``name`` into safe path components, or raise ``ArchiveError`` saying what to fix.

    ``label`` is the noun used in messages ("member" for archives, "file" for folders). The
    archive root itself (``""``, ``"."``, ``"./"``) yields ``()``.

    >>> member_parts("./entry//next.sh")
    ('entry', 'next.sh')
    """
    what = f"{label} {name!r}"
    if any(unicodedata.category(char) == "Cc" for char in name):
        raise ArchiveError(
            f"{what} has a control character (NUL, newline, tab, ...) in its name: "
            "rename it using printable characters only"
        )
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise ArchiveError(f"{what} has a name that is not valid UTF-8: rename it") from None
    _reject_rooted(name, what)
    parts = tuple(part for part in name.split("/") if part not in ("", "."))
    if ".." in parts:
        raise ArchiveError(
            f"{what} contains a '..' component that points outside the entry: "
            "archive only files inside the entry folder"
        )
    _reject_oversized(parts, size, what)
    return parts


def _reject_rooted(name: str, what: str) -> None:
    """Refuse names that are absolute, carry a drive letter or use backslashes."""
    if "\\" in name:
        raise ArchiveError(
            f"{what} has a backslash in its name: folders must be separated by '/'; "
            "re-create the archive with zip or tar instead of renaming files by hand"
        )
    if name.startswith("/"):
        raise ArchiveError(
            f"{what} has an absolute path: members must be relative to the entry; "
            "create the archive from inside the folder that holds the entry"
        )
    if _DRIVE.match(name):
        raise ArchiveError(
            f"{what} starts with a drive letter: members must be relative to the entry; "
            "create the archive from inside the folder that holds the entry"
        )


def _reject_oversized(parts: tuple[str, ...], size: int, what: str) -> None:
    """Refuse names too long or too deep to be an honest entry file."""
    if size > MAX_PATH_BYTES:
        raise ArchiveError(f"{what} has a path longer than {MAX_PATH_BYTES} bytes: shorten it")
    if any(len(part.encode("utf-8")) > MAX_PART_BYTES for part in parts):
        raise ArchiveError(
            f"{what} has a file or folder name longer than {MAX_PART_BYTES} bytes: shorten it"
        )
    if len(parts) > MAX_DEPTH:
        raise ArchiveError(f"{what} is nested more than {MAX_DEPTH} folders deep: flatten it")
