"""The ``protocol:`` blocks of Codabench's two protocols: ``results`` and ``ingestion``.

Both drivers (``protocols.results``, ``protocols.ingestion``) and the upload-as-program check
they share (``protocols.upload_program``) read them, so they live in one module of their own.
The ``ingestion`` block::

    protocol:
      kind: ingestion
      upload_bytes: 268435456        # the upload at most
      shared_bytes: 67108864         # /app/shared at most
      programs:                      # per task: the organizer's ingestion program
        alpha-task:
          program: programs/alpha-task-ingestion      # a folder of the challenge
          command: [python3, /app/program/ingestion.py, /app/input_data, /app/output,
                    /app/ingested_program]
          wall_s: 600                # Codabench's execution_time_limit
      submission_programs:           # per task without an ingestion program: the upload may
        beta-task: {wall_s: 600}     # be a program (its metadata command), run in the exam

The ingestion program is the harness of the participant's code: it runs in the exam stage on
the task's hidden inputs (and in the quiz on its public inputs, when it has any), in the
entry's sandbox, with Codabench's compute worker layout (``spec.ingestion.LAYOUT``). A task
without an ingestion program takes the upload itself as its output, as on Codabench; when the
task is in ``submission_programs``, an upload whose ``metadata`` names a ``command`` is the
program instead (CodaLab's classic code submission): it runs in the exam with ``/app/program`` = the
upload, ``/app/input_data`` and ``/app/output``, within ``wall_s``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from proctor.spec.protocols import LocatedError, ProtocolSettings, Strict


class ResultsProtocol(ProtocolSettings):
    """Codabench/CodaLab result submissions: the whole upload is the predictions folder.

    No code runs. There is no public split to score: the scoring program sees the upload as
    its outputs folder (Codabench's ``/app/input/res``) for every task of the phase. The
    upload is at most ``upload_bytes``.
    """

    kind: Literal["results"]
    upload_bytes: int = Field(default=256 * 1024**2, gt=0, strict=True)


class IngestionProgram(Strict):
    """One task's ingestion program: its folder, the argv run there, its seconds."""

    program: Path
    command: tuple[str, ...] = Field(min_length=1)
    wall_s: float = Field(default=600.0, gt=0)

    @field_validator("program")
    @classmethod
    def _relative(cls, program: Path) -> Path:
        if not program.is_absolute() and ".." in program.parts:
            raise ValueError(
                f"{str(program)!r} must be a folder inside the challenge folder, without '..'"
            )
        return program


class SubmissionProgram(Strict):
    """A task whose upload may be its own program: the seconds that program may run."""

    wall_s: float = Field(default=600.0, gt=0)


class IngestionProtocol(ProtocolSettings):
    """Codabench code submissions: each task's ingestion program runs the uploaded code.

    ``programs``: task name → its ingestion program (a task left out: the upload is its
    output). ``submission_programs``: task name (without an ingestion program) → how long an
    upload naming its own ``command`` may run as the task's program (a task left out refuses
    such an upload). ``upload_bytes``: the upload at most; ``shared_bytes``: ``/app/shared`` at
    most (``/app/output`` by the larger of ``limits.output_bytes`` and ``upload_bytes``);
    ``scratch_bytes``: what a run may add to its copy of the ingestion program's folder (the
    writable working folder, as Codabench's ``/app/program``).
    """

    kind: Literal["ingestion"]
    upload_bytes: int = Field(default=256 * 1024**2, gt=0, strict=True)
    shared_bytes: int = Field(default=64 * 1024**2, gt=0, strict=True)
    scratch_bytes: int = Field(default=64 * 1024**2, gt=0, strict=True)
    programs: dict[str, IngestionProgram] = Field(default_factory=dict)
    submission_programs: dict[str, SubmissionProgram] = Field(default_factory=dict)

    def resolved(self, root: Path) -> IngestionProtocol:
        """The block with each program folder absolute: it must be a folder of the challenge."""
        programs = {}
        for task, program in self.programs.items():
            folder = (root / program.program).resolve()
            if not folder.is_relative_to(root) or not folder.is_dir():
                raise LocatedError(
                    f"{folder} is not a folder inside the challenge folder: fix the path",
                    f"programs.{task}.program",
                )
            programs[task] = program.model_copy(update={"program": folder})
        return self.model_copy(update={"programs": programs})

    def check_tasks(self, tasks: tuple[str, ...]) -> None:
        """Every task named must be a task of the challenge; none in both mappings."""
        named_by: tuple[tuple[str, tuple[str, ...]], ...] = (
            ("programs", tuple(self.programs)),
            ("submission_programs", tuple(self.submission_programs)),
        )
        for key, named in named_by:
            for task in named:
                if task not in tasks:
                    raise LocatedError(
                        f"{task!r} is not a task of the challenge (tasks: {', '.join(tasks)})",
                        f"{key}.{task}",
                    )
        for task in self.submission_programs:
            if task in self.programs:
                raise LocatedError(
                    f"{task!r} has an ingestion program, which runs the upload: remove the task "
                    "from submission_programs",
                    f"submission_programs.{task}",
                )

    def program_of(self, task: str) -> IngestionProgram | None:
        """``task``'s ingestion program, None when the upload is its output."""
        return self.programs.get(task)

    def submission_program_of(self, task: str) -> SubmissionProgram | None:
        """Whether (and how long) ``task`` runs an upload naming its own ``command``."""
        return self.submission_programs.get(task)
