"""Operating-system and version-control litter: files an upload carries that nobody meant to send.

The official evaluators never looked at a ``.gitignore`` in a scenario folder, a Finder
``.DS_Store`` or a zip's ``__MACOSX/`` twin, so an upload holding them must not fail for it.
Such members are left out when an entry is unpacked, for every protocol, and listed in the prep
message. Only names that no evaluation reads are here: anything that could change a score
(a stray ``notes.txt`` among predictions, a ``.env`` an entry reads) is still the protocol's
business.
"""

from __future__ import annotations

LITTER_FOLDERS = frozenset({"__MACOSX", ".git", ".svn", ".hg", ".bzr", "CVS", ".Trashes",
                            ".Spotlight-V100", ".fseventsd", "$RECYCLE.BIN"})  # fmt: skip
"""Folders left out whole, wherever they sit (version-control stores, OS metadata)."""

LITTER_FILES = frozenset({".gitignore", ".gitattributes", ".gitmodules", ".gitkeep", ".git",
                          ".hgignore", ".hgtags", ".cvsignore", ".DS_Store", "Thumbs.db",
                          "ehthumbs.db", "desktop.ini", "Desktop.ini", ".directory",
                          "Icon\r"})  # fmt: skip
"""Files left out wherever they sit (``.git`` is also the file a git worktree holds)."""

APPLE_DOUBLE_PREFIX = "._"
"""macOS resource forks (``._name``) that archivers on a Mac add beside each file."""


def litter_prefix(parts: tuple[str, ...], *, is_dir: bool) -> tuple[str, ...] | None:
    """The litter item holding ``parts`` (itself or a litter folder above it), else None.

    >>> litter_prefix(("dev", "scenario1", ".gitignore"), is_dir=False)
    ('dev', 'scenario1', '.gitignore')
    >>> litter_prefix((".git", "objects", "ab"), is_dir=True)
    ('.git',)
    """
    for depth, name in enumerate(parts, start=1):
        last = depth == len(parts)
        if (not last or is_dir) and name in LITTER_FOLDERS:
            return parts[:depth]
        if last and not is_dir and is_litter_file(name):
            return parts
    return None


def is_litter_file(name: str) -> bool:
    """True for a file name that is OS or VCS litter (``.DS_Store``, ``._x``, ``Thumbs.db``)."""
    return name in LITTER_FILES or name.startswith(APPLE_DOUBLE_PREFIX)


def shown_name(parts: tuple[str, ...], *, is_folder: bool) -> str:
    """How a litter item is listed to the participant: a folder ends in ``/``."""
    return "/".join(parts) + ("/" if is_folder else "")


def describe_ignored(names: tuple[str, ...], *, limit: int = 8) -> str:
    """One clause listing what was left out: ``ignored OS/VCS litter: .DS_Store, .git/``."""
    shown = ", ".join(names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return f"ignored operating-system/version-control litter: {shown}{more}"
