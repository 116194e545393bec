"""Whose program failed when an organizer's harness runs the participant's code.

An ingestion program (``protocols.ingestion``) imports or starts the participant's code in
one process. When that run fails, the failure is the organizer's only on evidence that the
participant's code was never reached:

- its Python traceback (the last one on stderr, or a syntax error's location) has frames,
  every frame in the organizer's program folder (frozen import machinery aside; library
  frames too for an ``ImportError``: a library the environment lacks or cannot load), none
  in the participant's folder, and its last line does not name the participant's folder;
- a missing module (``No module named 'X'``) is not one the failing file looks for on a path
  it changed (``sys.path.append(submission_dir)``: the participant's ``model.py`` missing);
- no file of the participant's upload was read during the run (:class:`UploadReads`: each
  file's access time is set to 0 before, and read after; a ``__pycache__`` the import of a
  participant's module writes is a new file, so it counts too).

A command the environment does not have (``python`` where only ``python3`` is) is the
organizer's too, on the same condition that no file of the upload was read. Anything less is
the entry's failure, as before. The reason is for the organizer's log only.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

TRACEBACK = "Traceback (most recent call last):"
FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
MISSING_MODULE = re.compile(r"No module named '(?P<name>[^']+)'")
PATH_CHANGE = re.compile(r"\bpath\s*\.\s*(append|insert|extend)\s*\(|\bsys\.path\s*\+?=")
NOT_STARTED = re.compile(r"^bwrap: execvp (?P<command>\S+): (?P<why>.+)$")
"""What the sandbox says when a run's command is not in its root filesystem."""
MAX_FILES = 20_000
"""Uploads with more files than this are not watched: no evidence, the entry's failure."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One ``File "...", line N`` of a traceback."""

    file: str
    line: int


@dataclass(frozen=True, slots=True)
class Traceback:
    """The last Python traceback of a run's stderr: its frames and its last line."""

    frames: tuple[Frame, ...]
    error: str


def last_traceback(stderr: str) -> Traceback | None:
    """The last traceback (or a main script's syntax error report) in ``stderr``, or None."""
    text = stderr.rsplit(TRACEBACK, 1)[-1] if TRACEBACK in stderr else stderr
    frames = []
    for line in text.splitlines():
        found = FRAME.match(line)
        if found is not None:
            frames.append(Frame(found["file"], int(found["line"])))
    if not frames:
        return None
    lines = [line for line in text.splitlines() if line.strip()]
    return Traceback(tuple(frames), lines[-1].strip() if lines else "")


def organizer_fault(
    stderr: str,
    *,
    organizer: str,
    participant: str,
    program_folder: Path,
    command: str = "",
) -> str | None:
    """Why a failed run is the organizer's program's fault, from its stderr; None: not shown.

    ``organizer``, ``participant``: the organizer's and the participant's folders as the run
    saw them (``/app/program``, ``/app/ingested_program``); ``program_folder``: the organizer's
    folder on the host, where the failing file's source is read; ``command``: the program's
    command (``python``), which may not exist in the environment.
    """
    first = stderr.lstrip().splitlines()[0] if stderr.strip() else ""
    unstarted = NOT_STARTED.match(first)
    if command and unstarted is not None and unstarted["command"] == command:
        return (
            f"its command {command!r} cannot start in this environment ({unstarted['why']}): "
            "name a command the environment has (python3), or add it to the environment"
        )
    found = last_traceback(stderr)
    if found is None or participant in found.error:
        return None
    own = [frame for frame in found.frames if _under(frame.file, organizer)]
    if not own or any(_under(frame.file, participant) for frame in found.frames):
        return None
    importing = found.error.startswith(("ModuleNotFoundError", "ImportError"))
    others = [
        f for f in found.frames if not _under(f.file, organizer) and not f.file.startswith("<")
    ]
    if others and not importing:
        return None
    missing = MISSING_MODULE.search(found.error)
    last = own[-1]
    if missing is not None and _changes_path(program_folder, last.file[len(organizer) :]):
        return None
    where = f"{last.file[len(organizer) :].lstrip('/')}:{last.line}"
    return f"{found.error} ({where}, before the participant's code ran)"


def _under(file: str, folder: str) -> bool:
    return file == folder or file.startswith(folder.rstrip("/") + "/")


def _changes_path(program_folder: Path, relative: str) -> bool:
    """True when the organizer's file puts a folder on Python's module path (or is unread)."""
    source = program_folder / relative.lstrip("/")
    try:
        text = source.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    return PATH_CHANGE.search(text) is not None


class UploadReads:
    """Whether a run read any file of the upload in ``home`` (access times, set to 0 first).

    ``start`` before the run, ``read`` after it. Without evidence (too many files, a file
    system that keeps no access times) ``read`` says True: the failure stays the entry's.
    """

    def __init__(self, home: Path) -> None:
        self.home = home
        self.watched = False

    def start(self) -> None:
        """Set every regular file's access time to 0 (links are not followed)."""
        files = _files(self.home)
        if files is None or os.statvfs(self.home).f_flag & os.ST_NOATIME:
            return
        try:
            for path in files:
                info = os.lstat(path)
                os.utime(path, ns=(0, info.st_mtime_ns), follow_symlinks=False)
        except OSError:
            return
        self.watched = True

    def read(self) -> bool:
        """True when a file was read or made (an import's ``.pyc``), or nothing was watched."""
        if not self.watched:
            return True
        files = _files(self.home)
        if files is None:
            return True
        for path in files:
            try:
                if os.lstat(path).st_atime_ns != 0:
                    return True
            except OSError:
                return True
        return False


def _files(home: Path) -> list[str] | None:
    """The regular files below ``home`` (not through links), or None past ``MAX_FILES``."""
    found: list[str] = []
    for folder, dirs, names in os.walk(home, followlinks=False):
        for name in (*names, *dirs):
            path = os.path.join(folder, name)
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    found.append(path)
            except OSError:
                continue
            if len(found) > MAX_FILES:
                return None
    return found
