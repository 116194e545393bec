"""An organizer's program as one sandboxed run: what is asked, what comes back, who runs it.

A scoring program (``scoring.program``) is an argv run with folders shown read-only at given
places, small files, a writable capped folder, variables and limits; an ingestion program run
during scoring (Codabench's ``ingestion_only_during_scoring``) is a second such run ``beside``
it. These types are that contract; ``pipeline.program_runs`` runs a request in the sandbox.
They sit below protocols and scorers so both may speak them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from proctor.spec.scorer import ProgramLimits

SCORES_FILE = "scores.json"
"""What a scoring program writes in its writable folder."""
TAIL_CHARS = 4000
BESIDE_GRACE_S = 5.0
"""Seconds a ``beside`` program may go on once the main program ended, before it is killed."""


@dataclass(frozen=True, slots=True)
class ProgramRequest:
    """One sandboxed run of an organizer's program.

    ``folders``: host folder (or file) → where it shows inside, read-only. ``files``: small
    files made for the run (the case list) → where they show, read-only. ``scores``: the
    writable, ``limits.scores_bytes``-capped folder inside (None: nothing is writable but
    ``/tmp``); the runner hands back its ``scores.json``. ``shared``: where a writable,
    ``limits.shared_bytes``-capped, empty folder shows (Codabench's ``/app/shared``; None:
    none), private to the run or common to it and ``beside``. ``writable``: targets among
    ``folders`` shown as writable scratch copies instead (only this run's slot may change
    them, within ``limits.scratch_bytes``; discarded afterwards, the sources never change).
    """

    argv: tuple[str, ...]
    cwd: str
    folders: tuple[tuple[Path, str], ...]
    env: Mapping[str, str]
    limits: ProgramLimits
    wall_s: float
    files: Mapping[str, bytes] = field(default_factory=dict)
    scores: str | None = None
    scores_names: tuple[str, ...] = (SCORES_FILE,)
    """The files read back from ``scores``, the first present one (``scores.txt`` too)."""
    collect: Path | None = None
    """A new host folder where everything ``scores`` holds after the run is copied."""
    shared: str | None = None
    writable: tuple[str, ...] = ()
    beside: ProgramRequest | None = None
    """A program run at the same time, in a sandbox of its own (another slot, none of this
    request's folders), sharing only the ``shared`` folder (at its own ``shared`` mount
    point). It is stopped once this one ends (after ``BESIDE_GRACE_S``), and both are
    killed when either runs out of time."""


@dataclass(frozen=True, slots=True)
class ProgramResult:
    """What the run did; ``scores_file`` is ``scores.json`` as written (None: none usable).

    ``scores_problem`` says why a written ``scores.json`` was not read (a link, too large).
    """

    exit_status: int | None
    signal: int | None = None
    timed_out: bool = False
    memory_exceeded: bool = False
    wall_s: float = 0.0
    stdout: str = ""
    stderr: str = ""
    scores_file: bytes | None = None
    scores_problem: str | None = None
    scores_name: str = SCORES_FILE
    beside: ProgramResult | None = None
    """What the request's ``beside`` program did."""
    stopped: bool = False
    """True when this run was killed because the program it ran beside had ended."""
    left_shared: tuple[str, ...] = ()
    """Entries not plain files or folders (FIFOs, sockets, links) that the folders a pair of
    programs shares held once both ended: a program opening one blocks or fails."""

    def problem(self) -> str | None:
        """Why the run failed, or None when it exited 0 within its limits."""
        if self.timed_out:
            return "timed out"
        if self.memory_exceeded:
            return "exceeded its memory limit"
        if self.signal is not None:
            return f"was killed by signal {self.signal}"
        if self.exit_status != 0:
            return f"exited with status {self.exit_status}"
        return None

    def log(self) -> str:
        """The tails of stdout and stderr, for the organizer's log."""
        return (
            f"--- stdout (last {TAIL_CHARS} characters) ---\n{self.stdout[-TAIL_CHARS:]}\n"
            f"--- stderr (last {TAIL_CHARS} characters) ---\n{self.stderr[-TAIL_CHARS:]}\n"
        )


class ProgramRunner(Protocol):
    """Runs one ``ProgramRequest`` in the sandbox (given by the layer owning the sandbox)."""

    def __call__(self, request: ProgramRequest) -> ProgramResult:
        """Run the request and wait for it or its limits."""
        ...
