"""Scoring a phase's jobs again, and storing the new scores: the parts of a rescore.

Each scored job's kept outputs (the exam's, in its run artifact; a predictions upload,
itself) are scored again by ``pipeline.rescore`` with the newest installed version. Storing
makes the new scores the job's current ones and a new ``score_versions`` row (the job's first
scores kept as version 1) and updates the participant's report through the same disclosure
rules. A job whose scoring failed (failure ``scorer``: the organizer's program crashed) is
scored again too, and becomes scored once the fixed scorer succeeds. No entry runs again.

``job_states`` fingerprints what a rescore read of each job (its result and current scores),
so a rescore computed earlier is applied only to the state it was computed from.
"""

from __future__ import annotations

import hashlib
import json
import math
import tarfile
import tempfile
import time
from collections.abc import Sequence
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
from proctor.services.platform.answers import BoardPlace, MetricChange, RankChange
from proctor.services.platform.board_entries import stored_entries
from proctor.services.platform.resources import Platform
from proctor.services.platform.standings import compute
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
class Kept:
    """A scored job and where its outputs are kept."""

    job_id: int
    submission: str
    team: str
    task: str
    run_artifact: str | None
    upload: str
    bundle_version: int


def scored_jobs(session: Session, challenge: Challenge, phase: Phase) -> list[Kept]:
    """The phase's jobs a rescore scores again (scored, or failed by the scorer), oldest first."""
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
        Kept(job.id, sub.id, team, job.task, artifact, sub.upload_sha256, bundle)
        for job, sub, team, artifact, bundle in rows
        if job.task in phase.tasks
    ]


def job_states(session: Session, kept: Sequence[Kept]) -> dict[str, str]:
    """Job id (as text) → a digest of its result and current scores, as stored now."""
    ids = [job.job_id for job in kept]
    found: dict[int, list[Any]] = {job_id: [] for job_id in ids}
    for job_id, result_id, status in session.execute(
        select(Result.job_id, Result.id, Result.status).where(Result.job_id.in_(ids))
    ):
        found[job_id].append([result_id, status])
    for job_id, metric, value in session.execute(
        select(Score.job_id, Score.metric, Score.value)
        .where(Score.job_id.in_(ids))
        .order_by(Score.job_id, Score.metric)
    ):
        found[job_id].append([metric, _finite(value)])
    return {
        str(job_id): hashlib.sha256(json.dumps(state).encode()).hexdigest()[:32]
        for job_id, state in found.items()
    }


def score_again(platform: Platform, challenge: Challenge, job: Kept) -> TaskScores:
    """The job's kept outputs scored by the challenge's scorer (its exception when it fails)."""
    with tempfile.TemporaryDirectory(prefix="proctor-rescore-") as scratch:
        Path(scratch).chmod(0o711)  # a scoring program's slot reaches its staged inputs
        outputs = _outputs(platform, challenge, job, Path(scratch))
        runner = scoring_program_runner(
            challenge, job.task, platform.host, Path(scratch) / "program"
        )
        return rescore_task(challenge, job.task, outputs, runner)


def _outputs(platform: Platform, challenge: Challenge, job: Kept, scratch: Path) -> Path:
    """The job's kept outputs, unpacked under ``scratch`` (``LookupError`` when not kept)."""
    if issubclass(driver_for(challenge.protocol.kind), FilesDriver):
        upload = platform.artifacts.copy_to(job.upload, scratch / "upload")
        limits = ArchiveLimits(max_files=challenge.limits.entry_files)
        names = driver_for(challenge.protocol.kind).manifest(challenge.protocol).root_names()
        return unpack_entry(upload, scratch / "entry", limits=limits, root_names=names)
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


Scores = tuple[dict[str, float | None], dict[str, dict[str, float | None]]]
"""A job's summary (metric → value) and per-case values (case → metric → value)."""


def store(
    session: Session,
    challenge: Challenge,
    phase: Phase,
    job: Kept,
    scored: TaskScores,
    *,
    version: int,
) -> Scores:
    """Make ``scored`` the job's current scores (the old kept as a version); the old ones.

    ``version``: the installed bundle version whose scorer computed ``scored``.
    """
    old = _current_scores(session, job.job_id)
    _store(session, job, scored, old, version)
    _update_report(session, challenge, phase, job, scored)
    return old


def changes(
    challenge: Challenge, job: Kept, old: Scores, scored: TaskScores
) -> dict[str, MetricChange]:
    """Each reported metric whose value changed, old and new."""
    reported = challenge.task(job.task).reported_metrics
    return {
        metric: MetricChange(
            old=_finite(old[0].get(metric)), new=_finite(scored.summary.get(metric))
        )
        for metric in reported
        if _finite(old[0].get(metric)) != _finite(scored.summary.get(metric))
    }


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


def _store(session: Session, job: Kept, scored: TaskScores, old: Scores, version: int) -> None:
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
    session.flush()


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
    session: Session, challenge: Challenge, phase: Phase, job: Kept, scored: TaskScores
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
    session.flush()


def _mark_scored(report: dict[str, Any]) -> None:
    """A report whose score stage failed (the scorer's fault), as scored by a rescore."""
    report["status"], report["failure"], report["failed_stage"] = "scored", None, None
    for stage in report["stages"]:
        if stage.get("stage") == Stage.SCORE:
            stage["status"] = "passed"
            stage["message"] = "scored again by the organizers' fixed scorer"


Ranks = dict[str, tuple[str, float]]
"""Team → (the submission its row shows, its rank) on a phase's default board."""


def ranks(session: Session, challenge: Challenge, phase: Phase) -> Ranks:
    """Each team's row on the phase's default board (organizer view) as ``session`` sees it."""
    boards = {b.name: b for b in phase_boards(challenge, phase.name)}
    if DEFAULT_BOARD not in boards:
        return {}
    entries = stored_entries(session, challenge, phase)
    board = compute(challenge, phase, boards[DEFAULT_BOARD], entries, intervals=False)
    return {row.team: (row.submission, row.rank) for row in board.rows}


def rank_changes(before: Ranks, after: Ranks) -> list[RankChange]:
    """Teams whose row on the default board moved (rank or shown submission)."""
    moved = []
    for team in sorted(set(before) | set(after)):
        old, new = before.get(team), after.get(team)
        if old != new:
            moved.append(
                RankChange(
                    team=team,
                    old=None if old is None else BoardPlace(submission=old[0], rank=old[1]),
                    new=None if new is None else BoardPlace(submission=new[0], rank=new[1]),
                )
            )
    return moved
