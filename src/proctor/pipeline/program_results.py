"""What an organizer program wrote, read back by the host: through descriptors, within caps.

A scoring program shapes its scores folder as it likes, and may own the folder above it too
(``/app`` when its inputs share one workspace): it could rename the scores folder, or one
above, and put a link to a host folder in its place, and a scoring program that unpickles a
participant's output runs that code as well. So the host opens the scores folder from the
workspace's root one component at a time, never following a link, and checks it is the
folder the host made; a folder replaced fails the run (the organizer's log says what was
found) and nothing is read through it. Its regular files' apparent sizes (holes count in
full: a copy writes them out) must add up to at most ``limits.scores_bytes``, and it may hold
no more entries than a workspace of that size, before ``scores.json`` is read or the folder
collected.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path

from proctor.entries.names import MAX_DEPTH, MAX_PATH_BYTES
from proctor.sandbox.workspace import inode_cap
from proctor.spec.programs import ProgramRequest
from proctor.trees import (
    PlainCopyBounds,
    ReplacedError,
    copy_plain,
    describe,
    kind,
    open_folder_below,
    past_caps,
)

READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


@dataclass(frozen=True, slots=True)
class ScoresFolder:
    """Where the scores folder is, and the identity the host gave it.

    ``root``: a host folder shown at ``root_place`` inside; the folder is ``relative`` below.
    """

    root: Path
    root_place: str
    relative: str
    made: tuple[int, int]


def identity(path: Path) -> tuple[int, int]:
    """(device, inode) of the folder at ``path`` (not followed if a link)."""
    info = os.lstat(path)
    return info.st_dev, info.st_ino


def read_back(
    folder: ScoresFolder, request: ProgramRequest
) -> tuple[str, bytes | None, str | None]:
    """(name, content, problem) of the scores file; the folder copied to ``request.collect``.

    The problem, when there is one, is the program's fault and nothing was kept: its folder
    was replaced, holds more than ``limits.scores_bytes``, or its scores file is not a
    regular file within that cap. No scores file is (its first name, None, None).
    """
    first = (request.scores_names or ("",))[0]
    if not request.scores_names and request.collect is None:
        return first, None, None  # nothing is read back (the run beside a scoring program)
    cap = request.limits.scores_bytes
    shown = request.scores or folder.root_place
    try:
        fd = open_folder_below(folder.root, folder.relative)
    except ReplacedError as err:
        where = posixpath.join(folder.root_place, err.where)
        return first, None, _replaced(shown, f"{where} is {err.found}")
    except OSError as err:
        return first, None, f"the folder {shown} cannot be opened ({os.strerror(err.errno or 0)})"
    try:
        found = os.fstat(fd)
        if (found.st_dev, found.st_ino) != folder.made:
            return first, None, _replaced(shown, f"{shown} is another folder than the one given")
        over = past_caps(fd, max_bytes=cap, max_entries=inode_cap(cap))
        if over is not None:
            return first, None, f"the folder {shown} holds too much (limits.scores_bytes): {over}"
        name, data, problem = _scores_file(fd, request)
        if request.collect is not None:
            bounds = PlainCopyBounds(cap, inode_cap(cap), MAX_DEPTH, MAX_PATH_BYTES)
            copied = copy_plain(fd, request.collect, bounds)
            if copied is not None and problem is None:
                return name, None, f"the folder {shown} cannot be kept: {copied}"
        return name, data, problem
    finally:
        os.close(fd)


def _replaced(shown: str, what: str) -> str:
    return (
        f"the scoring program replaced its folder {shown} during its run ({what}); nothing "
        "was read through it: write scores into the folder given, do not move or link it"
    )


def _scores_file(fd: int, request: ProgramRequest) -> tuple[str, bytes | None, str | None]:
    """The first of ``request.scores_names`` present in the folder open as ``fd``."""
    for name in request.scores_names:
        data, problem = read_capped_in(fd, name, request.limits.scores_bytes)
        if data is not None or problem is not None:
            return name, data, problem
    return (request.scores_names or ("",))[0], None, None


def read_capped_in(folder_fd: int, name: str, cap: int) -> tuple[bytes | None, str | None]:
    """(content, None) of the regular file ``name`` of at most ``cap`` bytes; (None, why).

    Never follows a link, never blocks on a FIFO, never reads past ``cap``; missing: (None,
    None).
    """
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=folder_fd)
    except FileNotFoundError:
        return None, None
    except OSError as err:
        if err.errno == errno.ELOOP:
            return None, f"{name} cannot be opened: it is {describe(folder_fd, name)}"
        return None, f"{name} cannot be opened ({os.strerror(err.errno or 0)})"
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # a folder opens too, but cannot be read as a stream
        os.close(fd)
        return None, f"{name} is not a regular file (a {kind(mode)})"
    with os.fdopen(fd, "rb") as stream:
        data = stream.read(cap + 1)
    if len(data) > cap:
        return None, f"{name} is over {cap} bytes"
    return data, None
