"""The entry-protocol contract: what the pipeline may ask of any way of running an entry.

A ``Driver`` knows one protocol (how an entry is laid out, prepared and run per case); the
pipeline knows only this contract, so a new protocol is one driver module plus
``protocols.registry.register_driver``. Everything runs through the job's sandbox session;
outputs leave the sandbox only through the driver's collection and are stored by the host in
the run folder, never shown to another case.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from proctor.entries import Manifest
from proctor.sandbox.base import Mount, Outcome, SandboxSession
from proctor.spec.model import ResourceLimits
from proctor.spec.protocols import ProtocolSettings

OutputCheck = Callable[[Path], "str | None"]
"""Whether a stored output is valid for the task's scorer: None, or what is wrong with it."""


@dataclass(frozen=True, slots=True)
class CaseRun:
    """One case: the sandbox outcome and the stored output (None when none was usable)."""

    case: str
    outcome: Outcome
    output: Path | None
    problem: str = ""

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
    wheels).
    """

    settings: ProtocolSettings
    limits: ResourceLimits
    session: SandboxSession
    parallel_runs: int
    check_output: OutputCheck
    variables: Mapping[str, str] = field(default_factory=dict)
    extra_mounts: tuple[Mount, ...] = ()


class Driver(ABC):
    """One entry protocol. Subclasses set ``kind``, ``settings_model`` and ``summary``.

    ``case_noun`` names a case in participant messages ("record", "volume", "dataset").
    """

    kind: ClassVar[str]
    settings_model: ClassVar[type[ProtocolSettings]]
    summary: ClassVar[str]
    case_noun: ClassVar[str] = "case"

    def __init__(self, context: DriverContext) -> None:
        self.context = context

    @classmethod
    @abstractmethod
    def list_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The cases of a split (a public or hidden inputs folder), in evaluation order."""

    @classmethod
    @abstractmethod
    def output_template(cls, settings: ProtocolSettings) -> str:
        """The stored output of each case, as a template with ``{record}`` (the scorer's view)."""

    @classmethod
    @abstractmethod
    def manifest(cls, settings: ProtocolSettings) -> Manifest:
        """What an entry must contain before anything runs (checked before a slot is claimed)."""

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
