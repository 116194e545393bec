"""Rescore a phase: score every scored submission again with the installed scorer version.

After ``proctor challenge add`` installed an updated bundle (a fixed metric, corrected
references), an organizer rescores a phase: each scored job's kept outputs (the exam's, in
its run artifact; a predictions upload, itself) are scored again by ``pipeline.rescore`` with
the newest installed version. The new scores become the job's current ones and a new
``score_versions`` row; the job's first scores are kept as version 1. No entry runs again.

A job whose scoring failed (failure ``scorer``: the organizer's program crashed) is scored
again too, from the same kept outputs; it becomes scored once the fixed scorer succeeds.

The answer says what changed: per submission and task, each metric ``old → new``, a job that
could not be rescored (outputs not kept, scorer error) with the reason, and the rank changes
on the phase's ``default`` board.
"""

from __future__ import annotations

import json
import math
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, or_, select
from sqlalchemy.orm import Session

from proctor.entries import ArchiveLimits, unpack_entry
from proctor.executor.run import EXAM_OUTPUTS
from proctor.pipeline.rescore import rescore_task
from proctor.pipeline.runner import disclosure_level
from proctor.pipeline.score import ZERO_FILLED, shown_scores
from proctor.protocols.base import FilesDriver
from proctor.protocols.registry import driver_for
from proctor.scoring.base import TaskScores
from proctor.services.local.environments import scoring_program_runner
from proctor.services.platform.accounts import Principal
from proctor.services.platform.board_entries import stored_entries
from proctor.services.platform.console import organizers_only
from proctor.services.platform.installs import current
from proctor.services.platform.resources import Platform
from proctor.services.platform.standings import compute, phase_of
from proctor.spec import Challenge, Phase
from proctor.spec.leaderboards import DEFAULT_BOARD, phase_boards
from proctor.store.models import (
    CaseResult,
    ChallengeVersion,
    Job,
    Result,
    Score,
    ScoreVersion,
    SubmissionRow,
    Team,
)
from proctor.types import Disclosure, Failure, JobState, RunStatus, Stage


@dataclass(frozen=True, slots=True)
class _Kept:
    """A scored job and where its outputs are kept."""

    job_id: int
    submission: str
    team: str
    task: str
    run_artifact: str | None
    upload: str
    bundle_version: int


def rescore(
    platform: Platform, principal: Principal, challenge_name: str, phase_name: str | None
) -> dict[str, Any]:
    """Rescore every scored job of the phase (organizers); the changes, as JSON."""
    organizers_only(principal)
    version, challenge = current(platform, challenge_name)
    phase = phase_of(challenge, phase_name)
    before = _ranks(platform, challenge, phase)
    with platform.db() as session:
        kept = _scored_jobs(session, challenge, phase)
    changes = [_rescore_job(platform, challenge, phase, job, version.version) for job in kept]
    after = _ranks(platform, challenge, phase)
    platform.audit(
        principal.name, "rescore", f"{challenge.name}/{phase.name}", f"v{version.version}"
    )
    return {
        "challenge": challenge.name,
        "phase": phase.name,
        "challenge_version": version.version,
        "rescored": sum(1 for c in changes if c["error"] is None),
        "changed": sum(1 for c in changes if c["changes"]),
        "jobs": changes,
        "rank_changes": _rank_changes(before, after),
    }


def _scored_jobs(session: Session, challenge: Challenge, phase: Phase) -> list[_Kept]:
    rows = session.execute(
        select(Job, SubmissionRow, Team.name, Result.run_artifact, ChallengeVersion.version)
        .join(SubmissionRow, SubmissionRow.id == Job.submission_id)
        .join(Team, Team.id == SubmissionRow.team_id)
        .join(Result, Result.job_id == Job.id)
        .join(ChallengeVersion, ChallengeVersion.id == SubmissionRow.challenge_id)
        .where(
            SubmissionRow.challenge == challenge.name,
            SubmissionRow.phase == phase.name,
            SubmissionRow.cancelled.is_(False),
            Job.state == JobState.DONE,
            or_(Result.status == "scored", Job.failure == str(Failure.SCORER)),
        )
        .order_by(SubmissionRow.created, Job.task)
    ).all()
    return [
        _Kept(job.id, sub.id, team, job.task, artifact, sub.upload_sha256, bundle)
        for job, sub, team, artifact, bundle in rows
        if job.task in phase.tasks
    ]


def _outputs(platform: Platform, challenge: Challenge, job: _Kept, scratch: Path) -> Path:
    """The job's kept outputs, unpacked under ``scratch`` (``LookupError`` when not kept)."""
    if issubclass(driver_for(challenge.protocol.kind), FilesDriver):
        upload = platform.artifacts.copy_to(job.upload, scratch / "upload")
        limits = ArchiveLimits(max_files=challenge.limits.entry_files)
        return unpack_entry(upload, scratch / "entry", limits=limits)
    if job.run_artifact is None or not platform.artifacts.has(job.run_artifact):
        raise LookupError("its run artifact is not kept")
    with tarfile.open(platform.artifacts.path(job.run_artifact), "r:gz") as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(f"{EXAM_OUTPUTS}/")]
        if not members and EXAM_OUTPUTS not in tar.getnames():
            raise LookupError("its exam outputs were not kept (scored before outputs were)")
        tar.extractall(scratch, members=members, filter="data")
    outputs = scratch / EXAM_OUTPUTS
    outputs.mkdir(parents=True, exist_ok=True)
    return outputs


def _rescore_job(
    platform: Platform, challenge: Challenge, phase: Phase, job: _Kept, version: int
) -> dict[str, Any]:
    """Score one job again and store the new version; its changes (or why it could not)."""
    answer: dict[str, Any] = {
        "submission": job.submission,
        "team": job.team,
        "task": job.task,
        "changes": {},
        "error": None,
    }
    with tempfile.TemporaryDirectory(prefix="proctor-rescore-") as scratch:
        Path(scratch).chmod(0o711)  # a scoring program's slot reaches its staged inputs
        try:
            outputs = _outputs(platform, challenge, job, Path(scratch))
            runner = scoring_program_runner(
                challenge, job.task, platform.host, Path(scratch) / "program"
            )
            scored = rescore_task(challenge, job.task, outputs, runner)
        except Exception as err:  # a scorer's failure is reported, the old scores stay
            answer["error"] = f"not rescored: {err}"
            return answer
    with platform.db.begin() as session:
        old = _current_scores(session, job.job_id)
        _store(session, job, scored, old, version)
        _update_report(session, challenge, phase, job, scored)
    reported = challenge.task(job.task).reported_metrics
    answer["changes"] = {
        metric: {"old": _finite(old[0].get(metric)), "new": _finite(scored.summary.get(metric))}
        for metric in reported
        if not _same(old[0].get(metric), scored.summary.get(metric))
    }
    return answer


Scores = tuple[dict[str, float | None], dict[str, dict[str, float | None]]]


def _current_scores(session: Session, job_id: int) -> Scores:
    summary = {
        metric: value
        for metric, value in session.execute(
            select(Score.metric, Score.value).where(Score.job_id == job_id)
        )
    }
    cases: dict[str, dict[str, float | None]] = {}
    for case, metric, value in session.execute(
        select(CaseResult.case, CaseResult.metric, CaseResult.value).where(
            CaseResult.job_id == job_id
        )
    ):
        cases.setdefault(case, {})[metric] = value
    return summary, cases


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _store(session: Session, job: _Kept, scored: TaskScores, old: Scores, version: int) -> None:
    """Keep the old scores as a version (the first time), then store the new ones."""
    held = session.scalar(
        select(func.max(ScoreVersion.version)).where(ScoreVersion.job_id == job.job_id)
    )
    now = time.time()
    if held is None:
        session.add(_version(job.job_id, 1, job.bundle_version, old[0], old[1], now))
        held = 1
    new_cases = {
        case: {m: _finite(v) for m, v in row.items()} for case, row in scored.per_record.items()
    }
    new_summary = {m: _finite(v) for m, v in scored.summary.items()}
    session.add(_version(job.job_id, held + 1, version, new_summary, new_cases, now))
    session.execute(delete(Score).where(Score.job_id == job.job_id))
    session.execute(delete(CaseResult).where(CaseResult.job_id == job.job_id))
    session.flush()
    session.add_all(Score(job_id=job.job_id, metric=m, value=v) for m, v in new_summary.items())
    session.add_all(
        CaseResult(job_id=job.job_id, case=case, metric=m, value=v)
        for case, row in new_cases.items()
        for m, v in row.items()
    )


def _version(  # noqa: PLR0917 - one row's columns
    job_id: int,
    number: int,
    bundle: int,
    summary: dict[str, float | None],
    cases: dict[str, dict[str, float | None]],
    now: float,
) -> ScoreVersion:
    return ScoreVersion(
        job_id=job_id,
        version=number,
        challenge_version=bundle,
        scores=json.dumps(summary, sort_keys=True),
        cases=json.dumps(cases, sort_keys=True),
        created=now,
    )


def _update_report(
    session: Session, challenge: Challenge, phase: Phase, job: _Kept, scored: TaskScores
) -> None:
    """The participant's report shows the new scores, cut to the phase's disclosure."""
    result = session.scalar(select(Result).where(Result.job_id == job.job_id))
    if result is None:
        return
    policy = challenge.disclosure_for(phase)
    exam_hidden = disclosure_level(policy, Stage.EXAM) is Disclosure.NONE
    task = challenge.task(job.task)
    wanted = tuple(
        m
        for m in task.reported_metrics
        if m in scored.summary and not (exam_hidden and m in ZERO_FILLED)
    )
    shown = shown_scores(scored, wanted, disclosure_level(policy, Stage.SCORE), policy.per_record)
    report = json.loads(result.report)
    report["scores"], report["per_record"] = shown.scores, shown.per_record
    if report.get("failure") == Failure.SCORER:  # a fixed scoring program: now scored
        _mark_scored(report)
        result.status = str(RunStatus.SCORED)
        held = session.get(Job, job.job_id)
        if held is not None:
            held.failure = None
    result.report = json.dumps(report)


def _mark_scored(report: dict[str, Any]) -> None:
    """A report whose score stage failed (the scorer's fault), as scored by a rescore."""
    report["status"], report["failure"], report["failed_stage"] = "scored", None, None
    for stage in report["stages"]:
        if stage.get("stage") == Stage.SCORE:
            stage["status"] = "passed"
            stage["message"] = "scored again by the organizers' fixed scorer"


def _same(old: float | None, new: float | None) -> bool:
    return _finite(old) == _finite(new)


def _ranks(platform: Platform, challenge: Challenge, phase: Phase) -> dict[str, tuple[str, float]]:
    """Team → (submission, rank) on the phase's default board (organizer view)."""
    boards = {b.name: b for b in phase_boards(challenge, phase.name)}
    if DEFAULT_BOARD not in boards:
        return {}
    with platform.db() as session:
        entries = stored_entries(session, challenge, phase)
    board = compute(challenge, phase, boards[DEFAULT_BOARD], entries, intervals=False)
    return {row.team: (row.submission, row.rank) for row in board.rows}


def _rank_changes(
    before: dict[str, tuple[str, float]], after: dict[str, tuple[str, float]]
) -> list[dict[str, Any]]:
    """Teams whose row on the default board moved (rank or shown submission)."""
    moved = []
    for team in sorted(set(before) | set(after)):
        old, new = before.get(team), after.get(team)
        if old != new:
            moved.append(
                {
                    "team": team,
                    "old": None if old is None else {"submission": old[0], "rank": old[1]},
                    "new": None if new is None else {"submission": new[0], "rank": new[1]},
                }
            )
    return moved
