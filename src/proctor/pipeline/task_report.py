"""A job's report: its disclosed stages, the main stages it never reached, what it scored."""

from __future__ import annotations

from proctor.pipeline.home_stages import Examined
from proctor.pipeline.job import TaskJob, environment_info
from proctor.pipeline.report import StageReport, TaskReport
from proctor.pipeline.runner import StageRunner, disclosure_level
from proctor.pipeline.score import ShownScores
from proctor.types import MAIN_STAGES, Disclosure, RunStatus, Stage, StageStatus


def task_report(job: TaskJob, runner: StageRunner, examined: Examined | None = None,
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
        full=shown.full if shown is not None else None,
        determinism=_shown_determinism(job, examined),
        environment=runner.environment or environment_info(job.environment, private=False),
        count_metrics=job.challenge.task(job.task).scorer_declaration.count_metrics,
    )


def _shown_determinism(job: TaskJob, examined: Examined | None) -> dict[str, float] | None:
    """The rerun verdict, unless the exam shows nothing (``identical`` could carry a bit)."""
    if examined is None or examined.determinism is None:
        return None
    policy = job.challenge.disclosure_for(job.phase)
    if disclosure_level(policy, Stage.RERUN) is Disclosure.NONE:
        return None
    return examined.determinism
