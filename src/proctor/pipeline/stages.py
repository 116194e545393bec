"""The stage bodies of one task: prep, quiz, exam and the determinism rerun (score: ``scoring``).

Each body runs under ``StageRunner.run`` and returns a ``StageResult`` with everything it found;
the runner discloses it. Bodies speak only to the ``Driver`` contract, so they serve every
protocol.
"""

from __future__ import annotations

import os
from pathlib import Path

from proctor import trees
from proctor.errors import PlatformError
from proctor.pipeline.cases import run_cases
from proctor.pipeline.context import TaskContext
from proctor.pipeline.disclosure import (
    StageResult,
    counts_message,
    counts_of,
    fixed_problem,
    prep_notes,
    run_logs,
)
from proctor.pipeline.report import CaseCounts, Usage
from proctor.pipeline.runner import CaseSink, StageRunner
from proctor.pipeline.score import organizer_program_failed
from proctor.protocols.base import CaseRun, Driver
from proctor.protocols.scripts import duration
from proctor.types import Failure, Stage, StageStatus


def case_headline(noun: str, run: CaseRun) -> str:
    """One line naming a failed case and its problem (no entry output)."""
    return f"{noun} {run.case}: {run.problem or 'failed'}"


def safe_case_headline(noun: str, run: CaseRun) -> str:
    """One line naming a failed case and its problem in fixed phrases (for hidden cases)."""
    return f"{noun} {run.case}: {fixed_problem(run)}"


def prep(ctx: TaskContext, runner: StageRunner) -> StageResult:
    """Run the entry's setup once in its home (the entry is already checked and copied)."""

    def body(_: CaseSink) -> StageResult:
        prepared = ctx.driver.prepare(ctx.home, ctx.task.public_inputs)
        outcome = prepared.outcome
        usage, logs = Usage.of(outcome), run_logs(outcome.stdout, outcome.stderr)
        notes = prep_notes(
            made_executable=ctx.made_executable, ignored=ctx.ignored, unwrapped=ctx.unwrapped
        )
        notes += ctx.prep_note
        logs = ctx.prep_logs + logs
        if outcome.succeeded:  # an image's build log shows (at full) even when all went well
            done = f"{prepared.what} completed{notes}"
            return StageResult(Stage.PREP, StageStatus.PASSED, done, done, usage=usage,
                               logs=logs, show_logs=bool(ctx.prep_logs))  # fmt: skip
        problem = (
            f"timed out after {duration(prepared.limit_s)}"
            if outcome.timed_out
            else outcome.describe()
        )
        headline = prepared.problem or f"{prepared.what}: {problem}"
        return StageResult(
            Stage.PREP,
            StageStatus.FAILED,
            headline + notes,
            f"{prepared.what} failed",
            usage=usage,
            logs=logs,
            failure=Failure.ENTRY,
        )

    return runner.run(Stage.PREP, body)


def _quiz_case(ctx: TaskContext, case: str, wall_s: float) -> CaseRun:
    driver = ctx.driver
    run = driver.run_case(
        ctx.home, ctx.task.public_inputs, case, wall_s=wall_s, store=ctx.stored(Stage.QUIZ, case)
    )
    if not run.ok or run.output is None or not driver.answers_expected:
        return run  # without shipped answers the quiz only checks that the entry works
    answer = driver.expected_answer(ctx.entry_root, case)
    if answer is None:
        missing = (
            f"the entry ships no answer {driver.describe_answer(case)}: add the expected output"
        )
        return CaseRun(case, run.outcome, None, missing)
    if isinstance(answer, str):
        return CaseRun(case, run.outcome, None, f"the shipped answer {answer}")
    difference = driver.compare(run.output, answer)
    if difference is None:
        return run
    return CaseRun(case, run.outcome, None, f"output differs from the shipped answer: {difference}")


def quiz(ctx: TaskContext, runner: StageRunner) -> StageResult:
    """Run every public case and compare each output with the answer the entry ships.

    Stops at the first failure or mismatch and reports that case's diagnostics.
    """
    driver = ctx.driver
    cases = driver.quiz_cases(ctx.challenge.protocol, ctx.task.public_inputs)
    if not cases and driver.shows_run_logs:
        return _skipped_quiz(driver, runner)

    def body(sink: CaseSink) -> StageResult:
        found = run_cases(
            cases,
            lambda case, wall_s: _quiz_case(ctx, case, wall_s),
            jobs=ctx.jobs,
            case_s=driver.case_s,
            stage_s=driver.stage_s,
            stop_on_failure=True,
            on_case=sink,
            cancel=driver.context.session.cancel,
        )
        counts = counts_of(found.runs)
        usage = Usage.total(run.outcome for run in found.runs)
        failed = next((run for run in found.runs if not run.ok), None)
        if failed is not None:
            return _failed_quiz(ctx, failed, counts, usage)
        if found.stage_timed_out:
            late = f"quiz: timed out after {duration(driver.stage_s)}"
            return StageResult(
                Stage.QUIZ, StageStatus.FAILED, late, late, counts, usage, failure=Failure.ENTRY
            )
        noun = driver.case_noun if counts.passed == 1 else f"{driver.case_noun}s"
        matched = (
            f"{counts.passed} {noun} matched the shipped answers"
            if driver.answers_expected
            else f"{counts.passed} {noun} gave usable output"
        )
        return StageResult(
            Stage.QUIZ, StageStatus.PASSED, matched, matched, counts, usage,
            _shown_logs(driver, found.runs), show_logs=driver.shows_run_logs,
        )  # fmt: skip

    return runner.run(Stage.QUIZ, body, cases=len(cases))


def exam(ctx: TaskContext, runner: StageRunner, inputs: Path) -> StageResult:
    """Run every hidden case; failures do not stop it and only counts are disclosed."""
    driver = ctx.driver
    cases = driver.list_cases(ctx.challenge.protocol, inputs)
    ctx.outputs(Stage.EXAM).mkdir(parents=True, exist_ok=True)

    def one(case: str, wall_s: float) -> CaseRun:
        return driver.run_case(
            ctx.home, inputs, case, wall_s=wall_s, store=ctx.stored(Stage.EXAM, case)
        )

    def body(sink: CaseSink) -> StageResult:
        found = run_cases(
            cases,
            one,
            jobs=ctx.jobs,
            case_s=driver.case_s,
            stage_s=driver.stage_s,
            stop_on_failure=False,
            on_case=sink,
            cancel=driver.context.session.cancel,
        )
        counts = counts_of(found.runs, len(found.not_started))
        usage = Usage.total(run.outcome for run in found.runs)
        if found.stage_timed_out:
            late = f"exam: timed out after {duration(driver.stage_s)}"
            return StageResult(
                Stage.EXAM, StageStatus.FAILED, late, late, counts, usage, failure=Failure.ENTRY,
                safe_headline=late,
            )  # fmt: skip
        failed = next((run for run in found.runs if not run.ok), None)
        if failed is not None and driver.failed_case_fails_task:
            return StageResult(
                Stage.EXAM,
                StageStatus.FAILED,
                case_headline(driver.case_noun, failed),
                "exam failed",
                counts,
                usage,
                run_logs(failed.outcome.stdout, failed.outcome.stderr),
                counts_replace_headline=True,
                failure=Failure.ENTRY,
                safe_headline=safe_case_headline(driver.case_noun, failed),
            )
        return _completed_exam(driver, found.runs, counts, usage)

    return runner.run(Stage.EXAM, body, cases=len(cases))


def _completed_exam(
    driver: Driver, runs: tuple[CaseRun, ...], counts: CaseCounts, usage: Usage
) -> StageResult:
    """An exam that ran to its end: counts, and its first failed run for the score stage.

    A protocol whose run's output is the stage's diagnostics (``shows_run_logs``) also names
    the failed run's problem at ``full`` and shows its output tails there.
    """
    failed = next((run for run in runs if not run.ok), None)
    message = counts_message(Stage.EXAM, counts)
    headline = message
    if failed is not None and driver.shows_run_logs:
        headline = f"{message}; {case_headline(driver.case_noun, failed)}"
    return StageResult(
        Stage.EXAM, StageStatus.PASSED, headline, "exam completed", counts, usage,
        _shown_logs(driver, runs), counts_replace_headline=True, safe_headline=message,
        show_logs=driver.shows_run_logs, failed_run=failed,
    )  # fmt: skip


def _failed_quiz(
    ctx: TaskContext, failed: CaseRun, counts: CaseCounts, usage: Usage
) -> StageResult:
    """The quiz's first failed case: the entry's failure, unless the driver lets it go on."""
    driver = ctx.driver
    headline = case_headline(driver.case_noun, failed)
    goes_on = driver.quiz_failure_goes_on(ctx.entry_root)
    if failed.organizer_fault and goes_on is None:
        return organizer_program_failed(ctx, Stage.QUIZ, failed)
    logs = () if failed.organizer_fault else run_logs(failed.outcome.stdout, failed.outcome.stderr)
    if goes_on is not None:
        note = f"{headline}; {goes_on}"
        return StageResult(
            Stage.QUIZ, StageStatus.PASSED, note, "quiz done", counts, usage, logs, show_logs=True
        )
    return StageResult(
        Stage.QUIZ,
        StageStatus.FAILED,
        headline,
        "quiz failed",
        counts,
        usage,
        logs,
        counts_replace_headline=True,
        failure=Failure.ENTRY,
    )


def _skipped_quiz(driver: Driver, runner: StageRunner) -> StageResult:
    """No public case to run (a protocol of one run per split, on no sample data)."""
    note = f"no public inputs to run a {driver.case_noun} on: the exam runs it"
    skipped = StageResult(Stage.QUIZ, StageStatus.SKIPPED, note, note)
    runner.finish(skipped)
    return skipped


def _shown_logs(driver: Driver, runs: tuple[CaseRun, ...]) -> tuple[tuple[str, str], ...]:
    """A protocol's one run's output tails, shown at ``full`` even when it passed (else none)."""
    if not driver.shows_run_logs or not runs:
        return ()
    shown = next((run for run in runs if not run.ok), runs[0])
    if shown.organizer_fault:  # the organizer's program's output: theirs only
        return ()
    return run_logs(shown.outcome.stdout, shown.outcome.stderr)


def rerun(ctx: TaskContext, runner: StageRunner, inputs: Path, count: int) -> dict[str, float]:
    """Rerun up to ``count`` exam cases that gave an output; compare outputs byte for byte.

    The caller restores the home as it was after setup first, so nothing the exam left there
    (a cache of outputs) can be replayed.

    PhysioNet's organizers could not tell whether an entry gave the same answer twice. Only
    counts are reported (the cases are hidden); returns ``{rerun, identical}``.
    """
    driver = ctx.driver
    with_output = [
        case
        for case in driver.list_cases(ctx.challenge.protocol, inputs)
        if ctx.stored(Stage.EXAM, case).exists()
    ]
    chosen = with_output[:count]
    identical = timed_out = 0

    def body(sink: CaseSink) -> StageResult:
        nonlocal identical, timed_out
        outcomes = []
        for case in chosen:
            again = driver.run_case(
                ctx.home, inputs, case, wall_s=driver.case_s, store=ctx.stored(Stage.RERUN, case)
            )
            stored = ctx.stored(Stage.EXAM, case)
            identical += again.output is not None and driver.same_output(again.output, stored)
            timed_out += again.timed_out
            outcomes.append(again.outcome)
            sink(again)
        total = len(chosen)
        verdict = "deterministic" if identical == total else "NOT deterministic"
        message = f"{identical} of {total} rerun cases gave identical output: {verdict}"
        counts = CaseCounts(total, identical, total - identical, timed_out)
        usage = Usage.total(outcomes)
        return StageResult(
            Stage.RERUN, StageStatus.PASSED, message, "rerun completed", counts, usage,
            safe_headline=message,
        )  # fmt: skip

    if not chosen:
        note = "no exam case gave an output to rerun"
        runner.finish(StageResult(Stage.RERUN, StageStatus.SKIPPED, note, note))
        return {"rerun": 0.0, "identical": 0.0}
    runner.run(Stage.RERUN, body, cases=len(chosen))
    return {"rerun": float(len(chosen)), "identical": float(identical)}


def home_is_full(home: Path) -> bool:
    """True when no block or no inode is left in the (size-capped) home."""
    info = os.statvfs(home)
    return info.f_bavail == 0 or info.f_favail == 0


def reset_home(entry_root: Path, home: Path) -> None:
    """Fill an empty home with a copy of the entry (the entry's own files only)."""
    trees.copy_tree(entry_root, home, top_meta=False)


def apparent_bytes(folder: Path) -> int:
    """The bytes a copy of ``folder`` would write: regular files in full (sparse ones too)."""
    return trees.apparent_bytes(folder)


def snapshot_home(home: Path, snapshot: Path, *, max_bytes: int) -> bool:
    """Keep a copy of the home as it is now, links as links, specials left out.

    False (and no copy) when the files would take more than ``max_bytes`` once copied:
    sparse files are written out in full, so a home of holes could fill the host's disk.
    A copy that fails on the host is a ``PlatformError``.
    """
    trees.remove_tree_quietly(snapshot)
    if apparent_bytes(home) > max_bytes:
        return False
    snapshot.parent.mkdir(parents=True, exist_ok=True)
    try:
        trees.copy_tree(home, snapshot)
    except OSError as err:
        trees.remove_tree_quietly(snapshot)
        raise PlatformError(f"cannot keep a copy of the home: {err}") from err
    return True


def restore_home(snapshot: Path, home: Path) -> None:
    """Empty the home and put the snapshot back (the home itself, a mount point, stays)."""
    try:
        trees.empty_tree(home)
        trees.copy_tree(snapshot, home)
    except OSError as err:
        raise PlatformError(f"cannot restore the home as it was after setup: {err}") from err
