"""The stages of a protocol where no code runs (``FilesDriver``): the upload is the predictions.

No sandbox session is opened and nothing is copied into a home::

    prep   the upload's layout, encoding and sizes (every problem at once)
    quiz   the public split's predictions checked and scored against its public references;
           the scores are the stage's message (they are about public data); skipped when the
           upload holds none (``FilesDriver.public_uploaded``)
    (DRYRUN: stop)
    exam   skipped: no code runs
    score  the hidden split's predictions checked, then scored against the hidden references;
           every score, unredacted, in the task report's ``full`` (the service's)

The references of the public split are the public inputs themselves (each case's folder holds
its inputs and its answers, as a development set is published); the hidden references are read
by the host scorer alone and only the summary the disclosure allows leaves it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from proctor.errors import OutputError
from proctor.metrics.warning_capture import captured_warnings
from proctor.pipeline.disclosure import StageResult, prep_notes
from proctor.pipeline.runner import CaseSink, StageRunner, disclosure_level
from proctor.pipeline.score import (
    SCORE_ERROR_CODE,
    ScoreTarget,
    ShownScores,
    full_scores,
    keep_organizer_files,
    keep_scoring_log,
    log_scorer_failure,
    run_scorer,
    shown_scores,
)
from proctor.protocols.base import HIDDEN, PUBLIC, FilesDriver
from proctor.scoring.base import Scorer, TaskScores
from proctor.spec.model import Challenge, Task
from proctor.store.runfolder import RunFolder
from proctor.types import Failure, Stage, StageStatus
from proctor.wording import plural

NO_CODE = "no code runs: the predictions were uploaded"
MAX_WARNINGS = 3


@dataclass(frozen=True, slots=True)
class FilesJob:
    """One task of an upload of predictions: the challenge, the task, the driver, the scorer."""

    challenge: Challenge
    task: Task
    driver: FilesDriver
    scorer: Scorer
    entry_root: Path
    folder: RunFolder
    dry_run: bool = False
    ignored: tuple[str, ...] = ()
    unwrapped: str = ""


def evaluate_files(job: FilesJob, runner: StageRunner) -> ShownScores | None:
    """Run prep → quiz → (exam skipped) → score; the scores shown, None when none follow."""
    if prep(job, runner).failed or quiz(job, runner).failed or job.dry_run:
        return None
    runner.finish(StageResult(Stage.EXAM, StageStatus.SKIPPED, NO_CODE, NO_CODE))
    if job.task.hidden_inputs is None or job.task.hidden_references is None:
        note = "this task has no hidden data to score (a starting kit's replica without stand-in)"
        runner.finish(StageResult(Stage.SCORE, StageStatus.SKIPPED, note, note))
        return None
    return score(job, runner)


def prep(job: FilesJob, runner: StageRunner) -> StageResult:
    """Check the upload's layout, encoding and sizes, reporting every problem at once."""

    def body(_: CaseSink) -> StageResult:
        problems = job.driver.check_upload(job.entry_root)
        notes = prep_notes(ignored=job.ignored, unwrapped=job.unwrapped)
        if not problems:
            done = f"the upload's layout, encoding and sizes are fine{notes}"
            return StageResult(Stage.PREP, StageStatus.PASSED, done, done)
        if len(problems) == 1:
            headline = problems[0] + notes
        else:
            listing = "\n".join(f"  - {problem}" for problem in problems)
            headline = f"the upload has {len(problems)} problems{notes}:\n{listing}"
        return StageResult(
            Stage.PREP, StageStatus.FAILED, headline, "prep failed", failure=Failure.ENTRY
        )

    return runner.run(Stage.PREP, body)


def _cases(job: FilesJob, split: str) -> tuple[str, ...]:
    folder = job.task.public_inputs if split == PUBLIC else job.task.hidden_inputs
    if folder is None:
        return ()
    return tuple(job.driver.list_cases(job.challenge.protocol, folder))


def _format_problem(job: FilesJob, split: str) -> str | None:
    """The first case of ``split`` whose predictions the scorer cannot read, with the reason."""
    for case in _cases(job, split):
        problem = job.driver.validate_output(job.entry_root, split, case)
        if problem is not None:
            return problem
    return None


def _target(job: FilesJob, split: str, references: Path, errors_log: Path) -> ScoreTarget:
    cases = _cases(job, split)
    protocol = job.challenge.protocol
    first = job.driver.prediction(job.entry_root, split, cases[0]) if cases else job.entry_root
    return ScoreTarget(
        task=job.task.name,
        scorer=job.scorer,
        outputs=first.parent,
        references=references,
        cases=cases,
        template=job.driver.output_template(protocol),
        noun=job.driver.case_noun,
        errors_log=errors_log,
        precheck=lambda: _format_problem(job, split),
        scoring_log=job.folder.scoring_log(job.task.name),
    )


def quiz(job: FilesJob, runner: StageRunner) -> StageResult:
    """Check and score the public split's predictions; the scores are the stage's message."""
    skipped = ""
    if not job.driver.scores_public_split:
        skipped = "no public split to score: the hidden references score the upload"
    elif not job.driver.public_uploaded(job.entry_root):
        public = job.driver.folder_of(PUBLIC)
        skipped = (
            f"no {public}/ predictions uploaded (optional): nothing to score on the public "
            f"split; add {public}/CASE/ files to see public scores first"
        )
    if skipped:
        result = StageResult(Stage.QUIZ, StageStatus.SKIPPED, skipped, skipped)
        runner.finish(result)
        return result
    references = job.task.public_inputs.parent
    target = _target(job, PUBLIC, references, job.folder.score_errors)

    def body(_: CaseSink) -> StageResult:
        problem = _format_problem(job, PUBLIC)
        if problem is not None:
            return StageResult(
                Stage.QUIZ, StageStatus.FAILED, problem, "quiz failed", failure=Failure.ENTRY
            )
        with captured_warnings() as caught:  # this scenario's notes only (others run at once)
            try:
                scored = job.scorer.score(target.outputs, references, target.cases, target.template)
            except OutputError as err:
                problem = f"{job.driver.folder_of(PUBLIC)}: {err}"
                return StageResult(
                    Stage.QUIZ, StageStatus.FAILED, problem, "quiz failed", failure=Failure.ENTRY
                )
            except Exception:
                return _scorer_failed(job, target)
        if target.scoring_log is not None:
            keep_scoring_log(target.scoring_log, f"task {job.task.name} (quiz): scored", scored.log)
        message = f"{job.driver.folder_of(PUBLIC)}: {_summary(job.task, scored)}"
        notes = [_relative(str(note), job.entry_root, references) for note in caught]
        if notes:
            shown = "; ".join(dict.fromkeys(notes[:MAX_WARNINGS]))
            message += f" ({plural(len(notes), 'warning')}: {shown})"
        return StageResult(Stage.QUIZ, StageStatus.PASSED, message, message)

    return runner.run(Stage.QUIZ, body, cases=len(target.cases))


def _scorer_failed(job: FilesJob, target: ScoreTarget) -> StageResult:
    """The quiz's scorer (or its public references) failed: the organizers' fault."""
    log_scorer_failure(target.errors_log, target.scoring_log, f"task {job.task.name} (quiz)")
    message = (
        f"scoring the {job.driver.folder_of(PUBLIC)} predictions failed with an internal error "
        f"({SCORE_ERROR_CODE}); your entry is not at fault and the organizers have the details"
    )
    return StageResult(Stage.QUIZ, StageStatus.FAILED, message, message, failure=Failure.SCORER)


def _summary(task: Task, scored: TaskScores) -> str:
    """The public split's scores (counts left out: the line stays short), or why none."""
    declaration = task.scorer_declaration
    if not scored.summary:
        return "not scored (no public references)"
    return ", ".join(
        f"{name} {scored.summary[name]:.6g}"
        for name in task.reported_metrics
        if name in scored.summary and declaration.metric(name).rankable
    )


def _relative(message: str, entry_root: Path, references: Path) -> str:
    """A reader's warning naming files from the upload's (or the split's) root, not the host's."""
    return message.replace(f"{entry_root}/", "").replace(f"{references}/", "")


def score(job: FilesJob, runner: StageRunner) -> ShownScores | None:
    """Check the hidden split's predictions, then score them against the hidden references."""
    references = job.task.hidden_references
    if references is None or job.task.hidden_inputs is None:
        raise ValueError(f"task {job.task.name!r} has no hidden data to score")
    target = _target(job, HIDDEN, references, job.folder.score_errors)
    scored = run_scorer(target, runner)
    if scored is None:
        return None
    keep_organizer_files(job.folder, job.task.name, scored)
    policy = runner.policy
    level = disclosure_level(policy, Stage.SCORE)
    shown = shown_scores(scored, job.task.reported_metrics, level, policy.per_record)
    return dataclasses.replace(shown, full=full_scores(scored))
