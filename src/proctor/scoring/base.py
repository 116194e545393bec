"""What a scorer is: a function from stored outputs and hidden references to task scores."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.spec.programs import ProgramRunner
from proctor.spec.scorer import OutputCheckSettings, ScorerDeclaration, ScorerSettings


@dataclass(frozen=True, slots=True)
class TaskScores:
    """Summary metrics of a task, per-case values, the cases scored as zeros, a dashboard."""

    summary: dict[str, float]
    per_record: dict[str, dict[str, float]] = field(default_factory=dict)
    zero_filled: tuple[str, ...] = ()
    dashboard: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """Statistics per metric and group a scorer offers (VISCERAL's per-organ dashboard:
    metric → organ → empty, count, min, max, median, mean); empty for most scorers."""
    log: str = ""
    """For the organizer only (a scoring program's warnings and output): never shown."""
    pages: dict[str, str] = field(default_factory=dict)
    """Pages the scorer made for this submission (a Codabench ``detailed_results.html``): name
    → HTML, kept in the run folder; shown only where the phase's disclosure allows."""


ScoreFunction = Callable[[Path, Path, Sequence[str], str], TaskScores]
"""``(outputs, references, cases, output_template) -> TaskScores``: a case whose output is
missing from ``outputs`` is scored as its scorer's failure value (zeros for 2018)."""

OutputCheck = Callable[[Path], "str | None"]
"""Whether one stored output is usable by the scorer: None, or what is wrong (no host paths)."""


@dataclass(frozen=True, slots=True)
class Scorer:
    """A scorer: its declaration (metrics, directions, references) and its functions.

    A named scorer's module declares one (``physionet2018.SCORER``); a scorer kind makes one
    per ``scorer:`` mapping (:class:`ScorerKind`).
    """

    declaration: ScorerDeclaration
    score: ScoreFunction
    check_output: OutputCheck

    @property
    def name(self) -> str:
        """The name a task's ``scorer`` gives (``program`` for a scoring program)."""
        return self.declaration.name


ScorerFactory = Callable[[Any, "ProgramRunner | None", "ProgramRunner | None"], Scorer]
"""``(settings, runner, check_runner) -> Scorer``: the scorer of one ``scorer:`` mapping.

``runner`` runs an organizer's program in the sandbox (None where no sandbox was given),
``check_runner`` its output check."""


@dataclass(frozen=True, slots=True)
class ScorerKind:
    """A scorer kind: a ``scorer:`` mapping validated by ``settings_model``, scored by ``make``.

    The module implementing the kind declares it (``scoring.table.KIND``); ``kind`` is the
    name a mapping gives (``kind: table``, or its one key ``table:``).
    """

    kind: str
    settings_model: type[ScorerSettings]
    make: ScorerFactory
    summary: str


BeforeScoring = Callable[[Path, Path, Sequence[str], str], None]
"""``(outputs, references, cases, output_template) -> None``: refuses a task's outputs with
``OutputError`` (the entry's fault) before a scoring program reads them."""


@dataclass(frozen=True, slots=True)
class InputCheck:
    """Proctor's checks serving a scoring program: one output's, then the task's outputs'."""

    check_output: OutputCheck
    before_scoring: BeforeScoring


@dataclass(frozen=True, slots=True)
class CheckKind:
    """A check kind a scoring program may name (``check: table``), declared by its module.

    ``settings_model`` validates the block under the key ``kind`` of the program's mapping;
    ``make`` gives its checks.
    """

    kind: str
    settings_model: type[OutputCheckSettings]
    make: Callable[[Any], InputCheck]
