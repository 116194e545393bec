"""A run folder: the files of one evaluation attempt, with a layout owned in one place.

Layout (host side, outside every sandbox)::

    ROOT/entry/                  the upload, unpacked (never written by the entry)
    ROOT/inputs/TASK/{public,hidden}/   case inputs staged for the sandbox slot
    ROOT/homes/TASK/             the entry's writable home for TASK (a capped tmpfs as root)
    ROOT/outputs/TASK/{quiz,exam,rerun}/   collected outputs, stored by the host
    ROOT/cases.jsonl             the organizer's log of every case and stage
    ROOT/score-error.txt         a scorer's traceback or a scoring program's failure (never
                                 shown to participants)
    ROOT/scoring-TASK.log        a scoring program's warnings and stdout/stderr tails (organizer)
    ROOT/entry-image.json        the entry's own image it ran in: digest, base, packages
    ROOT/entry-image/            that image's archive taken out of the entry, or the
                                 ``Dockerfile`` it was built from and its ``build.log``

An attempt is created under a name ending in ``.partial``; :meth:`RunFolder.commit` renames it
to its final name in one step (so nothing half-written looks finished) and
:meth:`RunFolder.discard` removes it.

Its process holds an exclusive ``flock`` on the folder from before it gets its ``.partial``
name until it is committed or discarded; the kernel releases the lock when the process dies.
A clean-up of leftovers (another process's, another deployment's on the same work root) removes
only folders :func:`in_use` says nobody holds: a live run's folder is never touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path

from proctor.trees import remove_tree_quietly
from proctor.types import Stage

PARTIAL = ".partial"
UNNAMED = "."
"""The prefix of a folder being created (not locked yet): clean-ups never look at it."""
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
CASE_LOG = "cases.jsonl"
SCORE_ERROR_LOG = "score-error.txt"


ENTRY_IMAGE_RECORD = "entry-image.json"
"""The record of the entry's own image a job ran in (digest, base, size, packages)."""
ENTRY_IMAGE_FOLDER = "entry-image"
"""The folder of the entry's own image: its archive, or its ``Dockerfile`` and build log."""
ENTRY_DOCKERFILE = f"{ENTRY_IMAGE_FOLDER}/Dockerfile"
"""The entry's ``Dockerfile`` as prep read it before building it (a copy)."""
ENTRY_BUILD_LOG = f"{ENTRY_IMAGE_FOLDER}/build.log"
"""The log of the build of the entry's ``Dockerfile`` (passed or failed)."""
ENTRY_IMAGE_FILES = (ENTRY_IMAGE_RECORD, ENTRY_DOCKERFILE, ENTRY_BUILD_LOG)
"""What the run artifact keeps of an entry's own image, by path in the run folder (the
archive itself is not kept: the image is in the environment store by its digest)."""


SCORER_PAGES = ("detailed_results.html",)
"""Pages a scorer may make for a submission (a Codabench program's detailed results), kept
in the run folder as ``scorer_page`` names them and in the run artifact."""


def scorer_page_name(task: str, name: str) -> str:
    """The file name a scorer's page ``name`` of ``task`` is kept under (folder and artifact).

    ``detailed_results.html`` of task ``CTce`` is ``detailed_results-CTce.html``.
    """
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}-{task}{dot}{suffix}" if dot else f"{name}-{task}"


class RunFolder:
    """The folder of one evaluation attempt (see the module docstring for its layout)."""

    def __init__(self, root: Path, lock_fd: int | None = None) -> None:
        self.root = root
        self._lock_fd = lock_fd

    @classmethod
    def create(cls, parent: Path, prefix: str) -> RunFolder:
        """A new, empty attempt folder under ``parent`` that sandbox slots may traverse.

        It is locked by this process (see the module docstring) before it gets its name.
        """
        parent.mkdir(parents=True, exist_ok=True)
        if parent.stat().st_uid == os.geteuid():
            parent.chmod(0o711)  # run folders are found by name only, never listed
        while True:
            unnamed = Path(
                tempfile.mkdtemp(prefix=f"{UNNAMED}{prefix}-", suffix=PARTIAL, dir=parent)
            )
            # sandbox slots (other uids) traverse it to reach their mounts; nobody lists it, so
            # the random name keeps what is inside (hidden inputs) from other local users
            unnamed.chmod(0o711)
            lock_fd = os.open(unnamed, DIR_FLAGS)
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            root = unnamed.with_name(unnamed.name.removeprefix(UNNAMED))
            if not os.path.lexists(root):
                os.rename(unnamed, root)
                return cls(root, lock_fd)
            os.close(lock_fd)  # the name is taken (by a folder of another mkdtemp): again
            unnamed.rmdir()

    def release(self) -> None:
        """Give up this process's lock on the folder (after this a clean-up may remove it)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    @property
    def entry(self) -> Path:
        """Where the upload is unpacked."""
        return self.root / "entry"

    def inputs(self, task: str) -> Path:
        """Where ``task``'s case inputs are staged (``public``/``hidden`` below)."""
        return self.root / "inputs" / task

    def home(self, task: str) -> Path:
        """The entry's writable home for ``task``."""
        return self.root / "homes" / task

    def outputs(self, task: str, stage: Stage) -> Path:
        """Where the host stores ``task``'s collected outputs of ``stage``."""
        return self.root / "outputs" / task / str(stage)

    @property
    def case_log(self) -> Path:
        """The organizer's log of every case (JSON lines)."""
        return self.root / CASE_LOG

    @property
    def score_errors(self) -> Path:
        """Where scorer tracebacks go (organizer only)."""
        return self.root / SCORE_ERROR_LOG

    def scoring_log(self, task: str) -> Path:
        """``task``'s scoring program log: reason, warnings, output tails (organizer only)."""
        return self.root / f"scoring-{task}.log"

    @property
    def scratch(self) -> Path:
        """Where organizer programs' inputs are staged for the sandbox (removed after each)."""
        return self.root / "scratch"

    def dashboard(self, task: str) -> Path:
        """``task``'s whole dashboard as the scorer made it (organizer only; VISCERAL's organs)."""
        return self.root / f"dashboard-{task}.json"

    def scorer_page(self, task: str, name: str) -> Path:
        """Where a page ``name`` the scorer made for ``task`` is kept.

        ``detailed_results.html`` is kept as ``detailed_results-TASK.html`` (for organizers,
        and the submission's team where the disclosure allows).
        """
        return self.root / scorer_page_name(task, name)

    def support(self, task: str) -> Path:
        """The copies of the protocol's own files a task's runs need (the AutoWSL harness)."""
        return self.root / "support" / task

    def prepare_homes(self) -> None:
        """Create the parent of the homes, traversable by sandbox slots."""
        homes = self.root / "homes"
        homes.mkdir(exist_ok=True)
        homes.chmod(0o711)

    def commit(self) -> Path:
        """Give the finished attempt its final name (atomic rename) and return it."""
        if not self.root.name.endswith(PARTIAL):
            return self.root
        final = self.root.with_name(self.root.name.removesuffix(PARTIAL))
        os.rename(self.root, final)
        self.root = final
        self.release()  # a finished folder is the organizer's: no clean-up removes it
        return final

    def discard(self) -> None:
        """Remove the attempt and everything in it, then release the lock."""
        remove_tree_quietly(self.root)
        self.release()


def in_use(folder: Path) -> bool:
    """Whether a live process holds ``folder`` (a run folder it created and still uses).

    Answers by trying the folder's lock without waiting; a folder that is gone is not in use.
    """
    try:
        fd = os.open(folder, DIR_FLAGS)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return False
