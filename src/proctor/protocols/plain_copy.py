"""Copy a folder a run wrote (or an upload) as plain files and folders, within bounds.

What an ingestion program leaves in ``/app/output`` is the participant's to shape: links,
FIFOs, modes that lock the host out, trees of any depth. The copy keeps regular files (mode
0644) and folders (0755) only, never follows a link, and stops at the depth and path length an
upload may have (``entries.names``), so what the scoring program later reads is as tame as an
upload. It runs once no process of the run is left.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from proctor.entries.names import MAX_DEPTH, MAX_PATH_BYTES

FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
CHUNK = 1 << 24


def copy_plain(source: Path, dest: Path, *, skip: tuple[str, ...] = ()) -> str | None:
    """Copy ``source``'s content into the folder ``dest``; None, or what could not be copied.

    ``skip``: names left out at the top. Links and special files are left out silently; a
    folder deeper than ``MAX_DEPTH`` or a path longer than ``MAX_PATH_BYTES`` stops the copy
    with a problem naming it (relative to ``source``), as does a full destination.
    """
    dest.mkdir(parents=True, exist_ok=True)
    dest.chmod(0o755)
    stack: list[tuple[Path, Path, int]] = [(source, dest, 0)]
    while stack:
        folder, target, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as err:
            return f"{_relative(folder, source)}: cannot be read ({os.strerror(err.errno or 0)})"
        for entry in entries:
            if depth == 0 and entry.name in skip:
                continue
            relative = _relative(Path(entry.path), source)
            problem = _copy_entry(entry, target, relative, depth)
            if problem is not None:
                return f"{relative[:120]}: {problem}"
            if entry.is_dir(follow_symlinks=False):
                stack.append((Path(entry.path), target / entry.name, depth + 1))
    return None


def _copy_entry(entry: os.DirEntry[str], target: Path, relative: str, depth: int) -> str | None:
    """Copy one file, or make one folder, in ``target``; None, or why not."""
    if len(os.fsencode(relative)) > MAX_PATH_BYTES:
        return f"a path longer than {MAX_PATH_BYTES} bytes"
    if entry.is_dir(follow_symlinks=False):
        if depth + 1 >= MAX_DEPTH:
            return f"folders nested deeper than {MAX_DEPTH} levels"
        try:
            (target / entry.name).mkdir(mode=0o755)
        except OSError as err:
            return f"cannot be copied ({os.strerror(err.errno or 0)})"
    elif entry.is_file(follow_symlinks=False):
        return _copy_file(Path(entry.path), target / entry.name)
    return None


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path != root else "."


def _copy_file(source: Path, dest: Path) -> str | None:
    """One regular file's bytes into a new 0644 file; None, or why not."""
    try:
        reading = os.open(source, FILE_FLAGS)
    except OSError as err:
        return f"cannot be read ({os.strerror(err.errno or 0)})"
    try:
        if not stat.S_ISREG(os.fstat(reading).st_mode):
            return None
        writing = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            os.fchmod(writing, 0o644)
            while os.sendfile(writing, reading, None, CHUNK) > 0:
                pass
        finally:
            os.close(writing)
    except OSError as err:  # a full output folder (the upload copied into it)
        return f"cannot be copied ({os.strerror(err.errno or 0)})"
    finally:
        os.close(reading)
    return None


def same_trees(first: Path, second: Path, *, skip: tuple[str, ...] = ()) -> bool:
    """True when two copied folders hold the same names and the same bytes.

    ``skip``: names left out at the top.
    """
    if not (first.is_dir() and second.is_dir()):
        return False
    names = sorted(item.name for item in first.iterdir() if item.name not in skip)
    if names != sorted(item.name for item in second.iterdir() if item.name not in skip):
        return False
    for name in names:
        one, other = first / name, second / name
        if one.is_dir() or other.is_dir():
            if not same_trees(one, other):
                return False
        elif one.read_bytes() != other.read_bytes():
            return False
    return True
