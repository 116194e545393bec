"""Size-capped writable folders for sandboxed runs, and handing host files to a slot uid.

As root, a workspace is a tmpfs mounted at the folder with ``size`` (bytes) and ``nr_inodes``
caps, mode 0700, owned by the slot uid: one big file ends in ENOSPC (or EFBIG from
RLIMIT_FSIZE), many small files in ENOSPC once the inode cap is reached. Its pages are charged to
the memory cgroup of whoever writes them. Not as root, a workspace is a plain folder and its
size is not capped (only RLIMIT_FSIZE bounds single files).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import stat
import struct
from collections.abc import Iterator
from pathlib import Path

from proctor.errors import PlatformError
from proctor.host import mounts, pid_alive
from proctor.trees import walk

MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOSYMFOLLOW = 0x100
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MNT_DETACH = 0x2
BYTES_PER_INODE = 4096
MIN_INODES = 256
SOURCE = "proctor-ws"
"""The mount source of every workspace (mountinfo shows it inside: the same for all jobs)."""
LEGACY_PREFIX = "proctor-ws-"  # workspaces of older workers named their pid in the source
OWNER_XATTR = "trusted.proctor.owner"
"""The worker pid owning a workspace, on its root folder (``trusted.``: no run can read it)."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def inode_cap(size_bytes: int) -> int:
    """The number of files and folders a workspace of ``size_bytes`` may hold."""
    return max(MIN_INODES, size_bytes // BYTES_PER_INODE)


def mount_tmpfs(
    path: Path, *, size_bytes: int, uid: int, gid: int, owner_pid: int | None = None
) -> None:
    """Mount a capped tmpfs at ``path`` (which must exist), owned by ``uid:gid``, mode 0700.

    Nothing of the job shows in its mountinfo line: the source is ``proctor-ws`` and the owner
    is set on the root folder, not as a mount option (tmpfs prints ``uid=`` in host terms). The
    worker pid goes into a ``trusted.`` attribute so ``release_stale`` can tell the leftovers of
    dead workers from the live workspaces of others.
    """
    options = f"size={size_bytes},nr_inodes={inode_cap(size_bytes)},mode=0700"
    flags = MS_NOSUID | MS_NODEV
    if _libc().mount(SOURCE.encode(), os.fsencode(path), b"tmpfs", flags, options.encode()) != 0:
        err = ctypes.get_errno()
        raise PlatformError(f"cannot mount a tmpfs workspace at {path}: {os.strerror(err)}")
    try:
        owner = owner_pid if owner_pid is not None else os.getpid()
        os.setxattr(path, OWNER_XATTR, str(owner).encode())
        os.chown(path, uid, gid)
    except OSError as error:
        with contextlib.suppress(PlatformError):
            unmount(path)
        raise PlatformError(f"cannot hand the workspace at {path} to uid {uid}: {error}") from None


def unmount(path: Path) -> None:
    """Detach the mount at ``path`` (lazily, so a straggler holding a file cannot block it)."""
    if _libc().umount2(os.fsencode(path), MNT_DETACH) != 0:
        err = ctypes.get_errno()
        raise PlatformError(f"cannot unmount the workspace at {path}: {os.strerror(err)}")


@contextlib.contextmanager
def tmpfs_workspace(path: Path, *, size_bytes: int, uid: int, gid: int) -> Iterator[Path]:
    """A tmpfs workspace at ``path`` for the lifetime of the context; removed afterwards."""
    if size_bytes <= 0:
        raise ValueError(f"workspace size_bytes must be positive, got {size_bytes}")
    path.mkdir(parents=True, exist_ok=True)
    if os.path.ismount(path):
        raise PlatformError(f"{path} is already a mount point; refusing to stack a workspace")
    mount_tmpfs(path, size_bytes=size_bytes, uid=uid, gid=gid)
    try:
        yield path
    except BaseException:
        # Never let a failed unmount hide the error in flight: a leftover mount is released
        # by ``release_stale`` at the next start.
        with contextlib.suppress(PlatformError):
            unmount(path)
        with contextlib.suppress(OSError):
            path.rmdir()
        raise
    unmount(path)
    with contextlib.suppress(OSError):
        path.rmdir()


def give_to_uid(path: Path, uid: int, gid: int) -> None:
    """Make ``path`` and everything below it owned and writable by ``uid:gid``.

    Never follows symbolic links (a planted link must not hand a host file to the sandbox):
    links are re-owned themselves and skipped for modes. Needs root (``Settings.is_root``):
    callers without it have no other uid to give files to and skip the call.
    """
    os.chown(path, uid, gid, follow_symlinks=False)
    _add_rights(os.lstat(path).st_mode, str(path), None)
    if not path.is_symlink() and path.is_dir():
        for found in walk(path):  # level by level: an entry's tree may be of any depth
            os.chown(found.name, uid, gid, dir_fd=found.folder_fd, follow_symlinks=False)
            _add_rights(found.info.st_mode, found.name, found.folder_fd)


def _add_rights(mode: int, name: str, folder_fd: int | None) -> None:
    """Let the owner read and write a file, and also enter a folder (links: nothing)."""
    if stat.S_ISDIR(mode):
        os.chmod(name, stat.S_IMODE(mode) | stat.S_IRWXU, dir_fd=folder_fd)
    elif stat.S_ISREG(mode):
        os.chmod(name, stat.S_IMODE(mode) | stat.S_IRUSR | stat.S_IWUSR, dir_fd=folder_fd)


ACL_DEFAULT_XATTR = "system.posix_acl_default"
_ACL_EVERYONE_RWX = struct.pack("<I", 2) + b"".join(
    struct.pack("<HHI", tag, 7, 0xFFFFFFFF) for tag in (0x01, 0x04, 0x20)
)
"""A default ACL of owner, group and other ``rwx``: what is made below gets 0666/0777."""


def open_to_every_run(path: Path) -> None:
    """Let runs of any slot read and write in the workspace at ``path`` (a shared folder).

    Its root becomes mode 0777 and gets a default ACL, so what one run creates inside is
    readable and writable by the other (the umask does not apply below a default ACL), as
    two containers sharing a folder as one user. Only runs it is mounted into can reach it.
    Where the file system takes no ACL, new files keep the umask (readable by the other).
    A workspace that is a mount of its own (as root) is remounted ``nosymfollow``: a link one
    run plants there is not followed by the other (nor by the host).
    """
    os.chmod(path, 0o777)  # noqa: S103 - a folder two sandboxes share by design
    with contextlib.suppress(OSError):
        os.setxattr(path, ACL_DEFAULT_XATTR, _ACL_EVERYONE_RWX)
    if os.path.ismount(path):
        flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOSYMFOLLOW
        if _libc().mount(None, os.fsencode(path), None, flags, None) != 0:
            err = ctypes.get_errno()
            raise PlatformError(f"cannot remount {path} nosymfollow: {os.strerror(err)}")


def release_stale(under: Path, *, also: int | None = None) -> int:
    """Unmount workspaces below ``under`` left by dead workers (after a crash); returns how many.

    Call at worker start. Workspaces of live workers (any pid that still exists) are kept,
    except those of ``also`` (a stopping worker releasing its own).
    """
    released = 0
    root = os.path.realpath(under)
    for source, target in _tmpfs_mounts():
        inside = target == root or target.startswith(root.rstrip("/") + "/")
        owner = _owner(source, target) if inside else None
        if owner is not None and (owner == also or not pid_alive(owner)):
            unmount(Path(target))
            released += 1
    return released


def _owner(source: str, target: str) -> int | None:
    """The worker pid that mounted the workspace at ``target`` (None: not a workspace)."""
    if source.startswith(LEGACY_PREFIX):
        owner = source.removeprefix(LEGACY_PREFIX)
        return int(owner) if owner.isdigit() else None
    if source != SOURCE:
        return None
    try:
        owner = os.getxattr(target, OWNER_XATTR).decode()
    except OSError:
        return None
    return int(owner) if owner.isdigit() else None


def _tmpfs_mounts() -> list[tuple[str, str]]:
    """(source, mount point) of every tmpfs in this mount namespace, deepest first."""
    return [(m.source, m.point) for m in mounts() if m.fstype == "tmpfs"]
