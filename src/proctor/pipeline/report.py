"""What an evaluation reports: per-stage status, case counts, resource usage and scores.

``EvaluationReport.to_json`` is the one place where the report becomes the documented JSON of
``proctor run --json``; disclosure has already been applied when the stage reports were made.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from proctor.sandbox.base import Outcome


def json_number(value: float) -> float | None:
    """``value`` for JSON: NaN and infinities become null (JSON has no NaN)."""
    return value if math.isfinite(value) else None


def _json_table(table: dict[str, dict[str, float]]) -> dict[str, dict[str, float | None]]:
    return {key: {k: json_number(v) for k, v in row.items()} for key, row in table.items()}


class StageStatus(StrEnum):
    """The state a stage ends in."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class RunStatus(StrEnum):
    """The state an evaluation ends in."""

    SCORED = "scored"
    DRY_RUN = "dry_run"
    FAILED = "failed"


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
class StageReport:
    """One stage as the participant may see it (already redacted by disclosure)."""

    name: str
    status: StageStatus
    message: str = ""
    wall_s: float = 0.0
    cases: CaseCounts = CaseCounts()
    usage: Usage = Usage()

    def to_json(self) -> dict[str, Any]:
        """The stage entry of the JSON report: name, status, message, wall_s, cases."""
        return {
            "name": self.name,
            "status": str(self.status),
            "message": self.message,
            "wall_s": round(self.wall_s, 3),
            "cases": self.cases.to_json(),
        }


@dataclass(frozen=True, slots=True)
class EvaluationReport:
    """The outcome of evaluating one entry in one phase of one challenge.

    ``scores`` depend only on the entry's outputs (a rerun gives the same numbers);
    ``efficiency`` holds per-task resource use of the exam (CPU and wall seconds per case, peak
    memory in bytes), which varies from run to run.
    """

    challenge: str
    phase: str
    status: RunStatus
    stages: tuple[StageReport, ...]
    message: str = ""
    failed_stage: str | None = None
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    per_record: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    efficiency: dict[str, dict[str, float]] = field(default_factory=dict)
    determinism: dict[str, dict[str, float]] = field(default_factory=dict)
    run_dir: Path | None = None

    @property
    def usage(self) -> Usage:
        """Resources used by every stage together."""
        total = Usage()
        for stage in self.stages:
            total = total + stage.usage
        return total

    def to_json(self) -> dict[str, Any]:
        """The documented JSON object of ``proctor run --json``."""
        data: dict[str, Any] = {
            "challenge": self.challenge,
            "phase": self.phase,
            "status": str(self.status),
            "failed_stage": self.failed_stage,
            "message": self.message,
            "stages": [stage.to_json() for stage in self.stages],
            "scores": _json_table(self.scores),
            "usage": self.usage.to_json(),
            "efficiency": _json_table(self.efficiency),
        }
        if self.determinism:
            data["determinism"] = {
                task: {key: int(value) for key, value in row.items()}
                for task, row in self.determinism.items()
            }
        if self.per_record:
            data["per_record"] = {
                task: _json_table(records) for task, records in self.per_record.items()
            }
        return data
