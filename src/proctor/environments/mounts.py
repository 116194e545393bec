"""Removing a build folder safely: unmount anything a bootstrap left mounted below it first."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from proctor.errors import EnvironmentBuildError
from proctor.host import mounts_below


def remove_tree(folder: Path) -> None:
    """Delete ``folder``; never descends into a mount (a bootstrap's /proc or /dev)."""
    if not folder.exists():
        return
    for point in [m.point for m in mounts_below(str(folder.resolve()))]:
        subprocess.run(["umount", "--lazy", point], capture_output=True, check=False)  # noqa: S603, S607
    left = [m.point for m in mounts_below(str(folder.resolve()))]
    if left:
        raise EnvironmentBuildError(
            f"cannot remove {folder}: {left[0]} is still mounted; unmount it and run "
            "`proctor env prune`"
        )
    shutil.rmtree(folder, ignore_errors=True)
