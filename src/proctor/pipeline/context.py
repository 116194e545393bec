"""Everything one task's evaluation needs, handed from stage to stage."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from proctor.pipeline.caselog import CaseLog
from proctor.pipeline.progress import ProgressListener
from proctor.protocols.records import CaseRun, RecordsDriver
from proctor.spec.model import Challenge, Task


@dataclass(frozen=True, slots=True)
class TaskContext:
    """One task of one entry: the challenge, the unpacked entry, its home and its run folder.

    ``entry_root`` is the unpacked entry as uploaded (host side, never written by the entry);
    ``home`` is the entry's writable workspace; ``outputs`` is where exam outputs are kept for
    scoring, outside every sandbox.
    """

    challenge: Challenge
    task: Task
    entry_root: Path
    home: Path
    outputs: Path
    run_dir: Path
    driver: RecordsDriver
    jobs: int
    progress: ProgressListener
    case_log: CaseLog | None = None
    stage_prefix: str = ""

    def log_case(self, stage: str, run: CaseRun) -> None:
        """Keep the organizer's record of a finished case (never shown to the participant)."""
        if self.case_log is not None:
            self.case_log.record(self.stage_name(stage), run)

    def stage_name(self, stage: str) -> str:
        """The stage's name in reports (``task:stage`` when a phase has several tasks)."""
        return f"{self.stage_prefix}{stage}"
