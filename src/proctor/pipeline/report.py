"""What an evaluation reports: per-stage status, case counts, resource usage and scores.

A ``TaskReport`` is what one job (an entry on one task) produces; an ``EvaluationReport``
combines the task reports of a submission (:func:`combine`). ``EvaluationReport.to_json`` is the
one place where the report becomes the documented JSON of ``proctor run --json``; disclosure
has already been applied when the stage reports were made.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proctor.sandbox.base import Outcome
from proctor.types import Failure, RunStatus, Stage, StageStatus


def json_number(value: float) -> float | None:
    """``value`` for JSON: NaN and infinities become null (JSON has no NaN)."""
    return value if math.isfinite(value) else None


def _json_scores(row: dict[str, float], counts: frozenset[str]) -> dict[str, float | int | None]:
    """A task's scores for JSON: counts as whole numbers, NaN as null."""
    return {
        name: int(value) if name in counts and math.isfinite(value) else json_number(value)
        for name, value in row.items()
    }


def _json_table(table: dict[str, dict[str, float]]) -> dict[str, dict[str, float | None]]:
    return {key: {k: json_number(v) for k, v in row.items()} for key, row in table.items()}


def _json_dashboard(rows: dict[str, dict[str, float]]) -> dict[str, dict[str, float | None]]:
    """A dashboard metric's rows for JSON: ``empty`` and ``count`` whole, NaN as null."""
    return {
        group: {k: int(v) if k in ("empty", "count") else json_number(v) for k, v in row.items()}
        for group, row in rows.items()
    }


@dataclass(frozen=True, slots=True)
class Usage:
    """Resources used: wall and CPU seconds, peak memory in bytes (max over runs)."""

    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_memory_bytes: int = 0

    @classmethod
    def of(cls, outcome: Outcome) -> Usage:
        """The resources one sandboxed run used."""
        return cls(outcome.wall_s, outcome.cpu_s, outcome.peak_memory_bytes)

    @classmethod
    def total(cls, outcomes: Iterable[Outcome]) -> Usage:
        """The resources several runs used together (peak memory: the largest)."""
        usage = cls()
        for outcome in outcomes:
            usage = usage + cls.of(outcome)
        return usage

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.wall_s + other.wall_s,
            self.cpu_s + other.cpu_s,
            max(self.peak_memory_bytes, other.peak_memory_bytes),
        )

    def to_json(self) -> dict[str, float | int]:
        """The ``usage`` object of the JSON report."""
        return {
            "wall_s": round(self.wall_s, 3),
            "cpu_s": round(self.cpu_s, 3),
            "peak_memory_bytes": self.peak_memory_bytes,
        }


EFFICIENCY_COUNTS = frozenset({"peak_memory_bytes"})
"""The efficiency figures that count something (bytes): whole numbers wherever shown."""
HIDDEN_USAGE: dict[str, None] = {"wall_s": None, "cpu_s": None, "peak_memory_bytes": None}
"""The JSON ``usage`` of a report some of whose figures the disclosure withheld."""


@dataclass(frozen=True, slots=True)
class CaseCounts:
    """How many cases a stage ran and how they ended."""

    total: int = 0
    passed: int = 0
    failed: int = 0
    timed_out: int = 0

    def to_json(self) -> dict[str, int]:
        """The ``cases`` object of a stage in the JSON report."""
        return {
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "timed_out": self.timed_out,
        }


@dataclass(frozen=True, slots=True)
class EnvironmentInfo:
    """The root filesystem a task ran in, as reported.

    ``name`` is ``host`` for the host's own ``/usr`` (trusted local runs). ``digest`` is the
    image's content digest, ``declaration_digest`` the digest of what was declared;
    ``matches_lock`` says whether the image is exactly the challenge's published
    ``environment.lock`` (None when the challenge publishes none). ``shared_page_cache``: the
    root was not mounted for this job alone (a local run without root, or ``host``).
    An entry's own image is named ``entry-image``; its ``digest`` is the image's config digest
    (``sha256:…``) and ``base`` the image it was built from, when known.
    """

    name: str
    digest: str | None = None
    declaration_digest: str | None = None
    matches_lock: bool | None = None
    shared_page_cache: bool = True
    base: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``environment`` object of the JSON report."""
        return {
            "name": self.name,
            "digest": self.digest,
            "declaration_digest": self.declaration_digest,
            "matches_lock": self.matches_lock,
            "shared_page_cache": self.shared_page_cache,
            **({"base": self.base} if self.name == ENTRY_IMAGE else {}),
        }


HOST_ENVIRONMENT = EnvironmentInfo("host")
ENTRY_IMAGE = "entry-image"
"""The environment name of a task that ran in the entry's own image."""


def stage_label(stage: Stage, shown_task: str | None) -> str:
    """How a stage is named in reports and displays: ``exam``, or ``TASK:exam``.

    The task is named only when the phase has several tasks.
    """
    return f"{shown_task}:{stage}" if shown_task else str(stage)


@dataclass(frozen=True, slots=True)
class StageReport:
    """One stage of one task as the participant may see it (already redacted by disclosure).

    ``task`` is set when the phase has several tasks; it prefixes the stage's ``label``.
    """

    stage: Stage
    status: StageStatus
    message: str = ""
    wall_s: float = 0.0
    cases: CaseCounts = CaseCounts()
    usage: Usage = Usage()
    task: str | None = None
    figures_hidden: bool = False
    """The disclosure withheld the stage's time and usage (``wall_s`` and ``usage`` are 0 then,
    and the JSON report writes them ``null``)."""

    @property
    def label(self) -> str:
        """How the stage is named in reports and displays: ``exam`` or ``TASK:exam``."""
        return stage_label(self.stage, self.task)

    @property
    def name(self) -> str:
        """The stage's name in the JSON report (its label)."""
        return self.label

    def to_json(self) -> dict[str, Any]:
        """The stage entry of the JSON report: name, status, message, wall_s, cases."""
        return {
            "name": self.label,
            "status": str(self.status),
            "message": self.message,
            "wall_s": None if self.figures_hidden else round(self.wall_s, 3),
            "cases": self.cases.to_json(),
        }


@dataclass(frozen=True, slots=True)
class FullScores:
    """Every summary and per-case value of a scored task, unredacted: the service's alone.

    It travels in the job's result to the store and the boards; no participant's report or
    JSON ever holds it (``report_codec.to_data`` leaves it out).
    """

    summary: dict[str, float]
    per_record: dict[str, dict[str, float]] | None = None


@dataclass(frozen=True, slots=True)
class TaskReport:
    """The outcome of one job: an entry evaluated on one task of a phase.

    ``failure`` says whose fault a failed task was; ``failed_stage`` which stage failed.
    """

    task: str
    status: RunStatus
    stages: tuple[StageReport, ...]
    failure: Failure | None = None
    failed_stage: Stage | None = None
    scores: dict[str, float] = field(default_factory=dict)
    per_record: dict[str, dict[str, float]] | None = None
    efficiency: dict[str, float] | None = None
    determinism: dict[str, float] | None = None
    dashboard: dict[str, dict[str, dict[str, float]]] | None = None
    """The scorer's per-group statistics (VISCERAL: metric → organ → statistic), if shown."""
    environment: EnvironmentInfo = HOST_ENVIRONMENT
    count_metrics: frozenset[str] = frozenset()
    """Metrics that count something (records scored): whole numbers in the JSON report."""
    full: FullScores | None = field(default=None, compare=False, repr=False)
    """The unredacted scores (scored tasks only), for the service; never shown."""

    def to_json(self, *, with_environment: bool = False) -> dict[str, Any]:
        """The task's entry under ``tasks`` in the JSON report."""
        data: dict[str, Any] = {
            "status": str(self.status),
            "failure": str(self.failure) if self.failure else None,
            "failed_stage": str(self.failed_stage) if self.failed_stage else None,
        }
        if with_environment:
            data["environment"] = self.environment.to_json()
        return data


@dataclass(frozen=True, slots=True)
class EvaluationReport:
    """The outcome of evaluating one entry in one phase of one challenge (every task).

    ``scores`` depend only on the entry's outputs (a rerun gives the same numbers);
    ``efficiency`` holds per-task resource use of the exam (CPU and wall seconds per case, peak
    memory in bytes), which varies from run to run. ``status`` is ``scored`` only when every
    task scored; ``tasks`` (several tasks only) gives each task's own status.
    """

    challenge: str
    phase: str
    status: RunStatus
    stages: tuple[StageReport, ...]
    message: str = ""
    failed_stage: str | None = None
    failure: Failure | None = None
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    per_record: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    efficiency: dict[str, dict[str, float]] = field(default_factory=dict)
    determinism: dict[str, dict[str, float]] = field(default_factory=dict)
    tasks: dict[str, TaskReport] = field(default_factory=dict)
    run_dir: Path | None = None
    dashboard: dict[str, dict[str, dict[str, dict[str, float]]]] = field(default_factory=dict)
    """Per task, the scorer's dashboard (VISCERAL: metric → organ → statistic), where shown."""
    platform_faults: tuple[str, ...] = ()
    """Why the platform failed (``task T (stage): reason``): set by a local run only, for the
    organizer's own terminal; not in ``to_json`` and never shown to a participant."""

    @property
    def environment(self) -> EnvironmentInfo | None:
        """The environment every task ran in; None when tasks ran in different ones."""
        found = {report.environment for report in self.tasks.values()}
        return found.pop() if len(found) == 1 else None

    @property
    def figures_hidden(self) -> bool:
        """True when a stage's time and usage were withheld: the totals would mislead."""
        return any(stage.figures_hidden for stage in self.stages)

    @property
    def usage(self) -> Usage:
        """Resources used by every stage together."""
        total = Usage()
        for stage in self.stages:
            total = total + stage.usage
        return total

    def whole_metrics(self, task: str) -> frozenset[str]:
        """The figures of ``task`` that count something: its scorer's counts, memory bytes."""
        counts = self.tasks[task].count_metrics if task in self.tasks else frozenset()
        return counts | EFFICIENCY_COUNTS

    def to_json(self) -> dict[str, Any]:
        """The documented JSON object of ``proctor run --json``."""
        data: dict[str, Any] = {
            "challenge": self.challenge,
            "phase": self.phase,
            "status": str(self.status),
            "failure": str(self.failure) if self.failure else None,
            "failed_stage": self.failed_stage,
            "message": self.message,
            "stages": [stage.to_json() for stage in self.stages],
            "scores": {
                task: _json_scores(
                    row, self.tasks[task].count_metrics if task in self.tasks else frozenset()
                )
                for task, row in self.scores.items()
            },
            "usage": HIDDEN_USAGE if self.figures_hidden else self.usage.to_json(),
            "efficiency": _json_table(self.efficiency),
        }
        shared = self.environment
        if shared is not None:
            data["environment"] = shared.to_json()
        if len(self.tasks) > 1:
            data["tasks"] = {
                name: report.to_json(with_environment=shared is None)
                for name, report in self.tasks.items()
            }
        if self.determinism:
            data["determinism"] = {
                task: {key: int(value) for key, value in row.items()}
                for task, row in self.determinism.items()
            }
        if self.dashboard:
            data["dashboard"] = {
                task: {metric: _json_dashboard(rows) for metric, rows in board.items()}
                for task, board in self.dashboard.items()
            }
        if self.per_record:
            data["per_record"] = {
                task: _json_table(records) for task, records in self.per_record.items()
            }
        return data


def combine(challenge: str, phase: str, reports: Sequence[TaskReport]) -> EvaluationReport:
    """The submission's report from its task reports (in the phase's task order).

    ``scored`` only when every task scored; ``dry_run`` when every task stopped after a
    passed quiz; else ``failed``, naming the first failed task's stage and whose fault it was.
    """
    failed = next((r for r in reports if r.status is RunStatus.FAILED), None)
    if failed is not None:
        status = RunStatus.FAILED
        stage = next(s for s in failed.stages if s.status is StageStatus.FAILED)
        failed_stage: str | None = stage.label
        message = f"{stage.label} failed"
    elif reports and all(r.status is RunStatus.DRY_RUN for r in reports):
        status, failed_stage, message = RunStatus.DRY_RUN, None, "dry run completed with no error"
    else:
        status, failed_stage, message = RunStatus.SCORED, None, "scored"
    return EvaluationReport(
        challenge=challenge,
        phase=phase,
        status=status,
        stages=tuple(stage for report in reports for stage in report.stages),
        message=message,
        failed_stage=failed_stage,
        failure=failed.failure if failed is not None else None,
        scores={r.task: r.scores for r in reports if r.scores},
        per_record={r.task: r.per_record for r in reports if r.per_record is not None},
        efficiency={r.task: r.efficiency for r in reports if r.efficiency is not None},
        determinism={r.task: r.determinism for r in reports if r.determinism is not None},
        dashboard={r.task: r.dashboard for r in reports if r.dashboard},
        tasks={r.task: r for r in reports},
    )
