"""Writing below a folder without ever following a link.

Every path is walked one component at a time from an open folder descriptor: folders are
opened with ``O_NOFOLLOW | O_DIRECTORY`` and files created with ``O_CREAT | O_EXCL |
O_NOFOLLOW``, so a symlink planted anywhere below the destination makes the write fail instead
of landing outside it. Modes are set explicitly (0o755 folders and executables, 0o644 other
files): never setuid/setgid/sticky, never the archive's owner, and readable by the sandbox uid.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
DIR_MODE = 0o755
EXEC_MODE = 0o755
FILE_MODE = 0o644


def open_dir(base_fd: int, parts: Iterable[str], *, create: bool) -> int:
    """Open the folder ``parts`` below ``base_fd``, creating missing ones if ``create``.

    Returns a new descriptor the caller must close. Raises ``OSError`` (``ELOOP``, ``ENOTDIR``)
    when a component is a link or not a folder.
    """
    fd = os.dup(base_fd)
    try:
        for part in parts:
            made = False
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, DIR_MODE, dir_fd=fd)
                    made = True
            child = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
            if made:
                os.fchmod(fd, DIR_MODE)  # the umask must not hide files from the sandbox uid
    except BaseException:
        os.close(fd)
        raise
    return fd


def make_dir(base_fd: int, parts: tuple[str, ...]) -> None:
    """Create the folder ``parts`` (and its parents) below ``base_fd``."""
    os.close(open_dir(base_fd, parts, create=True))


def write_file(
    base_fd: int, parts: tuple[str, ...], chunks: Iterable[bytes], *, executable: bool
) -> None:
    """Create the new file ``parts`` below ``base_fd`` from ``chunks``.

    The file must not exist yet; parents are created as needed. Its mode is 0o755 if
    ``executable`` else 0o644.
    """
    parent = open_dir(base_fd, parts[:-1], create=True)
    try:
        fd = os.open(parts[-1], _NEW_FILE_FLAGS, 0o600, dir_fd=parent)
    finally:
        os.close(parent)
    with os.fdopen(fd, "wb") as out:
        for chunk in chunks:
            out.write(chunk)
        os.fchmod(fd, EXEC_MODE if executable else FILE_MODE)


@contextlib.contextmanager
def fresh_dest(dest: Path) -> Iterator[int]:
    """Yield a descriptor of the empty folder ``dest``; on any failure leave nothing behind.

    ``dest`` must not exist or be an empty folder (not a link to one). Missing parents are
    created. If this call created ``dest`` (or its parents), a failure removes them; if
    ``dest`` existed, a failure empties it again.
    """
    made = _make_parents(dest)
    try:
        os.mkdir(dest, DIR_MODE)
        made.append(dest)
    except FileExistsError:
        pass
    except BaseException:
        _remove_made(made)
        raise
    fd = os.open(dest, DIR_FLAGS)  # refuses a link at dest itself (ELOOP)
    if dest not in made and os.listdir(fd):
        os.close(fd)
        raise FileExistsError(
            errno.ENOTEMPTY, "unpack needs an empty or missing destination folder", str(dest)
        )
    try:
        yield fd
    except BaseException:
        if dest in made:
            shutil.rmtree(dest)
        else:
            _empty(fd, dest)
        _remove_made(made)
        raise
    finally:
        os.close(fd)


def _make_parents(dest: Path) -> list[Path]:
    """Create ``dest``'s missing parents, top down; return those this call created."""
    made: list[Path] = []
    for parent in reversed(dest.parents):
        try:
            os.mkdir(parent, DIR_MODE)
        except FileExistsError:
            continue
        except BaseException:
            _remove_made(made)
            raise
        made.append(parent)
    return made


def _remove_made(made: list[Path]) -> None:
    """Remove the folders in ``made`` bottom up, unless something else has filled them."""
    for path in reversed(made):
        with contextlib.suppress(OSError):
            os.rmdir(path)


def _empty(fd: int, dest: Path) -> None:
    """Remove everything inside the folder open as ``fd`` (links are removed, not followed)."""
    for name in os.listdir(fd):
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(dest / name)
        else:
            os.unlink(name, dir_fd=fd)
