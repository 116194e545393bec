"""The score stage: stored exam outputs against hidden references, in trusted host code.

:func:`run_scorer` is the stage itself for any protocol (a ``ScoreTarget`` says what to score);
:func:`score` scores a code protocol's exam outputs and adds its efficiency figures.

A scorer crash is the scorer's fault, never the entry's: its traceback (which can quote
reference values) goes to the run folder for the organizer, the participant gets an error code.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from proctor.errors import OutputError
from proctor.pipeline.context import TaskContext
from proctor.pipeline.disclosure import StageResult, failed_code_message, run_logs
from proctor.pipeline.report import FullScores
from proctor.pipeline.runner import CaseSink, StageRunner, disclosure_level
from proctor.protocols.base import CaseRun
from proctor.scoring.base import Scorer, TaskScores
from proctor.scoring.concurrent_ingestion import EntryCodeError
from proctor.scoring.program_scores import ScoringProgramError
from proctor.spec.model import DisclosureSpec, PerRecord
from proctor.spec.programs import TAIL_CHARS
from proctor.store.runfolder import RunFolder
from proctor.types import Disclosure, Failure, Stage, StageStatus

SCORE_ERROR_CODE = "E-SCORE"
ORGANIZER_FAULT = "the organizer's program failed before the entry's code ran"
"""Heads the organizer's log line of such a failure (``challenge check`` looks for it)."""
ZERO_FILLED = frozenset({"records_zero_filled", "datasets_failed"})
"""Counts of cases without usable output: hidden when the exam shows nothing."""


@dataclass(frozen=True, slots=True)
class ShownScores:
    """The scores a participant may see, by the score stage's disclosure level."""

    scores: dict[str, float] = field(default_factory=dict)
    per_record: dict[str, dict[str, float]] | None = None
    efficiency: dict[str, float] | None = None
    dashboard: dict[str, dict[str, dict[str, float]]] | None = None
    full: FullScores | None = None
    """Every score unredacted, for the service's store (never shown)."""


def shown_scores(
    scored: TaskScores, wanted: tuple[str, ...], level: Disclosure, per_record: PerRecord
) -> ShownScores:
    """The summary a participant may see; per-case values only as ``per_record`` allows.

    A wanted metric the scorer gave no value (``missing_metrics: empty``) is left out.

    ``none`` shows no number at all. Per-case scores on hidden data at full precision are a
    label oracle: ``per_record`` withholds (``none``) or rounds them (``rounded``, 2 decimals).
    """
    if level is Disclosure.NONE:
        return ShownScores()
    summary = {metric: scored.summary[metric] for metric in wanted if metric in scored.summary}
    if per_record == "none" or level is not Disclosure.FULL:
        return ShownScores(summary)
    if per_record == "rounded":
        rounded = {
            case: {name: round(value, 2) for name, value in row.items()}
            for case, row in scored.per_record.items()
        }
        return ShownScores(summary, rounded)
    return ShownScores(summary, scored.per_record)


@dataclass(frozen=True, slots=True)
class ScoreTarget:
    """What one score stage scores: stored outputs of ``cases`` against ``references``.

    ``precheck``: an entry-side check run first (predictions uploaded in a bad format): its
    message fails the stage as the entry's fault. ``hide_zero_filled``: say nothing of the
    cases scored as zeros (the exam shows nothing). ``code_failed``: the entry's code failed
    in the exam and what it wrote is scored as is: a scorer failure is then the entry's, with
    this message (``failed_note`` is the organizer's line when scoring works all the same).
    """

    task: str
    scorer: Scorer
    outputs: Path
    references: Path
    cases: tuple[str, ...]
    template: str
    noun: str
    errors_log: Path
    precheck: Callable[[], str | None] | None = None
    hide_zero_filled: bool = False
    scoring_log: Path | None = None
    code_failed: str | None = None
    failed_note: str = ""
    organizer_fault: str = ""
    """The organizer's program failed before the entry's code ran, and the upload is scored
    as uploaded (Codabench's result zip): a warning when it scores, E-SCORE when it does not."""


def log_scorer_failure(errors_log: Path, scoring_log: Path | None, heading: str) -> None:
    """Keep the organizer's record of the exception being handled (never shown to participants).

    A scoring program's failure: its reason in ``errors_log`` and, with its output's tails, in
    ``scoring_log``; any other exception: its traceback in ``errors_log``.
    """
    failure = sys.exc_info()[1]
    with errors_log.open("a", encoding="utf-8") as log:
        if isinstance(failure, ScoringProgramError):
            log.write(f"{heading}: {failure.reason}\n")
        else:
            log.write(f"{heading}:\n{traceback.format_exc()}\n")
    if isinstance(failure, ScoringProgramError) and scoring_log is not None:
        keep_scoring_log(scoring_log, heading, f"failed: {failure.reason}\n{failure.log}")


def keep_scoring_log(scoring_log: Path, heading: str, text: str) -> None:
    """Append a scoring program's record (warnings, output tails) to the organizer's log."""
    if text:
        with scoring_log.open("a", encoding="utf-8") as log:
            log.write(f"=== {heading}\n{text}\n")


def run_scorer(target: ScoreTarget, runner: StageRunner) -> TaskScores | None:
    """Run the score stage on ``target``; None when it failed (the entry's or the scorer's)."""
    scored: list[TaskScores] = []

    def body(_: CaseSink) -> StageResult:
        problem = target.precheck() if target.precheck is not None else None
        if problem is not None:
            return StageResult(
                Stage.SCORE, StageStatus.FAILED, problem, "score failed", failure=Failure.ENTRY
            )
        try:
            result = target.scorer.score(
                target.outputs, target.references, target.cases, target.template
            )
        except OutputError as err:
            if isinstance(err, EntryCodeError) and target.scoring_log is not None:
                keep_scoring_log(target.scoring_log, f"task {target.task}: entry failed", err.log)
            return StageResult(
                Stage.SCORE, StageStatus.FAILED, str(err), "score failed", failure=Failure.ENTRY
            )
        except Exception:
            log_scorer_failure(target.errors_log, target.scoring_log, f"task {target.task}")
            if target.organizer_fault:
                with target.errors_log.open("a", encoding="utf-8") as errors:
                    errors.write(f"task {target.task}: exam: {ORGANIZER_FAULT}: ")
                    errors.write(f"{target.organizer_fault}\n")
            return _scorer_failed(target)
        if target.scoring_log is not None:
            note = f"warning: {target.failed_note}; what it wrote was scored anyway\n"
            log = note if target.code_failed else ""
            if target.organizer_fault:
                log = (
                    f"warning: {ORGANIZER_FAULT}: {target.organizer_fault}; the upload was "
                    "scored as uploaded\n"
                )
            keep_scoring_log(target.scoring_log, f"task {target.task}: scored", log + result.log)
        scored.append(result)
        count = len(target.cases)
        message = f"scored {count} {target.noun}{'' if count == 1 else 's'}"
        if result.zero_filled and not target.hide_zero_filled:
            message += f"; {len(result.zero_filled)} without usable output scored as zeros"
        return StageResult(Stage.SCORE, StageStatus.PASSED, message, "scored")

    runner.run(Stage.SCORE, body)
    return scored[0] if scored else None


def _scorer_failed(target: ScoreTarget) -> StageResult:
    """Scoring failed: the organizer's fault, unless the entry's code had failed before it."""
    if target.code_failed is not None:
        return StageResult(
            Stage.SCORE, StageStatus.FAILED, target.code_failed, "score failed",
            failure=Failure.ENTRY,
        )  # fmt: skip
    message = (
        f"scoring failed with an internal error ({SCORE_ERROR_CODE}); your entry is "
        "not at fault and the organizers have the details"
    )
    return StageResult(Stage.SCORE, StageStatus.FAILED, message, message, failure=Failure.SCORER)


def organizer_program_failed(ctx: TaskContext, stage: Stage, run: CaseRun) -> StageResult:
    """``run`` failed in the organizer's program before the entry's code ran: E-SCORE.

    The reason and the run's output tails go to the organizer's logs (``score-error.txt``,
    ``scoring-TASK.log``); the participant is told only that the entry is not at fault.
    """
    heading = f"task {ctx.task.name}: {stage}"
    with ctx.folder.score_errors.open("a", encoding="utf-8") as log:
        log.write(f"{heading}: {ORGANIZER_FAULT}: {run.organizer_fault}\n")
    keep_organizer_tails(ctx, stage, run)
    message = (
        f"the organizer's program failed before your code ran ({SCORE_ERROR_CODE}); your "
        "entry is not at fault and the organizers have the details"
    )
    return StageResult(stage, StageStatus.FAILED, message, message, failure=Failure.SCORER)


def keep_organizer_tails(ctx: TaskContext, stage: Stage, run: CaseRun) -> None:
    """The organizer's failed run's reason and output tails, in ``scoring-TASK.log``."""
    heading = f"task {ctx.task.name}: {stage}"
    tails = run_logs(run.outcome.stdout[-TAIL_CHARS:], run.outcome.stderr[-TAIL_CHARS:])
    text = "".join(
        f"--- {name} (last {TAIL_CHARS} characters) ---\n{body}\n" for name, body in tails
    )
    keep_scoring_log(
        ctx.folder.scoring_log(ctx.task.name),
        heading,
        f"{ORGANIZER_FAULT}: {run.organizer_fault}\n{text}",
    )


def _code_failure(
    ctx: TaskContext, policy: DisclosureSpec, exam: StageResult
) -> tuple[str | None, str]:
    """(The entry's failure message, the organizer's note), or (None, "").

    For a protocol that scores what failed code wrote, when the exam's run failed.
    """
    words, run = ctx.driver.failed_code_words, exam.failed_run
    if not words or run is None:
        return None, ""
    level = disclosure_level(policy, Stage.EXAM)
    note = f"the exam's run failed ({run.problem or run.outcome.describe()})"
    return failed_code_message(words, run, level), note


def score(ctx: TaskContext, runner: StageRunner, exam: StageResult) -> ShownScores | None:
    """Score the task's stored exam outputs; None when scoring itself failed."""
    task = ctx.task
    references, inputs = task.hidden_references, task.hidden_inputs
    if references is None or inputs is None:
        raise ValueError(f"task {task.name!r} has no hidden data to score")
    # at exam "none" not even the count of failed exam cases may show, here or in a metric
    exam_hidden = disclosure_level(runner.policy, Stage.EXAM) is Disclosure.NONE
    code_failed, failed_note = _code_failure(ctx, runner.policy, exam)
    failed_run, organizer_fault = exam.failed_run, ""
    if failed_run is not None and failed_run.organizer_fault:
        if ctx.driver.quiz_failure_goes_on(ctx.entry_root) is None:  # nothing but code to score
            runner.run(
                Stage.SCORE, lambda _: organizer_program_failed(ctx, Stage.SCORE, failed_run)
            )
            return None
        code_failed, organizer_fault = None, failed_run.organizer_fault  # scored as uploaded
        keep_organizer_tails(ctx, Stage.EXAM, failed_run)
    target = ScoreTarget(
        task=task.name,
        scorer=ctx.scorer,
        outputs=ctx.outputs(Stage.EXAM),
        references=references,
        cases=tuple(ctx.driver.list_cases(ctx.challenge.protocol, inputs)),
        template=ctx.driver.output_template(ctx.challenge.protocol),
        noun=ctx.driver.case_noun,
        errors_log=ctx.folder.score_errors,
        hide_zero_filled=exam_hidden,
        scoring_log=ctx.folder.scoring_log(task.name),
        code_failed=code_failed,
        failed_note=failed_note,
        organizer_fault=organizer_fault,
    )
    scored = run_scorer(target, runner)
    if scored is None:
        return None
    keep_organizer_files(ctx.folder, task.name, scored)
    policy = runner.policy
    level = disclosure_level(policy, Stage.SCORE)
    wanted = tuple(m for m in task.reported_metrics if not (exam_hidden and m in ZERO_FILLED))
    shown = shown_scores(scored, wanted, level, policy.per_record)
    efficiency = _exam_efficiency(ctx, policy, exam)
    board = shown_dashboard(scored, level, exam_hidden=exam_hidden)
    return ShownScores(shown.scores, shown.per_record, efficiency, board, full_scores(scored))


def shown_dashboard(
    scored: TaskScores, level: Disclosure, *, exam_hidden: bool
) -> dict[str, dict[str, dict[str, float]]] | None:
    """The scorer's dashboard, shown only with full scores and an exam that shows counts.

    Like VISCERAL's private dashboard it carries minima and maxima over hidden volumes and
    counts of empty ones, so a policy hiding either keeps it back.
    """
    if not scored.dashboard or level is not Disclosure.FULL or exam_hidden:
        return None
    return scored.dashboard


def _exam_efficiency(
    ctx: TaskContext, policy: DisclosureSpec, exam: StageResult
) -> dict[str, float] | None:
    """The exam's figures per case: kept exactly for the organizer, shown as policy allows."""
    cases_run = max(exam.counts.total, 1)
    efficiency = {
        "cpu_s_per_case": round(exam.usage.cpu_s / cases_run, 6),
        "wall_s_per_case": round(exam.usage.wall_s / cases_run, 6),
        "peak_memory_bytes": float(exam.usage.peak_memory_bytes),
    }
    _keep_for_organizer(ctx, efficiency)
    ceilings = {
        "cpu_s_per_case": ctx.driver.case_s,
        "wall_s_per_case": ctx.driver.case_s,
        "peak_memory_bytes": float(ctx.challenge.limits.memory_bytes),
    }
    return disclosed_efficiency(efficiency, policy, ceilings)


COARSE_LEVELS = 8


def coarse(value: float, ceiling: float) -> float:
    """The smallest of 8 levels (``ceiling``/128 … ``ceiling``, doubling) not below ``value``.

    At most 3 bits per figure per submission reach the participant.
    """
    for step in range(COARSE_LEVELS - 1, -1, -1):
        level = float(ceiling / 2**step)
        if value <= level:
            return level
    return float(ceiling)


def disclosed_efficiency(
    figures: dict[str, float], policy: DisclosureSpec, ceilings: dict[str, float]
) -> dict[str, float] | None:
    """The exam figures a participant may see: all, 8 levels each, or none.

    None is the default when the exam is disclosed at ``counts`` or ``none``.
    """
    if not policy.exam_figures_hidden():
        return figures
    if policy.efficiency == "coarse":
        return {name: coarse(value, ceilings[name]) for name, value in figures.items()}
    return None


def _keep_for_organizer(ctx: TaskContext, figures: dict[str, float]) -> None:
    """The exact exam figures, in the run folder's ``efficiency.json`` (never shown as is)."""
    path = ctx.folder.root / "efficiency.json"
    kept = json.loads(path.read_text()) if path.is_file() else {}
    kept[ctx.task.name] = figures
    path.write_text(json.dumps(kept, indent=2, sort_keys=True))


def full_scores(scored: TaskScores) -> FullScores:
    """Every summary and per-case value of ``scored``, unredacted, for the job's result."""
    return FullScores(dict(scored.summary), scored.per_record)


def keep_organizer_files(folder: RunFolder, task: str, scored: TaskScores) -> None:
    """The scorer's whole dashboard and its pages, in the run folder for the organizer.

    ``dashboard-TASK.json`` (the organizer's heat map, whatever the participant is shown) and
    the scorer's pages (``detailed_results-TASK.html``) go into the run's logs artifact.
    """
    if scored.dashboard:  # the organizer's, whatever the participant is shown (scorer's order)
        folder.dashboard(task).write_text(json.dumps(scored.dashboard, allow_nan=True))
    for name, html in scored.pages.items():  # e.g. detailed_results-TASK.html
        folder.scorer_page(task, name).write_text(html, encoding="utf-8")
