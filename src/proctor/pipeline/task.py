"""``evaluate_task``: the one job function, an entry evaluated on one task of a phase.

A local pool and a Celery worker both call it; tasks of a submission are independent jobs (a
failed task never stops another). Each job claims its own sandbox session (one slot uid), so
cancelling it never touches another job's processes::

    manifest check → [session: home workspace → prep → quiz → (DRYRUN stop) → exam → rerun]
                   → score (host side, after the home is released)
"""

from __future__ import annotations

import contextlib
import dataclasses
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from proctor.entries import check_manifest
from proctor.errors import (
    EntryRequirementsError,
    ManifestError,
    PlatformError,
    SandboxUnavailableError,
)
from proctor.pipeline import stages
from proctor.pipeline.cancel import CancelToken
from proctor.pipeline.caselog import CaseLog
from proctor.pipeline.context import TaskContext
from proctor.pipeline.disclosure import StageResult, prep_notes
from proctor.pipeline.entry_layer import EntryLayer, entry_layer
from proctor.pipeline.files import FilesJob, evaluate_files
from proctor.pipeline.inputs import stage_inputs, stage_support
from proctor.pipeline.program_runs import SandboxProgramRunner, SessionProgramRunner
from proctor.pipeline.progress import ProgressListener, SilentProgress
from proctor.pipeline.report import HOST_ENVIRONMENT, EnvironmentInfo, StageReport, TaskReport
from proctor.pipeline.runner import CaseLogHook, ProgressHook, StageRunner, disclosure_level
from proctor.pipeline.score import ShownScores, score
from proctor.protocols.base import HIDDEN, PUBLIC, Driver, DriverContext, FilesContext, FilesDriver
from proctor.protocols.registry import driver_for
from proctor.sandbox.base import Sandbox
from proctor.sandbox.rootfs import RootFilesystem
from proctor.scoring.registry import scorer_for
from proctor.spec.environment import ParticipantWheels
from proctor.spec.model import Challenge, Phase, Task
from proctor.store.runfolder import RunFolder
from proctor.types import MAIN_STAGES, Disclosure, Failure, RunStatus, Stage, StageStatus

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


@dataclass(frozen=True, slots=True)
class TaskJob:
    """One job: the unpacked entry of a submission, evaluated on ``task`` of ``phase``.

    ``jobs`` cases run at once; ``dry_run`` stops after the quiz; ``name_task`` names the task
    in stage labels (a phase with several tasks); ``made_executable`` and ``ignored`` (the
    OS/VCS litter the unpacker left out) are named in the prep message.
    """

    challenge: Challenge
    phase: Phase
    task: str
    entry_root: Path
    folder: RunFolder
    jobs: int = 1
    dry_run: bool = False
    name_task: bool = False
    cancel: CancelToken = field(default_factory=CancelToken)
    environment: JobEnvironment | None = None
    made_executable: tuple[str, ...] = ()
    keep_home: bool = False
    scorer_environment: JobEnvironment | None = None
    ignored: tuple[str, ...] = ()


def scorer_environment_key(task: str) -> str:
    """The key of ``task``'s scoring-program environment in a job's environment mapping.

    Environments are handed to jobs as one mapping (task name → environment); a task whose
    scorer is a program also finds the program's there under this key (task names never hold
    a ``:``).
    """
    return f"{task}:scorer"


def program_runner(job: TaskJob, sandbox: Sandbox) -> SandboxProgramRunner:
    """Runs ``job``'s scoring program in a session of its own, in the scorer's environment."""
    environment = job.scorer_environment
    return SandboxProgramRunner(
        sandbox,
        job.folder.scratch,
        root=environment.root if environment is not None else None,
        variables=environment.variables if environment is not None else None,
        cancel=job.cancel,
    )


@dataclass(frozen=True, slots=True)
class JobEnvironment:
    """The built environment a job runs in: its root filesystem, variables and identity."""

    root: RootFilesystem
    info: EnvironmentInfo
    variables: Mapping[str, str] = field(default_factory=dict)
    suite: str | None = None
    wheels: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    participant_wheels: ParticipantWheels | None = None


def _staged(task: Task, folder: RunFolder) -> Task:
    """The task with its inputs staged under the run folder (references untouched)."""
    base = folder.inputs(task.name)
    public = stage_inputs(task.public_inputs, base / "public")
    hidden = stage_inputs(task.hidden_inputs, base / "hidden") if task.hidden_inputs else None
    return task.model_copy(update={"public_inputs": public, "hidden_inputs": hidden})


def _failed(stage: Stage, message: str, failure: Failure) -> StageResult:
    return StageResult(stage, StageStatus.FAILED, message, message, failure=failure)


def stage_runner(job: TaskJob, progress: ProgressListener | None) -> StageRunner:
    """The runner of ``job``'s stages, with the progress and organizer case-log hooks."""
    return StageRunner(
        job.task,
        shown_task=job.task if job.name_task else None,
        policy=job.challenge.disclosure_for(job.phase),
        hooks=[
            ProgressHook(progress or SilentProgress()),
            CaseLogHook(CaseLog(job.folder.case_log)),
        ],
    )


def refused(job: TaskJob, message: str, progress: ProgressListener | None = None) -> TaskReport:
    """The report of a job whose upload was refused before anything ran: prep failed."""
    runner = stage_runner(job, progress)
    runner.finish(_failed(Stage.PREP, message, Failure.ENTRY))
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
        notes = prep_notes(ignored=job.ignored)
        runner.finish(_failed(Stage.PREP, f"{err}{notes}", Failure.ENTRY))
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
        runner.finish(_failed(stage, message, Failure.PLATFORM))
        return task_report(job, runner)


def _evaluate(job: TaskJob, sandbox: Sandbox, runner: StageRunner) -> TaskReport:
    challenge = job.challenge
    driver_class = driver_for(challenge.protocol.kind)
    if issubclass(driver_class, FilesDriver):
        return _evaluate_files(job, driver_class, runner, sandbox)
    if not issubclass(driver_class, Driver):
        raise TypeError(f"protocol {driver_class.kind!r} is neither a Driver nor a FilesDriver")
    task = _staged(challenge.task(job.task), job.folder)
    job.folder.prepare_homes()
    home = job.folder.home(task.name)
    environment = job.environment
    root = environment.root if environment is not None else None
    try:
        layer = _entry_layer(job)
    except EntryRequirementsError as err:
        runner.finish(_failed(Stage.PREP, str(err), Failure.ENTRY))
        return task_report(job, runner)
    with sandbox.session(root) as session, job.cancel.listening(session.cancel):
        runner.environment = _environment_info(environment, private=session.private_root)
        checks = SessionProgramRunner(
            session, job.folder.scratch, environment.variables if environment is not None else None
        )
        scorer = scorer_for(task.scorer, program_runner(job, sandbox), checks)
        context = DriverContext(
            challenge.protocol,
            challenge.limits,
            session,
            job.jobs,
            scorer.check_output,
            {**(environment.variables if environment is not None else {}), **layer.variables},
            (layer.mount,) if layer.mount is not None else (),
            stage_support(driver_class.support_files, job.folder.support(task.name)),
        )
        ctx = TaskContext(
            challenge=challenge,
            phase=job.phase,
            task=task,
            driver=driver_class(context),
            scorer=scorer,
            entry_root=job.entry_root,
            home=home,
            folder=job.folder,
            jobs=job.jobs,
            made_executable=job.made_executable,
            ignored=job.ignored,
        )
        home_space = session.workspace(home, size_bytes=challenge.limits.home_bytes)
        with home_space, contextlib.closing(ctx.driver):
            examined = _run_in_home(ctx, job, runner)
            if job.keep_home:  # --keep: the home as the entry left it, for the organizer
                kept_home = job.folder.root / "homes-kept" / task.name
                stages.snapshot_home(home, kept_home, max_bytes=challenge.limits.home_bytes)
    if examined is None:
        return task_report(job, runner)
    job.cancel.check()
    shown = score(ctx, runner, examined.exam)
    return task_report(job, runner, examined, shown)


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
    )
    shown = evaluate_files(files_job, runner)
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


@dataclass(frozen=True, slots=True)
class _Examined:
    """What the stages in the home leave for scoring: the exam and the determinism verdict."""

    exam: StageResult
    determinism: dict[str, float] | None = None


def _run_in_home(ctx: TaskContext, job: TaskJob, runner: StageRunner) -> _Examined | None:
    """Run prep → quiz → exam → rerun in the entry's home; None when no scoring follows."""
    try:
        stages.reset_home(ctx.entry_root, ctx.home)
    except OSError:
        if not stages.home_is_full(ctx.home):
            raise
        size = ctx.challenge.limits.home_bytes
        message = f"the entry does not fit in its {size}-byte home: make it smaller"
        runner.finish(_failed(Stage.PREP, message, Failure.ENTRY))
        return None
    ctx.driver.context.session.give(ctx.home)
    job.cancel.check()
    if stages.prep(ctx, runner).failed:
        return None
    after_setup = job.folder.root / "home-after-setup" / ctx.task.name
    kept = False
    if job.phase.determinism_cases and not job.dry_run:
        home_bytes = ctx.challenge.limits.home_bytes
        kept = stages.snapshot_home(ctx.home, after_setup, max_bytes=home_bytes)
    job.cancel.check()
    if stages.quiz(ctx, runner).failed:
        return None
    if job.dry_run:
        return None
    inputs = ctx.task.hidden_inputs
    if inputs is None:
        note = "this task has no hidden inputs"
        runner.finish(StageResult(Stage.EXAM, StageStatus.SKIPPED, note, note))
        return None
    job.cancel.check()
    exam = stages.exam(ctx, runner, inputs)
    job.cancel.check()
    if exam.failed:
        return None
    if not job.phase.determinism_cases:
        return _Examined(exam)
    return _Examined(exam, _rerun_from_setup(ctx, job, runner, after_setup if kept else None))


def _rerun_from_setup(
    ctx: TaskContext, job: TaskJob, runner: StageRunner, after_setup: Path | None
) -> dict[str, float] | None:
    """The determinism rerun, from the home as it was after setup (no state the exam left)."""
    inputs = ctx.task.hidden_inputs
    if after_setup is None or inputs is None:
        note = "the home after setup was larger than the home may hold: no rerun"
        runner.finish(StageResult(Stage.RERUN, StageStatus.SKIPPED, note, note))
        return None
    stages.restore_home(after_setup, ctx.home)
    ctx.driver.context.session.give(ctx.home)
    return stages.rerun(ctx, runner, inputs, job.phase.determinism_cases)


def task_report(job: TaskJob, runner: StageRunner, examined: _Examined | None = None,
            shown: ShownScores | None = None) -> TaskReport:  # fmt: skip
    """The task's report: its disclosed stages, then the main stages it never reached."""
    reports = runner.reports
    failed = next((r for r in runner.results if r.failed), None)
    seen = {r.stage for r in reports}
    note = "DRYRUN present" if job.dry_run and failed is None else "not reached"
    skipped = [
        StageReport(stage, StageStatus.SKIPPED, note, task=runner.shown_task)
        for stage in MAIN_STAGES
        if stage not in seen
    ]
    if failed is not None:
        status = RunStatus.FAILED
    elif job.dry_run:
        status = RunStatus.DRY_RUN
    else:
        status = RunStatus.SCORED
    return TaskReport(
        task=job.task,
        status=status,
        stages=(*reports, *skipped),
        failure=failed.failure if failed is not None else None,
        failed_stage=failed.stage if failed is not None else None,
        scores=shown.scores if shown is not None else {},
        per_record=shown.per_record if shown is not None else None,
        efficiency=shown.efficiency if shown is not None else None,
        dashboard=shown.dashboard if shown is not None else None,
        determinism=_shown_determinism(job, examined),
        environment=runner.environment or _environment_info(job.environment, private=False),
        count_metrics=frozenset(
            metric.name
            for metric in job.challenge.task(job.task).scorer_declaration.metrics
            if not metric.rankable
        ),
    )


def _environment_info(environment: JobEnvironment | None, *, private: bool) -> EnvironmentInfo:
    if environment is None:
        return HOST_ENVIRONMENT
    return dataclasses.replace(environment.info, shared_page_cache=not private)


def _shown_determinism(job: TaskJob, examined: _Examined | None) -> dict[str, float] | None:
    """The rerun verdict, unless the exam shows nothing (``identical`` could carry a bit)."""
    if examined is None or examined.determinism is None:
        return None
    policy = job.challenge.disclosure_for(job.phase)
    if disclosure_level(policy, Stage.RERUN) is Disclosure.NONE:
        return None
    return examined.determinism
