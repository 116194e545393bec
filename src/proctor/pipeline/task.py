"""``evaluate_task``: the one job function, an entry evaluated on one task of a phase.

A local pool and a Celery worker both call it; tasks of a submission are independent jobs (a
failed task never stops another). Each job claims its own sandbox session (one slot uid), so
cancelling it never touches another job's processes::

    manifest check → [session: home workspace → prep → quiz → (DRYRUN stop) → exam → rerun]
                   → score (host side, after the home is released)

The job's description is ``pipeline.job``, the stages in the home ``pipeline.home_stages``,
the report ``pipeline.task_report``; a protocol where no code runs goes to ``pipeline.files``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import traceback

from proctor.entries import check_manifest
from proctor.errors import (
    EntryImageError,
    EntryRequirementsError,
    ImageBuildError,
    ManifestError,
    PlatformError,
    SandboxUnavailableError,
)
from proctor.pipeline import stages
from proctor.pipeline.context import TaskContext
from proctor.pipeline.disclosure import StageResult, prep_notes
from proctor.pipeline.entry_image import with_entry_image
from proctor.pipeline.entry_layer import NO_LAYER, EntryLayer, entry_layer
from proctor.pipeline.files import FilesJob, evaluate_files
from proctor.pipeline.home_stages import failed, run_in_home
from proctor.pipeline.inputs import stage_inputs, stage_support
from proctor.pipeline.job import (
    JobEnvironment,
    TaskJob,
    environment_info,
    program_runner,
    scorer_environment_key,
    stage_runner,
)
from proctor.pipeline.program_runs import SessionProgramRunner
from proctor.pipeline.progress import ProgressListener
from proctor.pipeline.report import TaskReport
from proctor.pipeline.runner import StageRunner
from proctor.pipeline.score import score
from proctor.pipeline.task_report import task_report
from proctor.protocols.base import HIDDEN, PUBLIC, Driver, DriverContext, FilesContext, FilesDriver
from proctor.protocols.registry import driver_for
from proctor.sandbox.base import Sandbox, SandboxSession
from proctor.scoring.base import Scorer
from proctor.scoring.registry import scorer_for
from proctor.spec.model import Challenge, Task
from proctor.store.runfolder import RunFolder
from proctor.types import Failure, Stage, StageStatus

__all__ = [
    "JobEnvironment",
    "TaskJob",
    "evaluate_task",
    "platform_faults",
    "refused",
    "scorer_environment_key",
    "task_report",
]

PLATFORM_ERROR_CODE = "E-PLATFORM"
PLATFORM_ERROR_LOG = "platform-error.txt"
FAULT_MARK = "== "
"""Starts the line of ``platform-error.txt`` giving one fault's reason; its traceback follows."""


def platform_faults(folder: RunFolder) -> tuple[str, ...]:
    """The reasons of the platform faults of a run (``task T (stage): reason``), for organizers.

    Read from the run folder's ``platform-error.txt``; a participant is never shown them.
    """
    log = folder.root / PLATFORM_ERROR_LOG
    if not log.is_file():
        return ()
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return tuple(line.removeprefix(FAULT_MARK) for line in lines if line.startswith(FAULT_MARK))


def _staged(task: Task, folder: RunFolder) -> Task:
    """The task with its inputs staged under the run folder (references untouched)."""
    base = folder.inputs(task.name)
    public = stage_inputs(task.public_inputs, base / "public")
    hidden = stage_inputs(task.hidden_inputs, base / "hidden") if task.hidden_inputs else None
    return task.model_copy(update={"public_inputs": public, "hidden_inputs": hidden})


def build_failed(err: ImageBuildError) -> StageResult:
    """Prep failed in the build of the entry's ``Dockerfile``: the reason, the log's tail."""
    headline = f"the entry's Dockerfile could not be built: {err}"
    logs = (("build log", err.log),) if err.log else ()
    return StageResult(Stage.PREP, StageStatus.FAILED, headline,
                       "the entry's Dockerfile could not be built", logs=logs,
                       failure=Failure.ENTRY)  # fmt: skip


def refused(job: TaskJob, message: str, progress: ProgressListener | None = None) -> TaskReport:
    """The report of a job whose upload was refused before anything ran: prep failed."""
    runner = stage_runner(job, progress)
    runner.finish(failed(Stage.PREP, message, Failure.ENTRY))
    return task_report(job, runner)


def evaluate_task(
    job: TaskJob, sandbox: Sandbox, progress: ProgressListener | None = None
) -> TaskReport:
    """Evaluate ``job`` in ``sandbox``; an entry's failure is a report, never an exception.

    Raises ``JobCancelledError`` when ``job.cancel`` fires, ``SandboxUnavailableError`` when the
    host cannot sandbox anything; another platform fault fails the task with ``platform``.
    """
    challenge = job.challenge
    runner = stage_runner(job, progress)
    driver_class = driver_for(challenge.protocol.kind)
    try:
        check_manifest(job.entry_root, driver_class.manifest(challenge.protocol))
    except ManifestError as err:
        notes = prep_notes(ignored=job.ignored, unwrapped=job.unwrapped)
        runner.finish(failed(Stage.PREP, f"{err}{notes}", Failure.ENTRY))
        return task_report(job, runner)
    try:
        return _evaluate(job, sandbox, runner)
    except SandboxUnavailableError:
        raise
    except PlatformError as err:
        stage = runner.current or Stage.PREP
        with (job.folder.root / PLATFORM_ERROR_LOG).open("a", encoding="utf-8") as log:
            log.write(f"{FAULT_MARK}task {job.task} ({stage}): {err}\n{traceback.format_exc()}\n")
        message = (
            f"the platform failed during {stage} ({PLATFORM_ERROR_CODE}); your entry is not at "
            "fault and the organizers have the details"
        )
        runner.finish(failed(stage, message, Failure.PLATFORM))
        return task_report(job, runner)


def _evaluate(job: TaskJob, sandbox: Sandbox, runner: StageRunner) -> TaskReport:
    driver_class = driver_for(job.challenge.protocol.kind)
    if issubclass(driver_class, FilesDriver):
        return _evaluate_files(job, driver_class, runner, sandbox)
    if not issubclass(driver_class, Driver):
        raise TypeError(f"protocol {driver_class.kind!r} is neither a Driver nor a FilesDriver")
    task = _staged(job.challenge.task(job.task), job.folder)
    job.folder.prepare_homes()
    runner.begin(Stage.PREP)  # shown running while the entry's image builds (its steps told)
    try:
        used = with_entry_image(job, sandbox, functools.partial(runner.step, Stage.PREP))
        job = used.job
        layer = NO_LAYER if used.image is not None else _entry_layer(job)
    except ImageBuildError as err:
        runner.finish(build_failed(err))
        return task_report(job, runner)
    except (EntryRequirementsError, EntryImageError) as err:
        runner.finish(failed(Stage.PREP, str(err), Failure.ENTRY))
        return task_report(job, runner)
    environment = job.environment
    root = environment.root if environment is not None else None
    with sandbox.session(root) as session, job.cancel.listening(session.cancel):
        runner.environment = environment_info(environment, private=session.private_root)
        ctx = _context(job, task, session, sandbox, (driver_class, layer))
        ctx = dataclasses.replace(ctx, prep_note=used.note, prep_logs=used.logs)
        home_space = session.workspace(ctx.home, size_bytes=job.challenge.limits.home_bytes)
        with home_space, contextlib.closing(ctx.driver):
            examined = run_in_home(ctx, job, runner)
            if job.keep_home:  # --keep: the home as the entry left it, for the organizer
                kept_home = job.folder.root / "homes-kept" / task.name
                limit = job.challenge.limits.home_bytes
                stages.snapshot_home(ctx.home, kept_home, max_bytes=limit)
    if examined is None:
        return task_report(job, runner)
    job.cancel.check()
    shown = score(ctx, runner, examined.exam)
    job.cancel.check()  # a program killed by the cancel is no scorer's failure
    return task_report(job, runner, examined, shown)


def _context(
    job: TaskJob,
    task: Task,
    session: SandboxSession,
    sandbox: Sandbox,
    driving: tuple[type[Driver], EntryLayer],
) -> TaskContext:
    """The task's context in ``session``: its driver, its scorer and the run folder."""
    challenge, environment = job.challenge, job.environment
    driver_class, layer = driving
    variables = dict(environment.variables) if environment is not None else {}
    scorer = _scorer(job, task, session, sandbox, variables)
    support = driver_class.support(challenge.protocol, task.name)
    context = DriverContext(
        challenge.protocol,
        challenge.limits,
        session,
        job.jobs,
        scorer.check_output,
        {**variables, **layer.variables},
        (layer.mount,) if layer.mount is not None else (),
        stage_support(support, job.folder.support(task.name)),
        task=task.name,
        entry=job.entry_root,
    )
    return TaskContext(
        challenge=challenge,
        phase=job.phase,
        task=task,
        driver=driver_class(context),
        scorer=scorer,
        entry_root=job.entry_root,
        home=job.folder.home(task.name),
        folder=job.folder,
        jobs=job.jobs,
        made_executable=job.made_executable,
        ignored=job.ignored,
        unwrapped=job.unwrapped,
    )


def _scorer(
    job: TaskJob, task: Task, session: SandboxSession, sandbox: Sandbox, variables: dict[str, str]
) -> Scorer:
    """The task's scorer: its program in a session of its own, its check in the job's."""
    checks = SessionProgramRunner(session, job.folder.scratch, variables)
    return scorer_for(task.scorer, program_runner(job, sandbox), checks)


def _evaluate_files(
    job: TaskJob, driver_class: type[FilesDriver], runner: StageRunner, sandbox: Sandbox
) -> TaskReport:
    """A protocol where no code runs: no home, the upload is read as is.

    Only a scoring program (and its output check) runs, each in a sandbox session of its own.
    """
    challenge = job.challenge
    task = challenge.task(job.task)
    scorer = scorer_for(task.scorer, program_runner(job, sandbox))
    context = FilesContext(
        challenge.protocol, challenge.limits, scorer.check_output, _split_cases(challenge)
    )
    files_job = FilesJob(
        challenge,
        task,
        driver_class(context),
        scorer,
        job.entry_root,
        job.folder,
        job.dry_run,
        job.ignored,
        job.unwrapped,
    )
    shown = evaluate_files(files_job, runner)
    job.cancel.check()  # a program killed by the cancel is no scorer's failure
    return task_report(job, runner, None, shown)


def _split_cases(challenge: Challenge) -> dict[str, tuple[str, ...]]:
    """Every task's cases by split: the whole layout an upload of predictions must have."""
    driver = driver_for(challenge.protocol.kind)
    cases: dict[str, list[str]] = {PUBLIC: [], HIDDEN: []}
    for task in challenge.tasks:
        cases[PUBLIC] += driver.list_cases(challenge.protocol, task.public_inputs)
        if task.hidden_inputs is not None:
            cases[HIDDEN] += driver.list_cases(challenge.protocol, task.hidden_inputs)
    return {split: tuple(dict.fromkeys(names)) for split, names in cases.items()}


def _entry_layer(job: TaskJob) -> EntryLayer:
    """The entry's own wheels (``requirements.txt``), where its environment allows them."""
    environment = job.environment
    return entry_layer(
        job.entry_root,
        job.folder.root / "wheels" / job.task,
        allowed=environment.participant_wheels if environment is not None else None,
        suite=environment.suite if environment is not None else None,
        pinned=dict(environment.wheels) if environment is not None else {},
    )
