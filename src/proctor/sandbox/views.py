"""Private read-only views of host folders: what a session's runs bind instead of host paths.

A bind mount shows, in ``/proc/self/mountinfo``, the path of its source inside the source's file
system: a read-only folder of a run folder would name the work root, the run folder and the
task. As root, each session packs every read-only mount source once into an erofs image (next
to its root mounts) and mounts it through a read-only loop device of its own with direct I/O,
under the neutral source name ``proctor-data``; runs bind the image's root (``/`` in
mountinfo) instead of the host folder. Like the root image, the view shares no page cache or
lock state with other jobs. Sources are read once, when a run first mounts them: a session's
read-only sources must not change while it lasts (staged inputs, the harness, the wheel layer).
Writable mounts (homes, output folders) are tmpfs workspaces of their own and pass unchanged.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from proctor.errors import PlatformError
from proctor.sandbox.base import Mount
from proctor.sandbox.rootfs import IMAGE_PREFIX, private_mount

DATA_SOURCE = "proctor-data"
"""The mount source every data view shows (the same for all jobs)."""
PACK_TIMEOUT_S = 900


class MountViews:
    """The mounts a session's runs bind for the mounts asked for: here, the same ones."""

    def view(self, mounts: Sequence[Mount]) -> list[Mount]:
        """The mounts to bind for ``mounts``."""
        return list(mounts)


class PrivateViews(MountViews):
    """Read-only sources shown through privately mounted images (one per source, per session).

    ``check`` is called on each source before it is read (the slot must be able to reach it,
    as for a plain bind). Thread-safe: parallel cases of one session share the views.
    """

    def __init__(
        self, stack: contextlib.ExitStack, under: Path, tag: str, check: Callable[[Mount], None]
    ) -> None:
        self._stack = stack
        self._under = under
        self._tag = tag
        self._check = check
        self._lock = threading.Lock()
        self._points: dict[Path, Path] = {}  # by resolved source: its mount point
        self._shown_for: dict[str, Path] = {}  # by source as asked: what runs bind

    def view(self, mounts: Sequence[Mount]) -> list[Mount]:
        """Writable mounts as they are; read-only ones from this session's private images."""
        return [m if m.writable else Mount(self._shown(m), m.target) for m in mounts]

    def _shown(self, mount: Mount) -> Path:
        """What runs bind for the read-only ``mount``: checked, packed and mounted once.

        The source is read once, when its image is packed, so it is checked then; a later
        case of the session binds the same image (the source is not read again).
        """
        asked = os.fspath(mount.source)
        with self._lock:
            shown = self._shown_for.get(asked)
        if shown is not None:
            return shown
        self._check(mount)
        source = Path(mount.source).resolve()
        folder = source if source.is_dir() else source.parent
        with self._lock:
            point = self._points.get(source)
            if point is None:
                point = self._mount(source)
                self._points[source] = point
            shown = point if folder == source else point / source.name
            self._shown_for[asked] = shown
        return shown

    def _mount(self, source: Path) -> Path:
        name = f"{self._tag}-d{len(self._points)}"
        self._under.mkdir(parents=True, exist_ok=True)
        image = self._under / f"{IMAGE_PREFIX}{os.getpid()}-{name}.erofs"
        self._stack.callback(image.unlink, missing_ok=True)
        pack_view(source, image)
        return self._stack.enter_context(
            private_mount(image, self._under, name, source=DATA_SOURCE)
        )


def pack_view(source: Path, image: Path) -> None:
    """Pack ``source`` (a folder, or a file alone in its own folder) into the erofs ``image``.

    Owners become root, modes and names stay; timestamps are zeroed and extended attributes
    dropped, so nothing but names, modes and contents reaches the run.
    """
    mkfs = shutil.which("mkfs.erofs")
    if mkfs is None:
        raise PlatformError("`mkfs.erofs` is not installed: apt-get install erofs-utils")
    with contextlib.ExitStack() as stack:
        folder = source
        if not source.is_dir():
            folder = image.with_suffix(".src")
            folder.mkdir(mode=0o755)
            stack.callback(shutil.rmtree, folder, ignore_errors=True)
            shutil.copy2(source, folder / source.name, follow_symlinks=False)
        argv = [mkfs, "--quiet", "--all-root", "-T0", "-x", "-1", str(image), str(folder)]
        done = subprocess.run(  # noqa: S603 - an argv list, no shell
            argv, capture_output=True, text=True, timeout=PACK_TIMEOUT_S, check=False
        )
    if done.returncode != 0:
        raise PlatformError(f"cannot pack {source} into {image}: {done.stderr.strip()[-400:]}")
