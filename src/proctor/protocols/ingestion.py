"""The ``ingestion`` protocol (Codabench code submissions): the organizer's program runs the upload.

On Codabench a code submission is run by the task's ingestion program, the organizer's
harness, which imports or starts the participant's code; what it writes in ``/app/output`` is
what the scoring program scores. Here that run is the exam (on the task's hidden inputs) and,
where the task has public inputs (a bundle's sample data), the quiz; the scoring program is
the task's scorer. It runs in the entry's sandbox session (the participant's slot: the whole
run is untrusted), with the compute worker's layout (``spec.ingestion.LAYOUT``)::

    /app/program            a copy of the ingestion program's folder, writable (as on
                            Codabench), the working folder
    /app/input_data         the split's inputs (read-only)
    /app/ingested_program   the upload, in the entry's writable, capped home
    /app/output             writable, capped (:attr:`IngestionDriver.output_bytes`): the
                            task's output afterwards
    /app/shared             writable, ``shared_bytes``, empty

An upload without a ``metadata`` file is copied into ``/app/output`` first, as the compute
worker does, so a result zip sent to a code task is scored as it is. Once the run ends,
``metadata`` (its exit codes and elapsed seconds, ``protocols.run_metadata``) is added to what
it wrote, as the worker adds it: CodaLab scoring programs read ``elapsedTime`` there.
A task without an ingestion program takes the upload as its output, or, when it takes
submission programs and the upload's ``metadata`` names a ``command``, runs the upload as its
own program (``protocols.upload_program``: CodaLab's classic code submission). An upload naming a
``command`` for a task with an ingestion program (which the compute worker would start beside
it) is refused at prep: the ingestion program alone runs the participant's code here.

The exam's one case fails when the program fails; what it wrote is scored all the same
(``scored_after_failure``), and only when scoring then fails is the failure the entry's. Its
output tails are the stage's diagnostics, shown as the exam's disclosure allows.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Iterator
from pathlib import Path

from proctor import trees
from proctor.entries import Manifest
from proctor.errors import ConfigError
from proctor.protocols.base import CaseRun, DriverWithoutAnswers, Preparation, run_limits
from proctor.protocols.blame import UploadReads
from proctor.protocols.codabench_settings import IngestionProgram, IngestionProtocol
from proctor.protocols.plain_copy import copy_plain, same_trees
from proctor.protocols.run_metadata import METADATA, remove_run_metadata, write_run_metadata
from proctor.protocols.scripts import duration
from proctor.protocols.upload_program import (
    is_code,
    metadata_command,
    program_argv,
    run_upload,
    upload_check,
)
from proctor.sandbox.base import Mount, Outcome, RunSpec
from proctor.spec.ingestion import LAYOUT
from proctor.spec.program_blame import organizer_fault
from proctor.spec.protocols import ProtocolSettings

SUBMISSION = "submission"
"""The one case of each split: the upload, run once."""
README_NAMES = frozenset({"README.txt", "README.md", "README"})
NO_PROGRAM_S = 60.0
OWN_PROGRAM_FAILED = "your program (the command in your metadata) failed"
STAGE_MARGIN_S = 60.0
"""The stage clock outlasts the one run, so a run that times out is the case's failure."""


def _ingestion_settings(settings: ProtocolSettings) -> IngestionProtocol:
    if not isinstance(settings, IngestionProtocol):
        raise TypeError(f"the ingestion driver cannot run a {settings.kind!r} protocol")
    return settings


def has_inputs(folder: Path) -> bool:
    """True when ``folder`` holds anything but a README (an imported placeholder)."""
    return any(item.name not in README_NAMES for item in folder.iterdir())


class IngestionDriver(DriverWithoutAnswers):
    """Runs each task's ingestion program on the upload in the job's sandbox session."""

    kind = "ingestion"
    settings_model = IngestionProtocol
    summary = "Codabench code: a task's ingestion program, or the upload's own command, runs it"
    case_noun = "submission"
    shows_run_logs = True
    scored_after_failure = "your code failed under the ingestion program"

    @property
    def protocol(self) -> IngestionProtocol:
        """The challenge's ingestion settings."""
        return _ingestion_settings(self.context.settings)

    @property
    def program(self) -> IngestionProgram | None:
        """The job's task's ingestion program (None: the upload is the output)."""
        return self.protocol.program_of(self.context.task)

    @classmethod
    def support(cls, settings: ProtocolSettings, task: str) -> tuple[Path, ...]:
        """The task's ingestion program folder, copied where the slot may read it."""
        program = _ingestion_settings(settings).program_of(task)
        return (program.program,) if program is not None else ()

    @classmethod
    def list_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """One case per split: the upload, run once on the split's inputs."""
        return [SUBMISSION]

    @classmethod
    def quiz_cases(cls, settings: ProtocolSettings, folder: Path) -> list[str]:
        """The quiz runs only on public inputs that hold something (sample data)."""
        return [SUBMISSION] if has_inputs(folder) else []

    @classmethod
    def output_template(cls, settings: ProtocolSettings) -> str:
        """The case's output is the stage's outputs folder itself (``/app/input/res``)."""
        return "."

    @classmethod
    def manifest(cls, settings: ProtocolSettings) -> Manifest:
        """Nothing is required: the ingestion program says what it loads."""
        return Manifest(required=())

    def quiz_failure_goes_on(self, entry_root: Path) -> str | None:
        """An upload without ``metadata`` goes on to the exam even when the quiz failed.

        The compute worker copies such an upload (a result zip, or bare code) into the output
        and scores whatever the ingestion program leaves there; a run on sample data that
        fails must not refuse what Codabench scores. An upload with ``metadata`` is code and
        stops at its failed quiz.
        """
        if self.program is None or is_code(entry_root):
            return None
        return (
            "your upload has no metadata file, so it goes on to the exam as Codabench scores "
            "it: copied into the output before the ingestion program runs"
        )

    @property
    def failed_code_words(self) -> str:
        """Whose code failed: under the ingestion program, or the upload's own program."""
        if self.program is None:
            return OWN_PROGRAM_FAILED
        return self.scored_after_failure

    @property
    def output_bytes(self) -> int:
        """``/app/output`` at most: ``limits.output_bytes``, and room for the upload copied in."""
        return max(self.context.limits.output_bytes, self.protocol.upload_bytes)

    @property
    def case_s(self) -> float:
        """Seconds the ingestion program (or the upload's own) may run: Codabench's limit."""
        program = self.program
        if program is not None:
            return program.wall_s
        own = self.protocol.submission_program_of(self.context.task)
        return own.wall_s if own is not None else NO_PROGRAM_S

    @property
    def stage_s(self) -> float:
        """A stage is one run: its limit and a margin for starting and collecting."""
        return self.case_s + STAGE_MARGIN_S

    def prepare(self, home: Path, public_inputs: Path) -> Preparation:
        """Nothing runs; an upload too large, or naming a ``command`` it may not, is refused."""
        size, limit = trees.apparent_bytes(home), self.protocol.upload_bytes
        problem, what = None, "the upload check"
        command = None
        if size > limit:
            problem = f"the upload takes {size} bytes, over the {limit} it may hold"
        else:
            problem, command = upload_check(self.protocol, self.context.task, home)
        if problem is None and command is not None:
            what += f" (your program runs as: {shlex.join(program_argv(command))})"
        outcome = Outcome(exit_status=0 if problem is None else 1)
        return Preparation(what, 0.0, outcome, problem)

    def run_case(
        self, home: Path, inputs: Path, case: str, *, wall_s: float, store: Path
    ) -> CaseRun:
        """Run the ingestion program; store what ``/app/output`` holds in folder ``store``."""
        store.mkdir(parents=True, exist_ok=True)
        trees.empty_tree(store)
        program = self.program
        if program is None:
            return self._without_program(home, inputs, case, wall_s=wall_s, store=store)
        work = store.parent / f".{store.name}-ingestion"
        work.mkdir(exist_ok=True)
        session = self.context.session
        with contextlib.ExitStack() as stack:
            output = stack.enter_context(
                session.workspace(work / "output", size_bytes=self.output_bytes)
            )
            shared = stack.enter_context(
                session.workspace(work / "shared", size_bytes=self.protocol.shared_bytes)
            )
            own = stack.enter_context(self._program_copy(program, work / "program"))
            seeded = self._seed(output)
            session.give(output)
            reads = UploadReads(home)
            reads.start()
            outcome = self._run(program, home, inputs, (output, shared, own), wall_s)
            fault = _organizer_fault(outcome, program, reads)
            collected = _collected(output, store, self.output_bytes, ingestion=outcome)
        trees.remove_tree_quietly(work)
        problem = self._problem(outcome, wall_s) or seeded or collected
        if problem is None:
            problem = self.validate_output(store)
        return CaseRun(case, outcome, store, problem or "", organizer_fault=fault)

    def _without_program(
        self, home: Path, inputs: Path, case: str, *, wall_s: float, store: Path
    ) -> CaseRun:
        """A task without an ingestion program: the upload's own program runs, or it is copied.

        An upload naming a ``command`` got here only when the task takes submission programs
        (prep refused it otherwise).
        """
        command = metadata_command(self.context.entry or home)
        if command is None:
            problem = self._seed(store)
            return CaseRun(case, Outcome(exit_status=0), store, problem or "")
        work = store.parent / f".{store.name}-program"
        work.mkdir(exist_ok=True)
        session = self.context.session
        with contextlib.ExitStack() as stack:
            output = stack.enter_context(
                session.workspace(work / "output", size_bytes=self.output_bytes)
            )
            shared = stack.enter_context(
                session.workspace(work / "shared", size_bytes=self.protocol.shared_bytes)
            )
            session.give(output)
            argv = program_argv(command)
            outcome = run_upload(self.context, argv, (home, inputs, output, shared), wall_s)
            collected = _collected(output, store, self.output_bytes, program=outcome)
        trees.remove_tree_quietly(work)
        problem = self._problem(outcome, wall_s) or collected
        if problem is None:
            problem = self.validate_output(store)
        return CaseRun(case, outcome, store, problem or "")

    def _seed(self, output: Path) -> str | None:
        """Copy the upload into ``output`` unless it is code (holds ``metadata``)."""
        entry = self.context.entry
        if entry is None or is_code(entry):
            return None
        return copy_plain(entry, output, max_bytes=self.output_bytes)

    @contextlib.contextmanager
    def _program_copy(self, program: IngestionProgram, place: Path) -> Iterator[Path]:
        """A copy of the ingestion program's folder this run may change (its working folder).

        Capped at its size plus ``scratch_bytes``; gone when the context ends.
        """
        support = self.context.support
        if support is None:
            raise ValueError("the ingestion program was not staged for the run")
        source = support / program.program.name
        size = trees.copy_bytes(source) + self.protocol.scratch_bytes
        with self.context.session.workspace(place, size_bytes=size) as copy:
            try:
                trees.copy_tree(source, copy, top_meta=False)
            except OSError as err:
                raise ConfigError(
                    f"the ingestion program's folder {program.program.name!r} could not be "
                    f"copied for the run ({os.strerror(err.errno or 0)}): keep it small, plain "
                    "files and folders",
                    location="protocol.programs",
                ) from None
            self.context.session.give(copy)
            yield copy

    def _run(
        self,
        program: IngestionProgram,
        home: Path,
        inputs: Path,
        writable: tuple[Path, Path, Path],
        wall_s: float,
    ) -> Outcome:
        """One run of the ingestion program; ``writable``: output, shared and program copy."""
        output, shared, own_program = writable
        own = {"PYTHONUNBUFFERED": "1", "LANG": "C.UTF-8"}
        return self.context.session.run(
            RunSpec(
                list(program.command),
                mounts=[
                    Mount(own_program, LAYOUT.program, writable=True),
                    Mount(inputs, LAYOUT.input_data),
                    Mount(home, LAYOUT.code, writable=True),
                    Mount(output, LAYOUT.output, writable=True),
                    Mount(shared, LAYOUT.shared, writable=True),
                    *self.context.extra_mounts,
                ],
                limits=run_limits(self.context.limits, self.context.parallel_runs, wall_s),
                env={**self.context.variables, **own},
                cwd=LAYOUT.program,
            )
        )

    @staticmethod
    def _problem(outcome: Outcome, wall_s: float) -> str | None:
        if outcome.timed_out:
            return f"timed out after {duration(wall_s)} (the task's time limit)"
        if outcome.succeeded:
            return None
        return outcome.describe()

    def same_output(self, first: Path, second: Path) -> bool:
        """True when two runs left the same files and bytes (but the ``metadata`` file added)."""
        return same_trees(first, second, skip=(METADATA,))


def _organizer_fault(outcome: Outcome, program: IngestionProgram, reads: UploadReads) -> str:
    """Why the ingestion program's failed run is the organizer's fault, or "" (the entry's).

    Only a run that exited with an error, with a traceback all in the program's folder, that
    read no file of the upload (``protocols.blame``).
    """
    if outcome.exit_status in {None, 0} or outcome.timed_out or outcome.memory_exceeded:
        return ""
    reason = organizer_fault(
        outcome.stderr, organizer=LAYOUT.program, participants=(LAYOUT.code,),
        program_folder=program.program, command=program.command[0],
    )  # fmt: skip
    if reason is None or reads.read():
        return ""
    return f"the ingestion program failed: {reason}"


def _collected(output: Path, store: Path, max_bytes: int, **run: Outcome) -> str | None:
    """Copy what the run left in ``output`` into ``store``, with the platform's ``metadata``.

    ``max_bytes``: the output's cap; files whose apparent sizes add up past it are not copied
    (the problem names the file and the cap). ``run``: ``program=`` or ``ingestion=``, its
    outcome. Returns the problem, or None.
    """
    forged = remove_run_metadata(output)
    problem = copy_plain(output, store, max_bytes=max_bytes)
    write_run_metadata(store, **run)
    return problem or forged
