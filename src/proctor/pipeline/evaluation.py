"""Evaluate one entry in one phase: prep → quiz → exam → score for each task of the phase.

The first failing stage stops the evaluation; a ``DRYRUN`` file in the entry stops it after
quiz. Each task gets a fresh, size-capped home holding a copy of the entry.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from proctor.entries import Manifest, check_manifest, entry_flags
from proctor.errors import ManifestError
from proctor.pipeline import stages
from proctor.pipeline.context import TaskContext
from proctor.pipeline.progress import ProgressListener, SilentProgress
from proctor.pipeline.report import EvaluationReport, RunStatus, StageReport, StageStatus
from proctor.pipeline.scoring import get_scorer
from proctor.protocols.records import RecordsDriver, list_records
from proctor.sandbox.base import Sandbox
from proctor.spec.model import Challenge, Phase, RecordsProtocol

GiveToSlot = Callable[[Path, int], None]


@dataclass(frozen=True, slots=True)
class EvaluationSetup:
    """Where and how to evaluate: the run folder, the sandbox, its slot, parallel cases."""

    run_dir: Path
    sandbox: Sandbox
    give_to_slot: GiveToSlot
    slot: int = 0
    jobs: int = 1
    progress: ProgressListener = SilentProgress()


@dataclass
class _Outcome:
    stages: list[StageReport]
    scores: dict[str, dict[str, float]]
    per_record: dict[str, dict[str, dict[str, float]]]


def _prep_check(challenge: Challenge, entry_root: Path) -> StageReport | None:
    protocol = challenge.protocol
    assert isinstance(protocol, RecordsProtocol)
    manifest = Manifest(
        required=protocol.required_files, executable=protocol.executable_files
    )
    try:
        check_manifest(entry_root, manifest)
    except ManifestError as err:
        return StageReport("prep", StageStatus.FAILED, str(err))
    return None


def _score(ctx: TaskContext, exam: StageReport) -> tuple[StageReport, dict[str, float], dict[str, dict[str, float]]]:
    name = ctx.stage_name("score")
    ctx.progress.stage_started(name, 0)
    started = time.monotonic()
    task = ctx.task
    assert task.hidden_references is not None and task.hidden_inputs is not None
    scorer = get_scorer(task.scorer)
    records = list_records(task.hidden_inputs)
    result = scorer(ctx.outputs, task.hidden_references, records, ctx.driver.protocol.output)
    summary = dict(result.summary)
    cases = max(exam.cases.total, 1)
    summary["cpu_s_per_case"] = round(exam.usage.cpu_s / cases, 6)
    summary["wall_s_per_case"] = round(exam.usage.wall_s / cases, 6)
    summary["peak_memory_bytes"] = float(exam.usage.peak_memory_bytes)
    message = f"scored {len(records)} records"
    if result.zero_filled:
        message += f"; {len(result.zero_filled)} without usable output scored as zeros"
    report = StageReport(name, StageStatus.PASSED, message, time.monotonic() - started)
    ctx.progress.stage_finished(report)
    per_record = result.per_record if ctx.challenge.disclosure.score == "full" else {}
    return report, summary, per_record


def _evaluate_task(
    ctx_factory: Callable[[Path], TaskContext],
    workspace: AbstractContextManager[Path],
    setup: EvaluationSetup,
    entry_root: Path,
    dry_run: bool,
    out: _Outcome,
) -> bool:
    """Run the stages of one task; True when the evaluation may go on."""
    with workspace as home:
        stages.reset_home(entry_root, home)
        setup.give_to_slot(home, setup.slot)
        ctx = ctx_factory(home)
        for stage in (stages.prep, stages.quiz):
            report = stage(ctx)
            out.stages.append(report)
            if report.status is StageStatus.FAILED:
                return False
        if dry_run:
            return True
        exam = stages.exam(ctx)
        out.stages.append(exam)
        if exam.status is not StageStatus.PASSED:
            return exam.status is StageStatus.SKIPPED
    report, summary, per_record = _score(ctx, exam)
    out.stages.append(report)
    out.scores[ctx.task.name] = summary
    if per_record:
        out.per_record[ctx.task.name] = per_record
    return True


def evaluate(
    challenge: Challenge, phase: Phase, entry_root: Path, setup: EvaluationSetup
) -> EvaluationReport:
    """Evaluate the unpacked entry at ``entry_root`` in ``phase`` of ``challenge``."""
    protocol = challenge.protocol
    if not isinstance(protocol, RecordsProtocol):
        raise NotImplementedError(f"the {protocol.kind!r} protocol is not available yet")
    out = _Outcome([], {}, {})
    rejected = _prep_check(challenge, entry_root)
    if rejected is not None:
        setup.progress.stage_finished(rejected)
        return _finish(challenge, phase, [rejected], {}, {}, dry_run=False)
    dry_run = entry_flags(entry_root).dry_run
    driver = RecordsDriver(protocol, challenge.limits, setup.sandbox, slot=setup.slot)
    several = len(phase.tasks) > 1
    for task_name in phase.tasks:
        task = challenge.task(task_name)

        def make_ctx(home: Path, task_name: str = task_name) -> TaskContext:
            return TaskContext(
                challenge=challenge,
                task=challenge.task(task_name),
                entry_root=entry_root,
                home=home,
                outputs=setup.run_dir / "outputs" / task_name,
                driver=driver,
                jobs=setup.jobs,
                progress=setup.progress,
                stage_prefix=f"{task_name}:" if several else "",
            )

        workspace = setup.sandbox.workspace(
            setup.run_dir / f"home-{task.name}",
            size_bytes=challenge.limits.home_bytes,
            slot=setup.slot,
        )
        if not _evaluate_task(make_ctx, workspace, setup, entry_root, dry_run, out):
            break
    return _finish(challenge, phase, out.stages, out.scores, out.per_record, dry_run=dry_run)


def _finish(
    challenge: Challenge,
    phase: Phase,
    reports: list[StageReport],
    scores: dict[str, dict[str, float]],
    per_record: dict[str, dict[str, dict[str, float]]],
    *,
    dry_run: bool,
) -> EvaluationReport:
    failed = next((r for r in reports if r.status is StageStatus.FAILED), None)
    all_names = ("prep", "quiz", "exam", "score")
    seen = {r.name for r in reports}
    skipped = [
        StageReport(name, StageStatus.SKIPPED, "not reached")
        for name in all_names
        if name not in seen and len(phase.tasks) == 1
    ]
    if failed is not None:
        status, message = RunStatus.FAILED, f"{failed.name} failed"
    elif dry_run:
        status, message = RunStatus.DRY_RUN, "dry run completed with no error"
        skipped = [dataclasses.replace(s, message="DRYRUN present") for s in skipped]
    else:
        status, message = RunStatus.SCORED, "scored"
    return EvaluationReport(
        challenge=challenge.name,
        phase=phase.name,
        status=status,
        stages=tuple(reports + skipped),
        message=message,
        failed_stage=failed.name if failed else None,
        scores=scores,
        per_record=per_record,
    )
