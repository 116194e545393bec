"""The entry-protocol contract: what the pipeline may ask of any way of evaluating an entry.

Every protocol is a ``ProtocolDriver``: how an entry is laid out (its manifest), what the cases
of a split are and where each case's output is stored. Two kinds of protocol share it:

- a ``Driver`` runs code (how an entry is prepared and run per case). Everything runs through
  the job's sandbox session; outputs leave the sandbox only through the driver's collection and
  are stored by the host in the run folder, never shown to another case.
- a ``FilesDriver`` runs nothing (``runs_code`` is False): the entry *is* its outputs, files
  the participant made on public inputs. The pipeline opens no sandbox session for it; the
  driver checks the upload (prep) and names the file holding each case's predictions.

The pipeline knows only this contract, so a new protocol is one driver module carrying its
kind, summary and settings model, listed in ``protocols.registry`` (or, from outside Proctor,
declared as an entry point of the ``proctor.protocols`` group).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import ClassVar

from proctor.entries import Manifest
from proctor.sandbox.base import Limits, Mount, Outcome, SandboxSession
from proctor.spec.model import ResourceLimits
from proctor.spec.protocols import ProtocolSettings

PUBLIC = "public"
HIDDEN = "hidden"
"""The two splits a files driver knows: predictions on public inputs with public references,
and predictions on public inputs whose references are hidden."""

OutputCheck = Callable[[Path], "str | None"]
"""Whether a stored output is valid for the task's scorer: None, or what is wrong with it."""


@dataclass(frozen=True, slots=True)
class ExpectedFile:
    """The one prediction file a challenge expects, so that it may be uploaded bare.

    A bare file whose name matches one of ``patterns`` (shell patterns) is the entry's
    ``folder/NAME`` (``folder`` ``""``: the entry's root), e.g. ``test/main/submission.csv``.
    """

    patterns: tuple[str, ...]
    folder: str

    def accepts(self, name: str) -> bool:
        """True when a bare file called ``name`` is the expected file."""
        if name in ("", ".", "..") or "/" in name or "\\" in name:
            return False
        return any(fnmatchcase(name, pattern) for pattern in self.patterns)

    def place(self, name: str) -> str:
        """Where the bare file ``name`` goes in the entry, relative to its root."""
        return f"{self.folder}/{name}" if self.folder else name

    def names(self) -> str:
        """The expected name(s), for messages: ``submission.csv`` or ``*.json or *.zip``."""
        return " or ".join("a file of any name" if p == "*" else p for p in self.patterns)


@dataclass(frozen=True, slots=True)
class CaseRun:
    """One case: the sandbox outcome and the stored output (None when none was usable)."""

    case: str
    outcome: Outcome
    output: Path | None
    problem: str = ""
    organizer_fault: str = ""
    """Why the failed run is the organizer's program's fault (the organizer's log only), or
    empty: an ingestion program that failed before the participant's code ran
    (``protocols.blame``)."""

    @property
    def ok(self) -> bool:
        """True when the run succeeded and left a valid output."""
        return self.outcome.succeeded and self.output is not None and not self.problem

    @property
    def timed_out(self) -> bool:
        """True when the case ran out of time."""
        return self.outcome.timed_out


@dataclass(frozen=True, slots=True)
class Preparation:
    """The prep run of an entry (its setup script): what ran, its limit and its outcome."""

    what: str
    limit_s: float
    outcome: Outcome
    problem: str | None = None
    """Why it failed, when the driver knows better than the outcome (a script that could not
    start); None otherwise."""


@dataclass(frozen=True, slots=True)
class DriverContext:
    """What a driver works with for one job.

    The protocol settings, the resource limits, the job's sandbox session, how many cases run
    at once, the scorer's output check, the environment's declared variables (which the
    protocol's own variables override), and read-only mounts every run gets (the entry's own
    wheels). ``support`` is the run folder's copy of the driver's ``support`` files;
    ``task`` the name of the task the job evaluates; ``entry`` the unpacked upload as
    uploaded (no run writes it).
    """

    settings: ProtocolSettings
    limits: ResourceLimits
    session: SandboxSession
    parallel_runs: int
    check_output: OutputCheck
    variables: Mapping[str, str] = field(default_factory=dict)
    extra_mounts: tuple[Mount, ...] = ()
    support: Path | None = None
    task: str = ""
    entry: Path | None = None


def run_limits(limits: ResourceLimits, parallel_runs: int, wall_s: float) -> Limits:
    """Sandbox limits of one run of an entry lasting at most ``wall_s`` seconds."""
    return Limits(
        wall_s=wall_s,
        memory_bytes=limits.memory_bytes,
        processes=limits.processes,
        # parallel cases share the slot uid, whose process count the kernel caps as a whole
        uid_processes=limits.processes * max(1, parallel_runs),
        file_size_bytes=limits.home_bytes,  # no single file can outgrow the home
        tmp_bytes=limits.tmp_bytes,
        log_bytes=limits.log_bytes,
        cpus=limits.cpus_per_case,
    )


class ProtocolDriver(ABC):
    """What every protocol tells the pipeline before anything runs.

    Subclasses set ``kind``, ``settings_model`` and ``summary``; ``case_noun`` names a case in
    participant messages ("record", "volume", "dataset", "scenario"). ``runs_code`` says which of
    the two contracts below the protocol follows. ``failed_case_fails_task``: a failed exam case
    fails the whole task (a dataset of AutoWSL, which has no score without its prediction) instead
    of being scored as the scorer's failure value (a record of PhysioNet, scored as zeros).
    ``shows_run_logs``: a stage's runs' output tails show at ``full`` even when it passed (one
    run per stage, whose prints are what a participant reads: Codabench's ingestion).
    ``scored_after_failure``: when set, a failed exam case's output, as far as it got, is
    stored and scored (Codabench scores what a failed ingestion wrote); should scoring then
    fail, the failure is the entry's, told in these words ("your code failed under ..."), or
    in the job's own (:attr:`failed_code_words`). ``ships_dockerfile``: the protocol's entries
    always bring a ``Dockerfile`` (PhysioNet's); where the challenge builds no entry images it
    is left unbuilt, not refused.
    """

    kind: ClassVar[str]
    settings_model: ClassVar[type[ProtocolSettings]]
    summary: ClassVar[str]
    case_noun: ClassVar[str] = "case"
    runs_code: ClassVar[bool] = True
    failed_case_fails_task: ClassVar[bool] = False
    shows_run_logs: ClassVar[bool] = False
    scored_after_failure: ClassVar[str] = ""
    ships_dockerfile: ClassVar[bool] = False

    @property
    def failed_code_words(self) -> str:
        """Whose code failed where, for this job (``scored_after_failure`` unless overridden)."""
        return self.scored_after_failure

    @classmethod
    @abstractmethod
    def list_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The cases of a split (a public or hidden inputs folder), in evaluation order."""

    @classmethod
    def quiz_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The public cases the quiz runs (every one unless the protocol checks fewer)."""
        return cls.list_cases(settings, folder)

    @classmethod
    @abstractmethod
    def output_template(cls, settings: ProtocolSettings) -> str:
        """The stored output of each case, as a template with ``{record}`` (the scorer's view)."""

    @classmethod
    @abstractmethod
    def manifest(cls, settings: ProtocolSettings) -> Manifest:
        """What an entry must contain before anything runs (checked before a slot is claimed)."""

    @classmethod
    def entry_contract(cls, settings: ProtocolSettings) -> str:
        """What an entry ships and what the quiz checks, in Markdown, for the kit's README.

        "" (the default) when the protocol's summary says it all.
        """
        del settings
        return ""

    @classmethod
    def expected_file(
        cls, settings: ProtocolSettings, hidden_cases: tuple[str, ...]
    ) -> ExpectedFile | None:
        """The one file an entry is, when it may be uploaded bare (None: an archive only).

        ``hidden_cases``: the cases of the hidden split of every task of the challenge.
        """
        return None


class Driver(ProtocolDriver):
    """A protocol that runs the entry's code, case by case, in the job's sandbox session.

    ``support_files``: files of Proctor's own that runs need read-only (the AutoWSL harness);
    :meth:`support` may add a task's own (an organizer's ingestion program). They are copied
    into the run folder before the session starts, as entries are, and found in
    ``context.support``: the install path (or challenge folder) may lie where sandbox uids
    cannot enter (``/root``, a 0700 home), so nothing is ever mounted from it.
    """

    runs_code: ClassVar[bool] = True
    support_files: ClassVar[tuple[Path, ...]] = ()

    def __init__(self, context: DriverContext) -> None:
        self.context = context

    @classmethod
    def support(cls, settings: ProtocolSettings, task: str) -> tuple[Path, ...]:
        """The files and folders ``task``'s runs need read-only (default: ``support_files``)."""
        return cls.support_files

    @property
    @abstractmethod
    def case_s(self) -> float:
        """Seconds one case may run."""

    @property
    @abstractmethod
    def stage_s(self) -> float:
        """Seconds a whole quiz or exam may run."""

    @abstractmethod
    def prepare(self, home: Path, public_inputs: Path) -> Preparation:
        """Prepare the entry in its home (run its setup), with the public inputs visible."""

    @abstractmethod
    def run_case(
        self, home: Path, inputs: Path, case: str, *, wall_s: float, store: Path
    ) -> CaseRun:
        """Run one case for at most ``wall_s`` seconds; store its valid output at ``store``."""

    def close(self) -> None:
        """Release what the driver kept across cases (called before its session ends)."""

    def quiz_failure_goes_on(self, entry_root: Path) -> str | None:
        """Why a failed quiz does not stop this upload (None: it stops, the default)."""
        del entry_root
        return None

    def same_output(self, first: Path, second: Path) -> bool:
        """True when two stored outputs of a case are identical (the determinism check)."""
        return first.is_file() and second.is_file() and first.read_bytes() == second.read_bytes()

    def validate_output(self, stored: Path) -> str | None:
        """Whether a stored output is usable (None) or what is wrong with it.

        One check for the quiz, the exam counts and the scorer's zero-fill alike.
        """
        return self.context.check_output(stored)

    @abstractmethod
    def expected_answer(self, entry_root: Path, case: str) -> Path | str | None:
        """The answer file the entry ships for a quiz case, what is wrong with it, or None.

        A returned path is checked: a regular file, no larger than an output may be. None
        means the entry ships no answer for the case.
        """

    @property
    @abstractmethod
    def answers_expected(self) -> bool:
        """True when the quiz compares outputs with answers shipped in the entry."""

    @abstractmethod
    def compare(self, output: Path, answer: Path) -> str | None:
        """None when a quiz output matches the shipped answer, else what differs first.

        Read both as streams: an answer may be as large as an output.
        """

    def describe_answer(self, case: str) -> str:
        """Where the entry should ship the answer of ``case`` (for the missing-answer message)."""
        return case


class DriverWithoutAnswers(Driver):
    """A protocol whose quiz ships no answers: it checks that the code runs on public data."""

    @property
    def answers_expected(self) -> bool:
        """False: no answers are shipped; the quiz checks the code runs and its output."""
        return False

    def expected_answer(self, entry_root: Path, case: str) -> Path | str | None:
        """None: no answers are shipped in this protocol."""
        return None

    def compare(self, output: Path, answer: Path) -> str | None:
        """Never called (no shipped answers)."""
        return None


@dataclass(frozen=True, slots=True)
class FilesContext:
    """What a files driver works with for one job.

    The protocol settings, the resource limits, the scorer's output check and the case names
    of every task of the challenge by split (the upload's whole layout).
    """

    settings: ProtocolSettings
    limits: ResourceLimits
    check_output: OutputCheck
    cases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


class FilesDriver(ProtocolDriver):
    """A protocol where no code runs: the upload holds the predictions themselves.

    The inputs are public (participants make their predictions from them) and only the
    references are hidden. ``split`` is ``"public"`` or ``"hidden"``. ``scores_public_split``:
    the quiz scores the public split's predictions against its public references (False: the
    protocol has no public references, the quiz is skipped).
    """

    runs_code: ClassVar[bool] = False
    scores_public_split: ClassVar[bool] = True

    def __init__(self, context: FilesContext) -> None:
        self.context = context

    @abstractmethod
    def check_upload(self, entry_root: Path) -> list[str]:
        """Every problem of the upload's layout, encoding and sizes (empty when it is fine).

        Each message names the file as the participant does (relative to the upload) and the
        fix.
        """

    @classmethod
    @abstractmethod
    def split_folder(cls, settings: ProtocolSettings, split: str) -> str:
        """The upload's folder holding the predictions of ``split`` (e.g. ``dev``, ``test``)."""

    def folder_of(self, split: str) -> str:
        """The upload's folder for ``split`` under this job's settings."""
        return self.split_folder(self.context.settings, split)

    def upload_path(self, split: str, case: str) -> str:
        """Where the upload holds the predictions of ``case``, relative to its root."""
        output = self.output_template(self.context.settings).format(record=case)
        return f"{self.folder_of(split)}/{output}"

    def prediction(self, entry_root: Path, split: str, case: str) -> Path:
        """The predictions of ``case`` of ``split`` in the unpacked upload."""
        return entry_root / self.upload_path(split, case)

    def public_uploaded(self, entry_root: Path) -> bool:
        """Whether the upload holds predictions of the public split (the quiz scores them)."""
        return True

    def validate_output(self, entry_root: Path, split: str, case: str) -> str | None:
        """Whether the predictions of ``case`` are in the scorer's format (None) or what is not.

        The scorer's check names a file inside a folder of predictions by its relative path
        (``output_a_scenario1.txt line 3: ...``); the message names it from the upload's root.
        """
        stored = self.prediction(entry_root, split, case)
        problem = self.context.check_output(stored)
        if problem is None:
            return None
        joint = "/" if stored.is_dir() else ": "
        return f"{self.upload_path(split, case)}{joint}{problem}"
