"""Stage an organizer program's folders and files where its sandbox slot may read them.

A ``ProgramRequest`` names host folders (the program, references, outputs) and small files by
the place they show inside. They are copied or linked under a scratch folder the slot may
read, plain files and folders only (a link in a participant's output is not followed), either
as one tree (when the mount points share a folder such as ``/app``) or one by one. What the
program writes is read back by ``pipeline.program_results``.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
from collections.abc import Collection
from pathlib import Path

from proctor.pipeline.inputs import stage_inputs
from proctor.sandbox.base import Mount
from proctor.spec.programs import ProgramRequest
from proctor.trees import BLOCK

SMALL_INPUTS_BYTES = 64 * 1024**2
"""Inputs (program, references, outputs) up to this size are copied into one workspace."""


def fits_one_workspace(request: ProgramRequest, given: Collection[str] = ()) -> bool:
    """True when the request's inputs are small and its mount points share one folder.

    ``given``: mount points the caller fills with folders of its own (not copied here).
    """
    every = targets(request)
    common = posixpath.commonpath(every)
    if common == "/" or common in every:
        return False
    total = sum(len(content) for content in request.files.values())
    for source, target in request.folders:
        if target in given:
            continue
        total += _tree_bytes(source, SMALL_INPUTS_BYTES - total)
        if total > SMALL_INPUTS_BYTES:
            return False
    return True


def targets(request: ProgramRequest) -> list[str]:
    """Every mount point of the request, the writable scores and shared folders included."""
    writable = [place for place in (request.scores, request.shared) if place is not None]
    return [target for _, target in request.folders] + [*request.files, *writable]


def _tree_bytes(source: Path, budget: int) -> int:
    """Bytes (plus a block per file) a copy of ``source`` takes; stops once past ``budget``."""
    if not source.is_dir() or source.is_symlink():
        return source.lstat().st_size + BLOCK if os.path.lexists(source) else 0
    total = 0
    for root, _, names in os.walk(source, followlinks=False):
        for name in names:
            total += os.lstat(os.path.join(root, name)).st_size + BLOCK
            if total > budget:
                return total
    return total


def copy_plain(source: Path, dest: Path) -> None:
    """Copy ``source`` (a folder or a file) to ``dest``: plain files (0644) and folders only.

    Links and special files are left out; a missing source becomes an empty folder.
    """
    try:
        info = source.lstat()
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISREG(info.st_mode):
        _copy_file(source, dest)
        return
    os.mkdir(dest)
    os.chmod(dest, 0o755)  # noqa: S103 - the slot reads it (whatever the umask)
    if info is None or not stat.S_ISDIR(info.st_mode):
        return
    with os.scandir(source) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                copy_plain(Path(entry.path), dest / entry.name)
            elif entry.is_file(follow_symlinks=False):
                _copy_file(Path(entry.path), dest / entry.name)


def _copy_file(source: Path, dest: Path) -> None:
    """One regular file's bytes into a new file of mode 0644 (no link is followed)."""
    reading = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        writing = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.fchmod(writing, 0o644)  # whatever the umask
            size = os.fstat(reading).st_size
            copied = 0
            while copied < size:
                sent = os.sendfile(writing, reading, copied, size - copied)
                if sent == 0:
                    break
                copied += sent
        finally:
            os.close(writing)
    finally:
        os.close(reading)


def staged_mounts(request: ProgramRequest, scratch: Path) -> list[Mount]:
    """Read-only mounts of staged copies the slot may read (links and specials left out).

    When every mount point lies below one folder (``/scoring``), everything is staged as one
    tree mounted there (the writable scores folder, and the ``writable`` copies the caller
    mounts, then go over their empty places in it): a backend that packs each read-only
    source into an image of its own (as root) packs one. ``request.writable`` folders are
    left to the caller.
    """
    targets = [target for _, target in request.folders] + list(request.files)
    every = targets + ([request.scores] if request.scores is not None else [])
    common = posixpath.commonpath(every) if every else "/"
    read_only = [(source, target) for source, target in request.folders
                 if target not in request.writable]  # fmt: skip
    if common == "/" or common in every:
        return [
            *(
                Mount(_stage(source, scratch / f"folder-{index}"), target)
                for index, (source, target) in enumerate(read_only)
            ),
            *(
                Mount(write_file(scratch / f"file-{index}", content), target)
                for index, (target, content) in enumerate(request.files.items())
            ),
        ]
    tree = scratch / "view"
    tree.mkdir()
    tree.chmod(0o755)
    for source, target in read_only:
        _stage(source, inside(tree, common, target))
    for target, content in request.files.items():
        write_file(inside(tree, common, target), content)
    for writable in (request.scores, request.shared):
        if writable is not None:
            inside(tree, common, writable).mkdir(mode=0o755)
    for source, target in request.folders:
        if target in request.writable:  # the place the caller's writable copy goes over
            place = inside(tree, common, target)
            if source.is_file():
                write_file(place, b"")
            else:
                place.mkdir(mode=0o755)
    return [Mount(tree, common)]


def inside(tree: Path, common: str, target: str) -> Path:
    """Where ``target`` (below ``common`` inside the sandbox) lies in the staged ``tree``."""
    place = tree / posixpath.relpath(target, common)
    for parent in reversed(place.relative_to(tree).parents[:-1]):
        folder = tree / parent
        if not folder.exists():
            folder.mkdir()
            folder.chmod(0o755)
    return place


def _stage(source: Path, staged: Path) -> Path:
    """A copy of ``source`` (folder or file) at ``staged``; an empty folder when it is neither."""
    info = source.lstat() if os.path.lexists(source) else None
    if info is not None and stat.S_ISDIR(info.st_mode):
        stage_inputs(source, staged)
    elif info is not None and stat.S_ISREG(info.st_mode):
        shutil.copyfile(source, staged, follow_symlinks=False)
        staged.chmod(0o644)
    else:  # nothing there (a case without output): an empty folder
        staged.mkdir()
        staged.chmod(0o755)
    return staged


def write_file(path: Path, content: bytes) -> Path:
    """``content`` as a new file the slot may read (0644)."""
    path.write_bytes(content)
    path.chmod(0o644)
    return path
