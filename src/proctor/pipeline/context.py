"""Everything one job (an entry on one task) needs, handed from stage to stage."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from proctor.protocols.base import Driver
from proctor.scoring.base import Scorer
from proctor.spec.model import Challenge, Phase, Task
from proctor.store.runfolder import RunFolder
from proctor.types import Stage


@dataclass(frozen=True, slots=True)
class TaskContext:
    """One task of one entry: the challenge, the staged task, the driver and the run folder.

    ``entry_root`` is the unpacked entry as uploaded (host side, never written by the entry);
    ``home`` is the entry's writable workspace; outputs are stored in ``folder`` outside
    every sandbox. ``cancel`` kills this job's running cases (its sandbox session) only.
    ``prep_note`` and ``prep_logs``: what happened before prep's run (the entry's image built,
    or its ``Dockerfile`` left unbuilt), a clause of prep's message and logs shown with prep's.
    """

    challenge: Challenge
    phase: Phase
    task: Task
    driver: Driver
    scorer: Scorer
    entry_root: Path
    home: Path
    folder: RunFolder
    jobs: int
    made_executable: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    unwrapped: str = ""
    prep_note: str = ""
    prep_logs: tuple[tuple[str, str], ...] = ()

    def outputs(self, stage: Stage) -> Path:
        """Where this task's collected outputs of ``stage`` are stored."""
        return self.folder.outputs(self.task.name, stage)

    def stored(self, stage: Stage, case: str) -> Path:
        """The stored output of ``case`` in ``stage`` (named as the scorer expects)."""
        template = self.driver.output_template(self.challenge.protocol)
        return self.outputs(stage) / template.format(record=case)
