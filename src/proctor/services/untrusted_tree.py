"""Copy a folder someone else wrote, following its symbolic links only where they stay inside.

A challenge or bundle folder is often a git checkout, which stores links as they are: a page
``pages/overview.md -> /proc/self/environ`` would publish the copier's environment, a data
folder ``-> ../other-challenge/reference`` another challenge's references. :func:`copy_inside`
copies such a tree with every link replaced by what it points to, as a regular file or
folder, when that lies inside the folder; a link leading out of it, pointing to nothing or
looping is refused, naming the link (its path in the folder) and its target. The top path
given may itself be a link: the caller chose it; the links below it are the tree's.

Files that are neither regular files nor folders (FIFOs, sockets, devices) are refused. The
bytes reached through links are capped (``linked_bytes``): links to folders can repeat a
tree exponentially without looping. Folders are walked with an explicit stack (any depth).
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from proctor.errors import ConfigError

BLOCK = 4096
"""What each file or folder reached through a link counts at least, against ``linked_bytes``."""
LINKED_BYTES = 1 << 30
"""The default cap on the bytes a copy reaches through links (1 GiB)."""
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafeTreeError(ConfigError):
    """A folder holds a link leaving it, pointing to nothing or looping, or a special file.

    A ``ConfigError`` (the caller must change the folder: exit 2); the API answers it 422.
    """


def _keep_all(_name: str) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class _Level:
    """One folder to copy: its real path, its path in the tree, where it goes, its ancestors."""

    real: Path
    inside: PurePosixPath
    target: Path
    chain: frozenset[Path]
    linked: bool


@dataclass
class _Copy:
    root: Path
    shown: Path
    linked_bytes: int
    reached: int = 0

    def refuse(self, inside: PurePosixPath, target: str, why: str) -> UnsafeTreeError:
        return UnsafeTreeError(
            f"{inside} is a symbolic link to {target!r}, {why}: put the file or folder itself "
            "there, or remove the link",
            path=self.shown,
        )

    def follow(self, path: Path, inside: PurePosixPath) -> Path:
        """The real path the link at ``path`` leads to, inside the root, or refuse it."""
        target = os.readlink(path)
        try:
            real = Path(os.path.realpath(path, strict=True))
        except FileNotFoundError:
            loose = Path(os.path.realpath(path))
            if not loose.is_relative_to(self.root):
                raise self.refuse(
                    inside, target, f"which leads outside the folder ({loose})"
                ) from None
            raise self.refuse(inside, target, "which points to nothing") from None
        except OSError:
            raise self.refuse(inside, target, "which loops (links lead back to it)") from None
        if not real.is_relative_to(self.root):
            raise self.refuse(inside, target, f"which leads outside the folder ({real})")
        return real

    def charge(self, size: int, inside: PurePosixPath) -> None:
        """Count what a link brings; refuse past ``linked_bytes``."""
        self.reached += size + BLOCK
        if self.reached > self.linked_bytes:
            raise UnsafeTreeError(
                f"{inside}: the folder's links bring more than {self.linked_bytes} bytes (links "
                "to folders repeat what they point to): put the files themselves in the folder",
                path=self.shown,
            )


def copy_inside(
    source: Path,
    dest: Path,
    *,
    skip: Callable[[str], bool] = _keep_all,
    linked_bytes: int = LINKED_BYTES,
    exist_ok: bool = False,
) -> None:
    """Copy the folder ``source`` to ``dest``, its links resolved inside it (see the module).

    ``skip``: names of files and folders left out, at any level. ``exist_ok``: ``dest`` and
    its folders may exist (files are overwritten). Raises ``UnsafeTreeError`` naming ``source`` and
    the link for a link leaving the folder, pointing to nothing or looping, and for a file that
    is neither a regular file nor a folder.
    """
    root = Path(os.path.realpath(source))
    if not root.is_dir():
        raise ConfigError("not a folder: give a folder", path=source)
    copy = _Copy(root, source, linked_bytes)
    dest.mkdir(parents=True, exist_ok=exist_ok)
    stack = [_Level(root, PurePosixPath(), dest, frozenset({root}), linked=False)]
    while stack:
        level = stack.pop()
        for name in sorted(os.listdir(level.real)):
            if skip(name):
                continue
            found = _entry(copy, level, name)
            if found is not None:
                stack.append(found)


def _entry(copy: _Copy, level: _Level, name: str) -> _Level | None:
    """Copy one file of ``level`` (or make one folder: the level to copy it is returned)."""
    path, inside, target = level.real / name, level.inside / name, level.target / name
    info = os.lstat(path)
    linked = level.linked
    if stat.S_ISLNK(info.st_mode):
        path = copy.follow(path, inside)
        info = os.stat(path)
        linked = True
    if stat.S_ISDIR(info.st_mode):
        if path in level.chain:
            raise copy.refuse(
                inside, os.readlink(level.real / name), "which loops (a folder in it)"
            )
        if linked:
            copy.charge(0, inside)
        target.mkdir(exist_ok=True)
        return _Level(path, inside, target, level.chain | {path}, linked)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeTreeError(
            f"{inside} is neither a file nor a folder (a FIFO, socket or device): remove it",
            path=copy.shown,
        )
    if linked:
        copy.charge(info.st_size, inside)
    _copy_file(path, target)
    return None


def _copy_file(real: Path, target: Path) -> None:
    """Copy the regular file at the link-free path ``real`` to ``target`` (its rwx bits kept)."""
    descriptor = os.open(real, READ_FLAGS)
    with os.fdopen(descriptor, "rb") as reading:
        info = os.fstat(reading.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeTreeError(f"{real} changed while it was copied: copy again")
        if target.is_symlink():
            target.unlink()
        with target.open("wb") as writing:
            shutil.copyfileobj(reading, writing, 1 << 20)
    target.chmod(stat.S_IMODE(info.st_mode) & 0o777)
