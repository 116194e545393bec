"""Every submission of a challenge for the organizer: filtered, paged, with its scores.

Each listed submission carries ``submission``, ``team``, ``phase``, ``created``, ``status``,
``failure``, ``scores`` (task → metric → value, NaN as null, a count an integer) and
``fields`` (every ``submission_fields`` value, the private ones too: the organizers read
them). The status is the organizer's (no participant's cut): ``cancelled``, ``running`` or
``queued`` while a job is, else ``failed`` when a job failed, else ``scored``. Three
queries per page whatever the number of teams: the submissions, their jobs with results,
their scores.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from proctor.errors import UsageError
from proctor.services.platform import submission_fields
from proctor.services.platform.accounts import Principal
from proctor.services.platform.answers import ListedSubmission, SubmissionList
from proctor.services.platform.console import organizers_only
from proctor.services.platform.installs import current
from proctor.services.platform.quota import iso
from proctor.services.platform.resources import Platform
from proctor.spec.scorer import whole_counts
from proctor.store.models import Job, Result, Score, SubmissionRow, Team
from proctor.types import JobState

MAX_PER_PAGE = 500
STATUSES = ("queued", "running", "scored", "failed", "cancelled")


@dataclass(frozen=True, slots=True)
class Filters:
    """Which submissions to list (None: any) and which page of them."""

    phase: str | None = None
    team: str | None = None
    status: str | None = None
    failure: str | None = None
    page: int = 1
    per_page: int = 100

    def check(self) -> None:
        """Refuse a status no submission can have, or a page out of range."""
        if self.status is not None and self.status not in STATUSES:
            raise UsageError(f"status {self.status!r} is unknown: use one of {', '.join(STATUSES)}")
        if self.page < 1 or not 1 <= self.per_page <= MAX_PER_PAGE:
            raise UsageError(f"page starts at 1 and per_page is 1 to {MAX_PER_PAGE}")


def organizer_state(
    row: SubmissionRow, jobs: list[tuple[Job, Result | None]]
) -> tuple[str, str | None]:
    """The submission's status and failure as the organizer sees them (module docstring)."""
    failure = next((job.failure for job, _ in jobs if job.failure), None)
    states = {job.state for job, _ in jobs}
    if row.cancelled:
        return "cancelled", failure
    for live in (JobState.RUNNING, JobState.QUEUED):
        if live in states:
            return str(live), None
    results = [result.status for _, result in jobs if result is not None]
    if JobState.FAILED in states or any(status != "scored" for status in results):
        return "failed", failure
    return "scored", None


def jobs_of(session: Session, ids: list[str]) -> dict[str, list[tuple[Job, Result | None]]]:
    """Each submission's jobs with their results (oldest job first), in one query."""
    found: dict[str, list[tuple[Job, Result | None]]] = defaultdict(list)
    for job, result in session.execute(
        select(Job, Result)
        .outerjoin(Result, Result.job_id == Job.id)
        .where(Job.submission_id.in_(ids))
        .order_by(Job.id)
    ).all():
        found[job.submission_id].append((job, result))
    return found


def _number(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


Listed = tuple[SubmissionRow, str, str, str | None]
"""A listed submission: its row, its team, its organizer status and failure."""


def challenge_submissions(
    platform: Platform, principal: Principal, challenge_name: str, filters: Filters
) -> SubmissionList:
    """One page of the challenge's submissions, newest first (organizers).

    ``total`` counts every submission matching the filters.
    """
    organizers_only(principal)
    filters.check()
    _, challenge = current(platform, challenge_name)
    counts = {task.name: task.scorer_declaration.count_metrics for task in challenge.tasks}
    with platform.db() as session:
        listed, jobs = _matching(session, challenge_name, filters)
        start = (filters.page - 1) * filters.per_page
        shown = listed[start : start + filters.per_page]
        scores = _scores(session, [job for row, *_ in shown for job, _ in jobs[row.id]])
    return SubmissionList(
        challenge=challenge_name,
        total=len(listed),
        page=filters.page,
        per_page=filters.per_page,
        submissions=[_listed(each, jobs[each[0].id], scores, counts) for each in shown],
    )


def _matching(
    session: Session, challenge_name: str, filters: Filters
) -> tuple[list[Listed], dict[str, list[tuple[Job, Result | None]]]]:
    """The submissions the filters keep, newest first, and every listed one's jobs."""
    query = (
        select(SubmissionRow, Team.name)
        .join(Team, Team.id == SubmissionRow.team_id)
        .where(SubmissionRow.challenge == challenge_name)
    )
    if filters.phase is not None:
        query = query.where(SubmissionRow.phase == filters.phase)
    if filters.team is not None:
        query = query.where(Team.name == filters.team)
    rows = session.execute(query.order_by(SubmissionRow.created.desc(), SubmissionRow.id)).all()
    jobs = jobs_of(session, [row.id for row, _ in rows])
    listed = []
    for row, team in rows:
        status, failure = organizer_state(row, jobs[row.id])
        if filters.status in (None, status) and filters.failure in (None, failure):
            listed.append((row, team, status, failure))
    return listed, jobs


def _listed(
    listed: Listed,
    jobs: list[tuple[Job, Result | None]],
    scores: dict[int, dict[str, float | None]],
    counts: dict[str, frozenset[str]],
) -> ListedSubmission:
    """One submission of the list, each count (``MetricDeclaration.count``) an integer."""
    row, team, status, failure = listed
    return ListedSubmission(
        submission=row.id,
        team=team,
        phase=row.phase,
        created=iso(row.created),
        status=status,
        failure=failure,
        flagged=row.flagged,
        refunded=row.refunded,
        scores={
            job.task: whole_counts(scores[job.id], counts.get(job.task, frozenset()))
            for job, _ in jobs
            if job.id in scores
        },
        fields=submission_fields.stored(row.fields),
    )


def _scores(session: Session, jobs: list[Job]) -> dict[int, dict[str, float | None]]:
    """Each job's current summary scores (job id → metric → value)."""
    found: dict[int, dict[str, float | None]] = defaultdict(dict)
    ids = [job.id for job in jobs]
    for score in session.scalars(select(Score).where(Score.job_id.in_(ids))):
        found[score.job_id][score.metric] = _number(score.value)
    return found
