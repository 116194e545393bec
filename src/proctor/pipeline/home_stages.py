"""The stages a code protocol runs in the entry's home: prep → quiz → (DRYRUN) → exam → rerun.

Called by ``pipeline.task`` inside the job's sandbox session with the home mounted; what they
leave for scoring is :class:`Examined` (the exam's result and the determinism verdict), or
None when no scoring follows (a stage failed, a dry run, no hidden inputs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from proctor.pipeline import stages
from proctor.pipeline.context import TaskContext
from proctor.pipeline.disclosure import StageResult
from proctor.pipeline.job import TaskJob
from proctor.pipeline.runner import StageRunner
from proctor.types import Failure, Stage, StageStatus


@dataclass(frozen=True, slots=True)
class Examined:
    """What the stages in the home leave for scoring: the exam and the determinism verdict."""

    exam: StageResult
    determinism: dict[str, float] | None = None


def failed(stage: Stage, message: str, failure: Failure) -> StageResult:
    """A stage that failed before (or instead of) running, with ``message`` at every level."""
    return StageResult(stage, StageStatus.FAILED, message, message, failure=failure)


def run_in_home(ctx: TaskContext, job: TaskJob, runner: StageRunner) -> Examined | None:
    """Run prep → quiz → exam → rerun in the entry's home; None when no scoring follows."""
    if not _fill_home(ctx, runner):
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
    if stages.quiz(ctx, runner).failed or job.dry_run:
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
        return Examined(exam)
    return Examined(exam, _rerun_from_setup(ctx, job, runner, after_setup if kept else None))


def _fill_home(ctx: TaskContext, runner: StageRunner) -> bool:
    """Copy the entry into its home; False (prep failed) when it does not fit."""
    try:
        stages.reset_home(ctx.entry_root, ctx.home)
    except OSError:
        if not stages.home_is_full(ctx.home):
            raise
        size = ctx.challenge.limits.home_bytes
        message = f"the entry does not fit in its {size}-byte home: make it smaller"
        runner.finish(failed(Stage.PREP, message, Failure.ENTRY))
        return False
    return True


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
