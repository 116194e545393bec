"""The stages of the records protocol: prep, quiz, exam (score lives in ``scoring``).

Each function runs one stage for one task and returns a ``StageReport`` already redacted by
the challenge's disclosure level for that stage.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

from proctor.pipeline.cases import StageRun, run_cases
from proctor.pipeline.context import TaskContext
from proctor.pipeline.disclosure import (
    case_diagnostics,
    counts_message,
    counts_of,
    script_diagnostics,
)
from proctor.pipeline.report import StageReport, StageStatus, Usage
from proctor.protocols.compare import compare_answer
from proctor.protocols.records import CaseRun, list_records


def _usage(runs: tuple[CaseRun, ...]) -> Usage:
    return Usage.total(run.outcome for run in runs)


def _minutes(seconds: float) -> str:
    if seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{seconds:g} second{'s' if seconds != 1 else ''}"


def prep(ctx: TaskContext) -> StageReport:
    """Run the entry's setup script once in its home (the entry is already checked and copied)."""
    name = ctx.stage_name("prep")
    ctx.progress.stage_started(name, 0)
    level = ctx.challenge.disclosure.prep
    script = ctx.driver.protocol.setup
    outcome = ctx.driver.setup(ctx.home, ctx.task.public_inputs)
    usage = Usage.of(outcome)
    if outcome.succeeded:
        report = StageReport(name, StageStatus.PASSED, f"{script} completed", outcome.wall_s)
    else:
        problem = (
            f"timed out after {_minutes(ctx.challenge.limits.setup_s)}"
            if outcome.timed_out
            else outcome.describe()
        )
        message = script_diagnostics(script, problem, outcome.stdout, outcome.stderr, level)
        report = StageReport(name, StageStatus.FAILED, message, outcome.wall_s)
    report = dataclasses.replace(report, usage=usage)
    ctx.progress.stage_finished(report)
    return report


def _quiz_case(ctx: TaskContext, record: str, wall_s: float) -> CaseRun:
    run = ctx.driver.run_case(ctx.home, ctx.task.public_inputs, record, wall_s=wall_s)
    template = ctx.driver.protocol.answers
    if not run.ok or run.output is None or template is None:
        return run  # without an ``answers`` template the quiz only checks that next.sh works
    answer = ctx.driver.answer_for(ctx.entry_root, record)
    if answer is None:
        expected = template.format(record=record)
        return dataclasses.replace(
            run, problem=f"the entry ships no answer {expected}: add the expected output"
        )
    difference = compare_answer(run.output, answer, ctx.driver.protocol.compare)
    if difference is None:
        return run
    return dataclasses.replace(run, problem=f"output differs from the shipped answer: {difference}")


def _run_stage(ctx: TaskContext, stage: str, inputs: Path, *, quiz: bool) -> StageRun:
    records = list_records(inputs)
    ctx.progress.stage_started(ctx.stage_name(stage), len(records))
    limits = ctx.challenge.limits

    def one(record: str, wall_s: float) -> CaseRun:
        if quiz:
            return _quiz_case(ctx, record, wall_s)
        return ctx.driver.run_case(ctx.home, inputs, record, wall_s=wall_s)

    def finished(run: CaseRun) -> None:
        if not quiz and run.ok and run.output is not None:
            (ctx.outputs / ctx.driver.protocol.output.format(record=run.record)).write_bytes(
                run.output
            )
        ctx.log_case(stage, run)
        ctx.progress.case_finished(ctx.stage_name(stage), run.ok)

    return run_cases(
        records,
        one,
        jobs=ctx.jobs,
        case_s=limits.case_s,
        stage_s=limits.stage_s,
        stop_on_failure=quiz,
        on_case=finished,
        cancel=ctx.driver.sandbox.cancel_all,
    )


def quiz(ctx: TaskContext) -> StageReport:
    """Run every public record and compare each output with the answer the entry ships.

    Stops at the first failure or mismatch and reports that case's diagnostics.
    """
    name = ctx.stage_name("quiz")
    result = _run_stage(ctx, "quiz", ctx.task.public_inputs, quiz=True)
    counts = counts_of(result.runs)
    level = ctx.challenge.disclosure.quiz
    failed = next((run for run in result.runs if not run.ok), None)
    if failed is not None:
        message = case_diagnostics(failed, level)
        if level == "counts":
            message = counts_message("quiz", counts)
        elif level == "none":
            message = "quiz failed"
        status = StageStatus.FAILED
    elif result.stage_timed_out:
        message = f"quiz: timed out after {_minutes(ctx.challenge.limits.stage_s)}"
        status = StageStatus.FAILED
    else:
        message = f"{counts.passed} records matched the shipped answers"
        status = StageStatus.PASSED
    if level == "none":
        counts = dataclasses.replace(counts, passed=0, failed=0, timed_out=0)
    report = StageReport(name, status, message, result.wall_s, counts, _usage(result.runs))
    ctx.progress.stage_finished(report)
    return report


def exam(ctx: TaskContext) -> StageReport:
    """Run every hidden record; failures do not stop it and only counts are disclosed."""
    name = ctx.stage_name("exam")
    inputs = ctx.task.hidden_inputs
    if inputs is None:
        report = StageReport(name, StageStatus.SKIPPED, "this task has no hidden inputs")
        ctx.progress.stage_finished(report)
        return report
    ctx.outputs.mkdir(parents=True, exist_ok=True)
    result = _run_stage(ctx, "exam", inputs, quiz=False)
    counts = counts_of(result.runs, len(result.not_started))
    level = ctx.challenge.disclosure.exam
    if result.stage_timed_out:
        status = StageStatus.FAILED
        message = f"exam: timed out after {_minutes(ctx.challenge.limits.stage_s)}"
    else:
        status = StageStatus.PASSED
        message = counts_message("exam", counts) if level != "none" else "exam completed"
    if level == "none":
        counts = dataclasses.replace(counts, passed=0, failed=0, timed_out=0)
    report = StageReport(name, status, message, result.wall_s, counts, _usage(result.runs))
    ctx.progress.stage_finished(report)
    return report


def home_is_full(home: Path) -> bool:
    """True when no block or no inode is left in the (size-capped) home."""
    info = os.statvfs(home)
    return info.f_bavail == 0 or info.f_favail == 0


def reset_home(entry_root: Path, home: Path) -> None:
    """Fill an empty home with a copy of the entry (the entry's own files only)."""
    for item in entry_root.iterdir():
        target = home / item.name
        if item.is_dir() and not item.is_symlink():
            shutil.copytree(item, target, symlinks=True)
        else:
            shutil.copy2(item, target, follow_symlinks=False)
