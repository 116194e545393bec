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
LINK_PREFIX = "link-"
IMAGE_PREFIX = "img-"
TOOL_TIMEOUT_S = 60
LOOP_MAJOR = 7
ROOT_SOURCE = "proctor-root"
"""The mount source shown for a job's root image (``/proc/self/mountinfo``), the same for all."""


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


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - an argv list, no shell
        argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, check=False, cwd=cwd
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


def _mount_neutral(device: str, point: Path, source: str) -> None:
    """Mount the erofs on ``device`` at ``point`` under the mount source name ``source``.

    The kernel shows a mount's source as the string given to mount(2), in every mountinfo;
    a relative link named ``source`` (in a folder of its own, as the cwd of a ``mount`` that
    does not canonicalize) keeps the loop device's name, a per-job number, out of it.
    """
    links = point.with_name(f"{LINK_PREFIX}{point.name}")
    links.mkdir(mode=0o700, exist_ok=True)
    try:
        link = links / source
        link.unlink(missing_ok=True)
        link.symlink_to(device)
        argv = [_tool("mount"), "--no-canonicalize", "-t", "erofs", "-o", "ro,nodev,nosuid"]
        done = _run([*argv, source, str(point)], cwd=links)
    finally:
        shutil.rmtree(links, ignore_errors=True)
    if done.returncode != 0:
        raise PlatformError(f"cannot mount {device} at {point}: {done.stderr.strip()}")


@contextlib.contextmanager
def private_mount(
    image: Path, under: Path, tag: str, *, source: str = ROOT_SOURCE
) -> Iterator[Path]:
    """Mount ``image`` (erofs) read-only at a fresh folder below ``under`` for the block.

    ``source`` is the neutral name the mount shows instead of its loop device.
    """
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
        _mount_neutral(device, point, source)
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


def release_stale_roots(under: Path, *, also: int | None = None) -> int:
    """Unmount root and data mounts below ``under`` left by dead workers; returns how many.

    Their packed data images (``img-PID-…``) and mount links go too. ``also``: a live
    worker pid whose mounts go as well (a stopping worker releasing its own).
    """
    released = 0
    if not under.is_dir():
        return released
    for point in sorted(under.glob(f"{MOUNT_PREFIX}*")):
        if not _stale(point.name, MOUNT_PREFIX, also):
            continue
        if os.path.ismount(point):
            device = _loop_device(point)
            _run([_tool("umount"), "--lazy", str(point)])
            if device is not None:
                _detach_loop(device)
            released += 1
        with contextlib.suppress(OSError):
            point.rmdir()
    for leftover in [*under.glob(f"{IMAGE_PREFIX}*"), *under.glob(f"{LINK_PREFIX}*")]:
        prefix = IMAGE_PREFIX if leftover.name.startswith(IMAGE_PREFIX) else LINK_PREFIX
        if _stale(leftover.name.removeprefix(prefix).removeprefix(MOUNT_PREFIX), "", also):
            shutil.rmtree(leftover, ignore_errors=True)
            leftover.unlink(missing_ok=True)
    return released


def _stale(name: str, prefix: str, also: int | None = None) -> bool:
    """Whether ``PREFIX<pid>-…`` names a worker that no longer runs (or the worker ``also``)."""
    owner = name.removeprefix(prefix).partition("-")[0]
    return owner.isdigit() and (int(owner) == also or not pid_alive(int(owner)))


def _loop_device(point: Path) -> str | None:
    """The loop device under the mount at ``point`` (from its device number), if any.

    Not from mountinfo: mounts show a neutral source name instead of their device.
    """
    try:
        dev = os.stat(point).st_dev
    except OSError:
        return None
    if os.major(dev) != LOOP_MAJOR:
        return None
    wanted = str(point.resolve())
    if not any(m.point == wanted for m in mounts()):
        return None
    return f"/dev/loop{os.minor(dev)}"
