"""Evaluate one entry in one phase: prep → quiz → exam → score for each task of the phase.

The first failing stage stops the evaluation; a ``DRYRUN`` file in the entry stops it after
quiz. Each task gets a fresh, size-capped home holding a copy of the entry, and its inputs
staged where the sandbox slot may read them.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from proctor.entries import Manifest, check_manifest, entry_flags
from proctor.errors import ManifestError
from proctor.pipeline import stages
from proctor.pipeline.caselog import CaseLog
from proctor.pipeline.context import TaskContext
from proctor.pipeline.determinism import rerun_cases
from proctor.pipeline.inputs import stage_inputs
from proctor.pipeline.progress import ProgressListener, SilentProgress
from proctor.pipeline.report import EvaluationReport, RunStatus, StageReport, StageStatus
from proctor.pipeline.scoring import get_scorer
from proctor.protocols.records import RecordsDriver, list_records
from proctor.sandbox.base import Sandbox
from proctor.spec.model import Challenge, Phase, RecordsProtocol, Task

STAGE_NAMES = ("prep", "quiz", "exam", "score")
CASE_LOG = "cases.jsonl"
SCORE_ERROR_LOG = "score-error.txt"
SCORE_ERROR_CODE = "E-SCORE"


@dataclass(frozen=True, slots=True)
class EvaluationSetup:
    """Where and how to evaluate: the run folder, the sandbox, its slot, parallel cases."""

    run_dir: Path
    sandbox: Sandbox
    slot: int = 0
    jobs: int = 1
    progress: ProgressListener = field(default_factory=SilentProgress)
    determinism_cases: int = 0


@dataclass
class _Results:
    stages: list[StageReport] = field(default_factory=list)
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    per_record: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    efficiency: dict[str, dict[str, float]] = field(default_factory=dict)
    determinism: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, report: StageReport) -> bool:
        """Record a stage; True when the evaluation may go on."""
        self.stages.append(report)
        return report.status is not StageStatus.FAILED


def _manifest_problem(protocol: RecordsProtocol, entry_root: Path) -> StageReport | None:
    manifest = Manifest(required=protocol.required_files, executable=protocol.executable_files)
    try:
        check_manifest(entry_root, manifest)
    except ManifestError as err:
        return StageReport("prep", StageStatus.FAILED, str(err))
    return None


def _staged(task: Task, run_dir: Path) -> Task:
    """The task with its inputs staged under the run folder (references untouched)."""
    base = run_dir / "inputs" / task.name
    public = stage_inputs(task.public_inputs, base / "public")
    hidden = stage_inputs(task.hidden_inputs, base / "hidden") if task.hidden_inputs else None
    return task.model_copy(update={"public_inputs": public, "hidden_inputs": hidden})


def _score(ctx: TaskContext, exam: StageReport, results: _Results) -> bool:
    """Score the task's exam outputs; False when scoring itself failed."""
    name = ctx.stage_name("score")
    ctx.progress.stage_started(name, 0)
    started = time.monotonic()
    task = ctx.task
    assert task.hidden_references is not None and task.hidden_inputs is not None
    records = list_records(task.hidden_inputs)
    try:
        scored = get_scorer(task.scorer)(
            ctx.outputs, task.hidden_references, records, ctx.driver.protocol.output
        )
    except Exception:
        # A scorer's traceback can quote reference values: the organizer gets it in the run
        # folder, the participant an error code only.
        (ctx.run_dir / SCORE_ERROR_LOG).write_text(traceback.format_exc())
        report = StageReport(
            name,
            StageStatus.FAILED,
            f"scoring failed with an internal error ({SCORE_ERROR_CODE}); your entry is not "
            "at fault and the organizers have the details",
            time.monotonic() - started,
        )
        ctx.progress.stage_finished(report)
        return results.add(report)
    cases = max(exam.cases.total, 1)
    results.efficiency[task.name] = {
        "cpu_s_per_case": round(exam.usage.cpu_s / cases, 6),
        "wall_s_per_case": round(exam.usage.wall_s / cases, 6),
        "peak_memory_bytes": float(exam.usage.peak_memory_bytes),
    }
    level = ctx.challenge.disclosure.score
    message = f"scored {len(records)} records"
    if scored.zero_filled:
        message += f"; {len(scored.zero_filled)} without usable output scored as zeros"
    if level == "none":
        message = "scored"
    report = StageReport(name, StageStatus.PASSED, message, time.monotonic() - started)
    ctx.progress.stage_finished(report)
    results.add(report)
    if level == "none":
        return True  # only whether the stage passed
    wanted = task.metrics or tuple(scored.summary)
    results.scores[task.name] = {m: scored.summary[m] for m in wanted}
    if level == "full":
        results.per_record[task.name] = scored.per_record
    return True


def _run_task(ctx: TaskContext, setup: EvaluationSetup, dry_run: bool, results: _Results) -> bool:
    """Run the stages of one task in a fresh home; True when the evaluation may go on."""
    limits = ctx.challenge.limits
    workspace = setup.sandbox.workspace(ctx.home, size_bytes=limits.home_bytes, slot=setup.slot)
    with workspace:
        try:
            stages.reset_home(ctx.entry_root, ctx.home)
        except OSError:
            if not stages.home_is_full(ctx.home):
                raise
            message = (
                f"the entry does not fit in its {limits.home_bytes}-byte home: make it smaller"
            )
            report = StageReport(ctx.stage_name("prep"), StageStatus.FAILED, message)
            ctx.progress.stage_finished(report)
            return results.add(report)
        setup.sandbox.give_to_slot(ctx.home, setup.slot)
        if not (results.add(stages.prep(ctx)) and results.add(stages.quiz(ctx))):
            return False
        if dry_run:
            return True
        exam = stages.exam(ctx)
        if not results.add(exam) or exam.status is StageStatus.SKIPPED:
            return exam.status is StageStatus.SKIPPED
        if setup.determinism_cases:
            report, verdict = rerun_cases(ctx, setup.determinism_cases)
            results.add(report)
            results.determinism[ctx.task.name] = verdict
    return _score(ctx, exam, results)


def evaluate(
    challenge: Challenge, phase: Phase, entry_root: Path, setup: EvaluationSetup
) -> EvaluationReport:
    """Evaluate the unpacked entry at ``entry_root`` in ``phase`` of ``challenge``."""
    protocol = challenge.protocol
    if not isinstance(protocol, RecordsProtocol):
        raise NotImplementedError(f"the {protocol.kind!r} protocol is not available yet")
    results = _Results()
    rejected = _manifest_problem(protocol, entry_root)
    if rejected is not None:
        setup.progress.stage_finished(rejected)
        results.add(rejected)
        return _finish(challenge, phase, results, dry_run=False)
    dry_run = entry_flags(entry_root).dry_run
    driver = RecordsDriver(
        protocol, challenge.limits, setup.sandbox, slot=setup.slot, parallel_runs=setup.jobs
    )
    several = len(phase.tasks) > 1
    for task_name in phase.tasks:
        ctx = TaskContext(
            challenge=challenge,
            task=_staged(challenge.task(task_name), setup.run_dir),
            entry_root=entry_root,
            home=setup.run_dir / f"home-{task_name}",
            outputs=setup.run_dir / "outputs" / task_name,
            run_dir=setup.run_dir,
            driver=driver,
            jobs=setup.jobs,
            progress=setup.progress,
            case_log=CaseLog(setup.run_dir / CASE_LOG),
            stage_prefix=f"{task_name}:" if several else "",
        )
        if not _run_task(ctx, setup, dry_run, results):
            break
    return _finish(challenge, phase, results, dry_run=dry_run)


def rejected(challenge: Challenge, phase: Phase, message: str) -> EvaluationReport:
    """The report of an entry refused before it ran (e.g. an unsafe archive): prep failed."""
    results = _Results()
    results.add(StageReport("prep", StageStatus.FAILED, message))
    return _finish(challenge, phase, results, dry_run=False)


def _finish(
    challenge: Challenge, phase: Phase, results: _Results, *, dry_run: bool
) -> EvaluationReport:
    reports = results.stages
    failed = next((r for r in reports if r.status is StageStatus.FAILED), None)
    seen = {r.name for r in reports}
    note = "DRYRUN present" if dry_run and failed is None else "not reached"
    skipped = [
        StageReport(name, StageStatus.SKIPPED, note)
        for name in STAGE_NAMES
        if name not in seen and len(phase.tasks) == 1
    ]
    if failed is not None:
        status, message = RunStatus.FAILED, f"{failed.name} failed"
    elif dry_run:
        status, message = RunStatus.DRY_RUN, "dry run completed with no error"
    else:
        status, message = RunStatus.SCORED, "scored"
    return EvaluationReport(
        challenge=challenge.name,
        phase=phase.name,
        status=status,
        stages=tuple([*reports, *skipped]),
        message=message,
        failed_stage=failed.name if failed else None,
        scores=results.scores,
        per_record=results.per_record,
        efficiency=results.efficiency,
        determinism=results.determinism,
    )
