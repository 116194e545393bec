"""How the pipeline tells a face about its progress (a rich display, a log, nothing)."""

from __future__ import annotations

from typing import Protocol

from proctor.pipeline.report import StageReport


class ProgressListener(Protocol):
    """Receives stage and case events; implementations must be thread-safe."""

    def stage_started(self, stage: str, total_cases: int) -> None:
        """A stage begins; ``total_cases`` is 0 for stages without cases."""

    def case_finished(self, stage: str, ok: bool) -> None:
        """One case of ``stage`` ended."""

    def stage_finished(self, report: StageReport) -> None:
        """A stage ended with ``report`` (already redacted)."""


class SilentProgress:
    """A listener that ignores every event."""

    def stage_started(self, stage: str, total_cases: int) -> None:
        """Ignore."""

    def case_finished(self, stage: str, ok: bool) -> None:
        """Ignore."""

    def stage_finished(self, report: StageReport) -> None:
        """Ignore."""
