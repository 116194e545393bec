"""How the pipeline tells a face about its progress (a rich display, a log, nothing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from proctor.pipeline.report import StageReport, stage_label
from proctor.types import Stage


@dataclass(frozen=True, slots=True)
class StageKey:
    """Which stage of which task an event is about.

    ``shown_task`` is None for a phase with one task (the task is then not named in labels).
    """

    task: str
    stage: Stage
    shown_task: str | None = None

    @property
    def label(self) -> str:
        """The stage's name in displays: ``exam`` or ``TASK:exam``."""
        return stage_label(self.stage, self.shown_task)


class ProgressListener(Protocol):
    """Receives stage and case events; implementations must be thread-safe."""

    def stage_started(self, key: StageKey, total_cases: int) -> None:
        """A stage begins; ``total_cases`` is 0 for stages without cases."""

    def case_finished(self, key: StageKey, ok: bool) -> None:
        """One case of the stage ended."""

    def stage_step(self, key: StageKey, done: int, total: int, text: str) -> None:
        """A step of a stage's own work began, or its steps are over.

        ``done`` of the stage's ``total`` steps ended; ``text`` says what runs now, on one
        line (entry text: show it as text, never as markup). Prep's build of an entry's
        ``Dockerfile`` calls it as each step starts (``STEP 3/5: RUN pip install -r
        requirements.txt``, ``done`` 2 of 5), then once with ``done`` equal to ``total`` when
        the image is ready (``image sha256:… built``), before the rest of prep runs. Steps are
        not cases: the stage's ``total_cases`` and its report do not count them.
        """

    def stage_finished(self, report: StageReport) -> None:
        """A stage ended with ``report`` (already redacted)."""


class SilentProgress:
    """A listener that ignores every event."""

    def stage_started(self, key: StageKey, total_cases: int) -> None:
        """Ignore."""

    def case_finished(self, key: StageKey, ok: bool) -> None:
        """Ignore."""

    def stage_step(self, key: StageKey, done: int, total: int, text: str) -> None:
        """Ignore."""

    def stage_finished(self, report: StageReport) -> None:
        """Ignore."""
