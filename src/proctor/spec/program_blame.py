"""Whose program failed when an organizer's harness runs the participant's code: its stderr.

An ingestion program imports or starts the participant's code in one process. A failed run
is the organizer's on this evidence (and, where the caller can tell, no file of the upload
read: ``protocols.blame.UploadReads``):

- its Python traceback (the last one on stderr, or a syntax error's location) has frames,
  every frame in the organizer's program folder (frozen import machinery aside; library
  frames too for an ``ImportError``: a library the environment lacks or cannot load), none
  in the participant's folders, and its last line does not name them;
- a missing module (``No module named 'X'``) is not one the failing file looks for on a path
  it changed (``sys.path.append(submission_dir)``: the participant's ``model.py`` missing);
- or the program's own command could not start (``python`` where only ``python3`` is).

It sits below protocols and scorers (as ``spec.programs``) so both may use it: the
``ingestion`` protocol and a concurrent ingestion's verdict (``scoring.concurrent_ingestion``).
The reason is for the organizer's log only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

TRACEBACK = "Traceback (most recent call last):"
FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
MISSING_MODULE = re.compile(r"No module named '(?P<name>[^']+)'")
PATH_CHANGE = re.compile(r"\bpath\s*\.\s*(append|insert|extend)\s*\(|\bsys\.path\s*\+?=")
NOT_STARTED = re.compile(r"^bwrap: execvp (?P<command>\S+): (?P<why>.+)$")
"""What the sandbox says when a run's command is not in its root filesystem."""


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
    participants: tuple[str, ...],
    program_folder: Path,
    command: str = "",
) -> str | None:
    """Why a failed run is the organizer's program's fault, from its stderr; None: not shown.

    ``organizer``, ``participants``: the organizer's folder and the participant's as the run
    saw them (``/app/program``; ``/app/ingested_program``, ``/app/input/res``);
    ``program_folder``: the organizer's folder on the host, where the failing file's source
    is read; ``command``: the program's command (``python``), which may not exist.
    """
    first = stderr.lstrip().splitlines()[0] if stderr.strip() else ""
    unstarted = NOT_STARTED.match(first)
    if command and unstarted is not None and unstarted["command"] == command:
        return (
            f"its command {command!r} cannot start in this environment ({unstarted['why']}): "
            "name a command the environment has (python3), or add it to the environment"
        )
    found = last_traceback(stderr)
    if found is None or any(folder in found.error for folder in participants):
        return None
    own = [frame for frame in found.frames if _under(frame.file, organizer)]
    theirs = [f for f in found.frames for folder in participants if _under(f.file, folder)]
    if not own or theirs:
        return None
    importing = found.error.startswith(("ModuleNotFoundError", "ImportError"))
    others = [
        f for f in found.frames if not _under(f.file, organizer) and not f.file.startswith("<")
    ]
    if others and not importing:
        return None
    missing = MISSING_MODULE.search(found.error)
    last = own[-1]
    relative = last.file[len(organizer) :].lstrip("/")
    if missing is not None and _looks_on_changed_path(program_folder / relative, last.line):
        return None
    where = f"{relative}:{last.line}"
    return f"{found.error} ({where})"


def _under(file: str, folder: str) -> bool:
    return file == folder or file.startswith(folder.rstrip("/") + "/")


def _looks_on_changed_path(source: Path, line: int) -> bool:
    """True when the import failing at ``line`` of ``source`` may look on a folder it added.

    A path change (``sys.path.append(...)``) on an earlier line, or anywhere in the file when
    the import is indented (in a function or a block, which may run after the change). A file
    that cannot be read says True.
    """
    try:
        lines = source.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return True
    changes = [number for number, text in enumerate(lines, 1) if PATH_CHANGE.search(text)]
    if not changes:
        return False
    failing = lines[line - 1] if 0 < line <= len(lines) else " "
    return failing[:1].isspace() or min(changes) < line
