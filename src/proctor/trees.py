"""Walk, copy and remove folder trees of any depth: what the host does to trees entries made.

An entry controls the shape of what it leaves in its home and output folders: a folder tree
10,000 levels deep is a few lines of shell. ``shutil.rmtree``, ``shutil.copytree`` and
``os.walk`` recurse once per level (``RecursionError`` past about 1,000 on Python 3.11), and
any path-based call fails past ``PATH_MAX`` (4096 bytes: 2,000 levels of one-letter names).
Everything here works level by level through folder descriptors, with an explicit stack of
names instead of recursion and at most two descriptors per tree open at a time: going back up
opens ``..`` and checks it is the folder it came from. Links are never followed; files that are
neither regular, folders nor links (FIFOs, sockets, devices) are removed but never copied or
opened. Callers run these when no process of the entry runs any more.

What a sandboxed run left is measured before it is copied (``past_caps``: apparent sizes, so a
sparse file counts in full, and entries) and copied within the same bounds (``copy_plain``);
``open_folder_below`` reaches a folder inside a tree a run could reshape without following a
link at any component.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
COPY_CHUNK = 1 << 24
BLOCK = 4096
"""A filesystem block: what a file or folder takes at least where it is copied."""


@dataclass(frozen=True, slots=True)
class Found:
    """One entry below the walked folder: the descriptor of its folder, its name, its lstat.

    ``folder_fd`` and ``trail`` (the names of the folders from the walked one down to it) are
    valid only until the walk goes on; use ``folder_fd`` with ``dir_fd=``.
    """

    folder_fd: int
    name: str
    info: os.stat_result
    trail: list[str] = field(default_factory=list, compare=False, repr=False)

    @property
    def path(self) -> str:
        """Its path relative to the walked folder (``a/b/name``)."""
        return "/".join([*self.trail, self.name])


def walk(root: Path | int) -> Iterator[Found]:
    """Every entry below the folder ``root``, parents before their children (any depth).

    ``root``: a path (its last component is not followed if a link) or an open folder
    descriptor (left open: the walk works on a duplicate).
    """
    fd = os.dup(root) if isinstance(root, int) else os.open(root, DIR_FLAGS)
    frames = [(_names(fd), _identity(os.fstat(fd)))]
    trail: list[str] = []
    try:
        while frames:
            names, _ = frames[-1]
            if not names:
                frames.pop()
                if frames:
                    fd = _up(fd, frames[-1][1])
                    trail.pop()
                continue
            name = names.pop()
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            yield Found(fd, name, info, trail)
            if stat.S_ISDIR(info.st_mode):
                fd = _down(fd, name, info)
                frames.append((_names(fd), _identity(info)))
                trail.append(name)
    finally:
        os.close(fd)


def apparent_bytes(root: Path) -> int:
    """The bytes a copy of ``root`` would write: its regular files in full (sparse ones too)."""
    return sum(f.info.st_size for f in walk(root) if stat.S_ISREG(f.info.st_mode))


def copy_bytes(source: Path) -> int:
    """Bytes a workspace needs to hold a copy of ``source``: its files, a block per entry.

    A folder counts a block for itself and for each folder below it, and each other entry its
    size and a block; anything else (a file, a link, nothing) its size and two blocks.
    """
    if not source.is_dir() or source.is_symlink():
        return (source.lstat().st_size + BLOCK if os.path.lexists(source) else 0) + BLOCK
    return BLOCK + sum(
        BLOCK if stat.S_ISDIR(item.info.st_mode) else item.info.st_size + BLOCK
        for item in walk(source)
    )


def copy_tree(source: Path, target: Path, *, top_meta: bool = True) -> None:
    """Copy the folder ``source`` into ``target`` (made if missing; if present, kept as is).

    Folders, regular files (contents, modes, times) and links (as links) are copied; other
    kinds are left out. Files of the same name in ``target`` make it fail (``EEXIST``).
    ``top_meta``: give ``target`` itself the mode and times of ``source`` too.
    """
    target.mkdir(parents=True, exist_ok=True)
    src = os.open(source, DIR_FLAGS)
    try:
        dst = os.open(target, DIR_FLAGS)
    except OSError:
        os.close(src)
        raise
    top = os.fstat(src)
    frames = [(_names(src), top, _identity(os.fstat(dst)))]
    try:
        while frames:
            names, folder_info, _ = frames[-1]
            if not names:
                frames.pop()
                if frames or top_meta:
                    _copy_folder_meta(dst, folder_info)
                if frames:
                    src = _up(src, _identity(frames[-1][1]))
                    dst = _up(dst, frames[-1][2])
                continue
            name = names.pop()
            info = os.stat(name, dir_fd=src, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                os.mkdir(name, 0o700, dir_fd=dst)
                child = os.stat(name, dir_fd=dst, follow_symlinks=False)
                src = _down(src, name, info)
                dst = _down(dst, name, child)
                frames.append((_names(src), info, _identity(child)))
            elif stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(name, dir_fd=src), name, dir_fd=dst)
                times = (info.st_atime_ns, info.st_mtime_ns)
                os.utime(name, ns=times, dir_fd=dst, follow_symlinks=False)
            elif stat.S_ISREG(info.st_mode):
                _copy_file(src, dst, name, info)
    finally:
        os.close(src)
        os.close(dst)


class ReplacedError(OSError):
    """A folder on the way was not a folder when opened (a link, a file, nothing).

    ``where``: its path as given; ``found``: what was there instead (``a symbolic link to
    '/etc'``).
    """

    def __init__(self, where: str, found: str) -> None:
        super().__init__(errno.ENOTDIR, f"{where} is {found}, not a folder")
        self.where = where
        self.found = found


def open_folder_below(root: Path, relative: str) -> int:
    """A descriptor of the folder ``root/relative``, no link followed at any step.

    ``root`` is opened by path (its last component must not be a link), then each component
    of ``relative`` (``.`` for ``root`` itself) relative to the one before. A component that
    is not a folder raises ``ReplacedError`` saying what was found; the caller closes the fd.
    """
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    fd = os.open(root, DIR_FLAGS)
    done: list[str] = []
    try:
        for part in parts:
            try:
                child = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as err:
                if err.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                    raise
                raise ReplacedError("/".join([*done, part]), describe(fd, part)) from None
            os.close(fd)
            fd = child
            done.append(part)
    except BaseException:
        os.close(fd)
        raise
    return fd


def describe(folder_fd: int, name: str) -> str:
    """What the entry ``name`` of the folder open as ``folder_fd`` is, in a few words."""
    try:
        info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except OSError:
        return "missing"
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(name, dir_fd=folder_fd)
        except OSError:
            return "a symbolic link"
        return f"a symbolic link to {target[:200]!r}"
    return f"a {kind(info.st_mode)}"


def kind(mode: int) -> str:
    """The kind of file ``mode`` tells (``folder``, ``regular file``, ``FIFO``...)."""
    kinds = ((stat.S_ISDIR, "folder"), (stat.S_ISREG, "regular file"), (stat.S_ISLNK,
             "symbolic link"), (stat.S_ISFIFO, "FIFO (named pipe)"), (stat.S_ISSOCK, "socket"),
             (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"))  # fmt: skip
    return next((name for test, name in kinds if test(mode)), "special file")


def past_caps(root: Path | int, *, max_bytes: int, max_entries: int) -> str | None:
    """None when ``root`` is within both caps, else what took it past one (its path first).

    Bytes are apparent sizes: a regular file counts its ``st_size`` in full, holes and all,
    as a copy would write it. Entries are every file, folder, link and special file below
    ``root``. Walks without following links; nothing is read or copied.
    """
    total = 0
    for entries, item in enumerate(walk(root), start=1):
        if entries > max_entries:
            return f"{item.path}: more than {max_entries} files and folders, past the cap"
        if stat.S_ISREG(item.info.st_mode):
            total += item.info.st_size
            if total > max_bytes:
                return (
                    f"{item.path}: {item.info.st_size} bytes (apparent size: holes count in "
                    f"full) take the files to {total} bytes, past the cap of {max_bytes} bytes"
                )
    return None


@dataclass(frozen=True, slots=True)
class PlainCopyBounds:
    """What a plain copy may take: bytes (apparent sizes), entries, depth, path bytes."""

    max_bytes: int
    max_entries: int
    max_depth: int
    max_path_bytes: int


def copy_plain(source: Path | int, dest: Path, bounds: PlainCopyBounds) -> str | None:
    """Copy the folder ``source`` into the folder ``dest`` (made): None, or what stopped it.

    Regular files (mode 0644, at most the size they had when opened) and folders (0755) only;
    links and special files are left out, never followed nor opened as what they point to.
    The copy stops, with a problem naming the entry (its path relative to ``source``), at the
    first entry past ``bounds`` or that cannot be copied (a full ``dest``); what was copied
    until then stays. ``source``: a path or an open folder descriptor (left open).
    """
    dest.mkdir(parents=True, exist_ok=True)
    dest.chmod(0o755)
    copier = _PlainCopier(bounds)
    try:
        for item in walk(source):
            problem = copier.copy(item, dest)
            if problem is not None:
                return f"{item.path[:120]}: {problem}"
    except OSError as err:
        return f"cannot be read ({os.strerror(err.errno or 0)})"
    return None


class _PlainCopier:
    """The state of one ``copy_plain``: the bytes left to copy, the entries made so far."""

    def __init__(self, bounds: PlainCopyBounds) -> None:
        self.bounds = bounds
        self.left = bounds.max_bytes
        self.entries = 0

    def copy(self, item: Found, dest: Path) -> str | None:
        """Copy one entry below ``dest``; None, or why it stops the copy."""
        bounds = self.bounds
        self.entries += 1
        if self.entries > bounds.max_entries:
            return f"more than {bounds.max_entries} files and folders, past the cap"
        if len(os.fsencode(item.path)) > bounds.max_path_bytes:
            return f"a path longer than {bounds.max_path_bytes} bytes"
        mode = item.info.st_mode
        try:
            if stat.S_ISDIR(mode):
                if len(item.trail) + 1 >= bounds.max_depth:
                    return f"folders nested deeper than {bounds.max_depth} levels"
                os.mkdir(dest.joinpath(*item.trail, item.name), 0o755)
            elif stat.S_ISREG(mode):
                return self._copy_file(item, dest.joinpath(*item.trail, item.name))
        except OSError as err:
            return f"cannot be copied ({os.strerror(err.errno or 0)})"
        return None

    def _copy_file(self, item: Found, target: Path) -> str | None:
        reading = os.open(item.name, FILE_FLAGS, dir_fd=item.folder_fd)
        try:
            info = os.fstat(reading)
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_size > self.left:
                total = self.bounds.max_bytes - self.left + info.st_size
                return (
                    f"{info.st_size} bytes (apparent size: holes count in full) take the files "
                    f"to {total} bytes, past the cap of {self.bounds.max_bytes} bytes"
                )
            self.left -= info.st_size
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            writing = os.open(target, flags, 0o644)
            try:
                os.fchmod(writing, 0o644)
                send_bytes(reading, writing, info.st_size)
            finally:
                os.close(writing)
        finally:
            os.close(reading)
        return None


def empty_tree(folder: Path) -> None:
    """Remove everything inside ``folder``, whatever its depth and modes; ``folder`` stays.

    Each sub-folder is emptied, then removed on the way back up (``rmdir`` in its parent).
    """
    fd = os.open(folder, DIR_FLAGS)
    frames = [(_names(fd), _identity(os.fstat(fd)), "")]
    try:
        while frames:
            names, _, here = frames[-1]
            if not names:
                frames.pop()
                if frames:
                    fd = _up(fd, frames[-1][1])
                    os.rmdir(here, dir_fd=fd)
                continue
            name = names.pop()
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode):
                os.unlink(name, dir_fd=fd)
                continue
            os.chmod(name, 0o700, dir_fd=fd)  # a folder (checked): open and writable to us
            fd = _down(fd, name, info)
            frames.append((_names(fd), _identity(info), name))
    finally:
        os.close(fd)


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything below it (a link is removed, not followed); missing: no-op."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        path.unlink()
        return
    empty_tree(path)
    os.rmdir(path)


def remove_tree_quietly(path: Path) -> None:
    """``remove_tree`` that leaves what it cannot remove (clean-up that must not fail)."""
    with contextlib.suppress(OSError):
        remove_tree(path)


def _names(fd: int) -> list[str]:
    """The names in the folder open as ``fd``, sorted so that ``pop`` takes them in order."""
    return sorted(os.listdir(fd), reverse=True)


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _down(fd: int, name: str, info: os.stat_result) -> int:
    """Open the sub-folder ``name`` (the one ``info`` describes) and close ``fd``."""
    child = os.open(name, DIR_FLAGS, dir_fd=fd)
    if _identity(os.fstat(child)) != _identity(info):
        os.close(child)
        raise OSError(errno.ESTALE, "a folder was replaced during a walk", name)
    os.close(fd)
    return child


def _up(fd: int, expected: tuple[int, int]) -> int:
    """Open the parent of ``fd`` (it must be the folder ``expected``) and close ``fd``."""
    parent = os.open("..", DIR_FLAGS, dir_fd=fd)
    if _identity(os.fstat(parent)) != expected:
        os.close(parent)
        raise OSError(errno.ESTALE, "a folder was moved during a walk")
    os.close(fd)
    return parent


def _copy_file(src: int, dst: int, name: str, info: os.stat_result) -> None:
    reader = os.open(name, FILE_FLAGS, dir_fd=src)
    try:
        if not stat.S_ISREG(os.fstat(reader).st_mode):
            return
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        writer = os.open(name, flags, 0o600, dir_fd=dst)
        try:
            while os.sendfile(writer, reader, None, COPY_CHUNK) > 0:
                pass
            os.fchmod(writer, stat.S_IMODE(info.st_mode))
            os.utime(writer, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(writer)
    finally:
        os.close(reader)


def _copy_folder_meta(fd: int, info: os.stat_result) -> None:
    os.fchmod(fd, stat.S_IMODE(info.st_mode))
    os.utime(fd, ns=(info.st_atime_ns, info.st_mtime_ns))


def send_bytes(reading: int, writing: int, size: int) -> None:
    """Send the first ``size`` bytes of ``reading`` to ``writing`` (fewer if it is shorter)."""
    copied = 0
    while copied < size:
        sent = os.sendfile(writing, reading, copied, min(COPY_CHUNK, size - copied))
        if sent == 0:
            break
        copied += sent
