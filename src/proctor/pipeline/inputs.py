"""Stage case inputs where a sandbox slot may read them.

Sandboxed runs read their inputs as an unprivileged uid, so the challenge's folders (which may
sit under a private home) are linked or copied into the run folder with world-readable modes.
Proctor's own files a protocol's runs need (the AutoWSL harness) are copied there too, for the
same reason: the install path may be private. References stay where they are and are read by
the host scorer alone.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path


def stage_inputs(source: Path, dest: Path) -> Path:
    """Mirror ``source`` at ``dest`` for the sandbox and return ``dest``.

    Hard links where a file is already world-readable on the same file system, copies
    (mode 0644) otherwise.

    Symbolic links in ``source`` are not followed: an input folder holds plain files.
    """
    dest.mkdir(parents=True, exist_ok=False)
    dest.chmod(0o755)
    for item in sorted(source.iterdir()):
        target = dest / item.name
        info = item.lstat()
        if stat.S_ISDIR(info.st_mode):
            stage_inputs(item, target)
        elif stat.S_ISREG(info.st_mode):
            _link_or_copy(item, target, info)
    return dest


def _link_or_copy(item: Path, target: Path, info: os.stat_result) -> None:
    if info.st_mode & stat.S_IROTH:
        try:
            os.link(item, target, follow_symlinks=False)
            return
        except OSError:
            pass
    shutil.copyfile(item, target, follow_symlinks=False)
    target.chmod(0o644)


def stage_support(files: Sequence[Path], dest: Path) -> Path | None:
    """Copy the ``files`` (or folders) a protocol's runs need into ``dest``; ``dest``.

    Proctor's own files (the AutoWSL harness) or an organizer's program folder. Copies (files
    0644, folders 0755), never links nor mounts of the install path or challenge folder: they
    may sit where sandbox uids cannot enter (``/root``, a 0700 home). None when there is
    nothing to copy.
    """
    if not files:
        return None
    for folder in (dest.parent, dest):
        folder.mkdir(exist_ok=True)
        folder.chmod(0o755)
    for source in files:
        target = dest / source.name
        if source.is_dir():
            _copy_folder(source, target)
            continue
        shutil.copyfile(source, target)
        target.chmod(0o644)
    return dest


def _copy_folder(source: Path, dest: Path) -> None:
    """A copy of an organizer's folder: plain files and folders (0755), links left out.

    Files are 0644, or 0755 when they were executable (a ``run.sh`` the command starts).
    """
    dest.mkdir(mode=0o755)
    dest.chmod(0o755)
    for item in sorted(source.iterdir()):
        info = item.lstat()
        if stat.S_ISDIR(info.st_mode):
            _copy_folder(item, dest / item.name)
        elif stat.S_ISREG(info.st_mode):
            shutil.copyfile(item, dest / item.name, follow_symlinks=False)
            (dest / item.name).chmod(0o755 if info.st_mode & 0o111 else 0o644)
