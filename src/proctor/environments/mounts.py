"""Removing a build folder safely: unmount anything a bootstrap left mounted below it first."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from pathlib import Path

from proctor.errors import EnvironmentBuildError


def mounts_below(folder: Path) -> list[str]:
    """Mount points at or below ``folder``, deepest first."""
    root = str(folder.resolve())
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            point = _unescape(line.split()[4])
            if point == root or point.startswith(root.rstrip("/") + "/"):
                found.append(point)
    return sorted(found, key=len, reverse=True)


def remove_tree(folder: Path) -> None:
    """Delete ``folder``; never descends into a mount (a bootstrap's /proc or /dev)."""
    if not folder.exists():
        return
    for point in mounts_below(folder):
        subprocess.run(["umount", "--lazy", point], capture_output=True, check=False)  # noqa: S603, S607
    left = mounts_below(folder)
    if left:
        raise EnvironmentBuildError(
            f"cannot remove {folder}: {left[0]} is still mounted; unmount it and run "
            "`proctor env prune`"
        )
    shutil.rmtree(folder, ignore_errors=True)


def _unescape(field: str) -> str:
    """A mountinfo path field with its octal escapes (space, tab, newline, backslash) undone."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field
