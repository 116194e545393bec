"""Root filesystems for sandboxed runs: the host's ``/usr``, a tree, or a privately mounted image.

A ``RootFilesystem`` names a tree folder and optionally its packed read-only image. As root,
each session mounts the image through a loop device of its own (read-only, direct I/O where
the backing file system allows it), so two jobs share no page-cache or lock state through their
root; the mount goes away with the session. Without root the tree is bound as it is (its page
cache is shared with other runs on the host, which the report says).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from proctor.errors import PlatformError
from proctor.host import mounts, pid_alive

MOUNT_PREFIX = "root-"
TOOL_TIMEOUT_S = 60


@dataclass(frozen=True, slots=True)
class RootFilesystem:
    """A root filesystem: ``tree`` (a folder holding ``usr``, ``etc``…) and its ``image``."""

    tree: Path
    image: Path | None = None


@dataclass(frozen=True, slots=True)
class AttachedRoot:
    """The root one session's runs use: the folder to bind and how it got there.

    ``private``: mounted for this session alone (no page cache shared with other jobs).
    """

    folder: Path
    private: bool


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None and Path(f"/usr/sbin/{name}").exists():
        found = f"/usr/sbin/{name}"
    if found is None:
        raise PlatformError(f"`{name}` is not installed: apt-get install util-linux")
    return found


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - an argv list, no shell
        argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False
    )


def _attach_loop(image: Path) -> str:
    """A new read-only loop device over ``image`` (direct I/O when the file system allows)."""
    base = [_tool("losetup"), "--find", "--show", "--read-only"]
    done = _run([*base, "--direct-io=on", str(image)])
    if done.returncode != 0:
        done = _run([*base, str(image)])
    if done.returncode != 0:
        raise PlatformError(f"cannot attach {image} to a loop device: {done.stderr.strip()}")
    return done.stdout.strip()


def _detach_loop(device: str) -> None:
    _run([_tool("losetup"), "--detach", device])


@contextlib.contextmanager
def private_mount(image: Path, under: Path, tag: str) -> Iterator[Path]:
    """Mount ``image`` (erofs) read-only at a fresh folder below ``under`` for the block."""
    under.mkdir(parents=True, exist_ok=True)
    under.chmod(0o755)
    point = under / f"{MOUNT_PREFIX}{os.getpid()}-{tag}"
    point.mkdir(exist_ok=True)
    try:
        device = _attach_loop(image)
    except BaseException:
        with contextlib.suppress(OSError):
            point.rmdir()
        raise
    try:
        done = _run([_tool("mount"), "-t", "erofs", "-o", "ro,nodev,nosuid", device, str(point)])
        if done.returncode != 0:
            raise PlatformError(f"cannot mount {image} at {point}: {done.stderr.strip()}")
        try:
            yield point
        finally:
            _run([_tool("umount"), "--lazy", str(point)])
    finally:
        _detach_loop(device)
        with contextlib.suppress(OSError):
            point.rmdir()


@contextlib.contextmanager
def attach_root(
    root: RootFilesystem, *, is_root: bool, under: Path, tag: str
) -> Iterator[AttachedRoot]:
    """The root of one session: a private mount of the image as root, else the tree."""
    if is_root and root.image is not None:
        with private_mount(root.image, under, tag) as point:
            yield AttachedRoot(point, private=True)
        return
    if not (root.tree / "usr").is_dir():
        raise PlatformError(f"{root.tree} holds no usr/: not a root filesystem")
    yield AttachedRoot(root.tree, private=False)


def release_stale_roots(under: Path) -> int:
    """Unmount root mounts below ``under`` left by dead workers; returns how many."""
    released = 0
    if not under.is_dir():
        return released
    for point in sorted(under.glob(f"{MOUNT_PREFIX}*")):
        owner = point.name.removeprefix(MOUNT_PREFIX).partition("-")[0]
        if not owner.isdigit() or pid_alive(int(owner)):
            continue
        if os.path.ismount(point):
            device = _mount_source(point)
            _run([_tool("umount"), "--lazy", str(point)])
            if device.startswith("/dev/loop"):
                _detach_loop(device)
            released += 1
        with contextlib.suppress(OSError):
            point.rmdir()
    return released


def _mount_source(point: Path) -> str:
    """The source (device) of the mount at ``point``, from this namespace's mountinfo."""
    wanted = str(point.resolve())
    return next((m.source for m in mounts() if m.point == wanted), "")
