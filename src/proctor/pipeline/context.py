"""Everything one task's evaluation needs, handed from stage to stage."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from proctor.pipeline.progress import ProgressListener
from proctor.protocols.records import RecordsDriver
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
    driver: RecordsDriver
    jobs: int
    progress: ProgressListener
    stage_prefix: str = ""

    def stage_name(self, stage: str) -> str:
        """The stage's name in reports (``task:stage`` when a phase has several tasks)."""
        return f"{self.stage_prefix}{stage}"
