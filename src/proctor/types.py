"""The shared vocabulary of Proctor, at the bottom of the layers.

Enums every layer speaks (stages, disclosure levels, why a run failed), and the declarations of
what Proctor knows how to run and score: protocol kinds and scorers with the metrics they
produce and each metric's direction. Implementations register from above (``protocols``
registers drivers, ``scoring`` registers scorer functions), so ``spec`` validates a
``challenge.yaml`` against this module alone, without importing upward.

A new built-in scorer is declared here and registered in ``scoring.registry``; a test checks
that the two agree. A new protocol kind is declared by registering its driver
(``protocols.registry.register_driver``), which calls :func:`declare_protocol`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Stage(StrEnum):
    """The stages of one task's evaluation, in order (``rerun`` is the determinism check)."""

    PREP = "prep"
    QUIZ = "quiz"
    EXAM = "exam"
    RERUN = "rerun"
    SCORE = "score"


MAIN_STAGES = (Stage.PREP, Stage.QUIZ, Stage.EXAM, Stage.SCORE)
"""The stages every report lists (``rerun`` appears only when a phase asks for it)."""


class Disclosure(StrEnum):
    """What a participant sees of a stage.

    ``full`` diagnostics (log tails), ``errors`` only the error line, ``counts`` only counts of
    cases, failures and timeouts, ``none`` only whether the stage passed.
    """

    FULL = "full"
    ERRORS = "errors"
    COUNTS = "counts"
    NONE = "none"


class StageStatus(StrEnum):
    """The state a stage ends in."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class RunStatus(StrEnum):
    """The state an evaluation (of one task, or of a whole submission) ends in."""

    SCORED = "scored"
    DRY_RUN = "dry_run"
    FAILED = "failed"


class Failure(StrEnum):
    """Whose fault a failed run was.

    ``entry``: the participant's (a bad archive, a failing script, a wrong answer);
    ``platform``: the host's (no mount, a full disk); ``scorer``: the scoring code or the
    references; ``infrastructure``: the worker died or was lost (set by the service).
    """

    ENTRY = "entry"
    PLATFORM = "platform"
    SCORER = "scorer"
    INFRASTRUCTURE = "infrastructure"


class Direction(StrEnum):
    """Which way a metric improves."""

    HIGHER = "higher"
    LOWER = "lower"
    NEUTRAL = "neutral"

    @property
    def higher_is_better(self) -> bool:
        """True for ``higher``; ranking a ``neutral`` metric is refused where it is declared."""
        return self is Direction.HIGHER


@dataclass(frozen=True, slots=True)
class MetricDeclaration:
    """One metric a scorer reports: its name, direction and a one-line meaning."""

    name: str
    direction: Direction
    summary: str = ""

    @property
    def rankable(self) -> bool:
        """True when a leaderboard may order entries by this metric."""
        return self.direction is not Direction.NEUTRAL


@dataclass(frozen=True, slots=True)
class ScorerDeclaration:
    """A built-in scorer: its metrics (in report order) and the reference file of each case.

    ``reference`` is a template with ``{record}``: the file every hidden case needs among the
    task's hidden references, checked when a challenge is installed.
    """

    name: str
    metrics: tuple[MetricDeclaration, ...]
    reference: str
    summary: str = ""

    @property
    def metric_names(self) -> tuple[str, ...]:
        """The names of the metrics, in report order."""
        return tuple(metric.name for metric in self.metrics)

    def metric(self, name: str) -> MetricDeclaration:
        """The declaration of metric ``name`` (``KeyError`` when the scorer has none)."""
        for metric in self.metrics:
            if metric.name == name:
                return metric
        raise KeyError(name)


def _metrics(*rows: tuple[str, Direction, str]) -> tuple[MetricDeclaration, ...]:
    return tuple(MetricDeclaration(name, direction, summary) for name, direction, summary in rows)


SCORERS: Mapping[str, ScorerDeclaration] = {
    "physionet2018": ScorerDeclaration(
        name="physionet2018",
        summary="PhysioNet/CinC 2018 arousals: gross AUPRC over every hidden record",
        reference="{record}-arousal.mat",
        metrics=_metrics(
            ("auprc", Direction.HIGHER, "gross area under the precision-recall curve"),
            ("auroc", Direction.HIGHER, "gross area under the ROC curve"),
            ("brier", Direction.LOWER, "Brier score over every scored sample"),
            ("ece", Direction.LOWER, "expected calibration error (10 equal-width bins)"),
            ("auprc_ci95_low", Direction.HIGHER, "bootstrap 95% interval of the AUPRC: low"),
            ("auprc_ci95_high", Direction.HIGHER, "bootstrap 95% interval of the AUPRC: high"),
            ("records", Direction.NEUTRAL, "hidden records scored"),
            ("records_zero_filled", Direction.NEUTRAL, "records scored as zeros (no output)"),
        ),
    ),
    "physionet2017": ScorerDeclaration(
        name="physionet2017",
        summary="PhysioNet/CinC 2017 AF classification: mean F1 of N, A, O",
        reference="REFERENCE.csv",
        metrics=_metrics(
            ("score", Direction.HIGHER, "mean F1 of normal, AF and other rhythm"),
            ("f1_normal", Direction.HIGHER, "F1 of normal rhythm (N)"),
            ("f1_af", Direction.HIGHER, "F1 of atrial fibrillation (A)"),
            ("f1_other", Direction.HIGHER, "F1 of other rhythm (O)"),
            ("f1_noisy", Direction.HIGHER, "F1 of noisy recordings (~), not in the score"),
            ("records", Direction.NEUTRAL, "hidden records scored"),
            ("records_zero_filled", Direction.NEUTRAL, "records answered as noise (no output)"),
        ),
    ),
}
"""Every built-in scorer, by the name a task's ``scorer`` key uses."""


@dataclass(frozen=True, slots=True)
class ProtocolDeclaration:
    """An entry protocol Proctor can run.

    ``settings`` is the pydantic model of its ``protocol:`` block for kinds declared at run
    time (a plug-in); built-in kinds have their models in ``spec`` and leave it None.
    """

    kind: str
    summary: str
    settings: Any = None


BUILTIN_PROTOCOLS: Mapping[str, str] = {
    "records": "PhysioNet sandbox: setup.sh once, next.sh RECORD per case",
    "command": "VISCERAL: one executable run per volume from an argv template",
    "python_model": "AutoML: a harness drives the entry's model.py (train, save, load, predict)",
    "predictions": "Kaggle-style: uploaded prediction files, no code runs",
}
"""Every protocol kind the ``challenge.yaml`` vocabulary names, runnable or not yet."""

RUNNABLE_BUILTIN_PROTOCOLS = frozenset({"records"})
"""The built-in kinds whose driver ships (a test checks the driver registry agrees)."""


@dataclass
class _ProtocolTable:
    declared: dict[str, ProtocolDeclaration] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_PROTOCOLS = _ProtocolTable(
    {
        kind: ProtocolDeclaration(kind, summary)
        for kind, summary in BUILTIN_PROTOCOLS.items()
        if kind in RUNNABLE_BUILTIN_PROTOCOLS
    }
)


def declare_protocol(declaration: ProtocolDeclaration) -> None:
    """Make a protocol kind runnable (called when its driver registers)."""
    with _PROTOCOLS.lock:
        _PROTOCOLS.declared[declaration.kind] = declaration


def withdraw_protocol(kind: str) -> None:
    """Forget a kind declared at run time (tests of plug-in protocols clean up with it)."""
    with _PROTOCOLS.lock:
        if kind not in RUNNABLE_BUILTIN_PROTOCOLS:
            _PROTOCOLS.declared.pop(kind, None)


def runnable_protocols() -> dict[str, ProtocolDeclaration]:
    """The protocol kinds that have a driver, by kind."""
    with _PROTOCOLS.lock:
        return dict(_PROTOCOLS.declared)
