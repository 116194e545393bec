"""A team's quota in a phase: which submissions count against it, and what it allows now.

Refusals are ``RefusedError`` with the time the next submission is allowed (``check_quota``);
``allowance`` gives the same rules as numbers. A team's override (``TeamQuota``) replaces
each limit it sets. When a phase is open is ``phase_times``.

Whether a submission counts against its team's quota decides whether any of its results
shows. One rule (``counts``) serves the quota, ``status``, the boards and publications, so a
participant can never get a scored result that cost nothing:

* a submission counts once any of its jobs started a stage on hidden data (exam, rerun, score:
  ``Job.hidden_started``), cancelled or not;
* a cancelled submission none of whose jobs reached hidden data is free;
* a submission the platform provably failed is free: a task failed ``platform`` (raised only
  for faults the entry cannot cause, such as the harness's status before the budget clock
  started) before that job reached hidden data;
* a refunded submission is free: a lost worker (``infrastructure``) or a ``platform`` failure
  after the job reached hidden data, the team's first per phase at once (``store.jobs``), later
  ones by an organizer who looked at it;
* every other submission counts.

Nothing scored of a free submission is shown: no report for a cancelled one, only the platform's
or infrastructure's failures for a refunded or platform-failed one, and it is on no board.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import ColumnElement, and_, exists, select
from sqlalchemy.orm import Session, aliased

from proctor.errors import RefusedError
from proctor.spec import Phase
from proctor.spec.model import Quota
from proctor.store.models import Job, SubmissionRow, TeamQuota
from proctor.types import Failure, JobState
from proctor.wording import plural

WITHHELD = (
    "this submission does not count against your team's quota ({why}): the results of its "
    "other tasks are withheld; submit again"
)


@dataclass(frozen=True, slots=True)
class JobFacts:
    """What the rule needs of one job: how it failed and whether it reached hidden data."""

    failure: str | None
    hidden_started: float | None


def counts(*, cancelled: bool, refunded: bool, jobs: Iterable[JobFacts]) -> bool:
    """True when a submission with these jobs counts against its team's quota."""
    facts = list(jobs)
    if refunded or any(_platform_before_hidden(job) for job in facts):
        return False
    if cancelled:
        return any(job.hidden_started is not None for job in facts)
    return True


def _platform_before_hidden(job: JobFacts) -> bool:
    """True for a job the platform failed before it reached hidden data."""
    return job.failure == Failure.PLATFORM and job.hidden_started is None


def facts_of(jobs: Iterable[Job]) -> list[JobFacts]:
    """The rule's view of stored jobs."""
    return [JobFacts(job.failure, job.hidden_started) for job in jobs]


def submission_counts(session: Session, row: SubmissionRow) -> bool:
    """True when stored submission ``row`` counts against its team's quota."""
    jobs = session.scalars(select(Job).where(Job.submission_id == row.id))
    return counts(cancelled=row.cancelled, refunded=row.refunded, jobs=facts_of(jobs))


def why_free(row: SubmissionRow) -> str:
    """The reason a free submission that was not cancelled is free, for its report."""
    return "it was refunded" if row.refunded else "the platform failed before hidden data"


def shows_results() -> ColumnElement[bool]:
    """SQL: the submission (``SubmissionRow``) may show scored results on a board.

    Not cancelled (a cancelled submission is on no board, counted or not), not refunded, and no
    job of it failed ``platform`` before it reached hidden data.
    """
    other = aliased(Job)
    platform_failed = exists(
        select(other.id).where(
            other.submission_id == SubmissionRow.id,
            other.failure == Failure.PLATFORM,
            other.hidden_started.is_(None),
        )
    )
    return and_(
        SubmissionRow.cancelled.is_(False), SubmissionRow.refunded.is_(False), ~platform_failed
    )


DAY_S = 86400.0


def iso(at: float) -> str:
    """``at`` (epoch seconds) as ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


QUOTA_LIMITS = ("per_day", "every_days", "total", "concurrent")


def team_quota(session: Session, quota: Quota | None, team_id: int) -> Quota | None:
    """The phase's ``quota`` with the team's override (each limit it sets) applied."""
    override = session.get(TeamQuota, team_id)
    if override is None:
        return quota
    limits = quota.model_dump() if quota is not None else {}
    for name in QUOTA_LIMITS:
        value = getattr(override, name)
        if value is not None:
            limits[name] = value
    return Quota(**limits)


@dataclass(frozen=True, slots=True)
class _Past:
    created: float
    active: bool


def _counted(session: Session, team_id: int, challenge: str, phase: str) -> list[_Past]:
    """The team's earlier submissions in the phase that count against its quota.

    Which count is ``counts``: a cancelled one does once a job of it reached hidden data.
    """
    rows = session.execute(
        select(SubmissionRow, Job.state, Job.failure, Job.hidden_started)
        .join(Job, Job.submission_id == SubmissionRow.id)
        .where(
            SubmissionRow.team_id == team_id,
            SubmissionRow.challenge == challenge,
            SubmissionRow.phase == phase,
        )
    ).all()
    by_id: dict[str, tuple[SubmissionRow, list[str], list[JobFacts]]] = {}
    for row, state, failure, hidden_started in rows:
        _, states, facts = by_id.setdefault(row.id, (row, [], []))
        states.append(state)
        facts.append(JobFacts(failure, hidden_started))
    return [
        _Past(row.created, any(s in (JobState.QUEUED, JobState.RUNNING) for s in states))
        for row, states, facts in by_id.values()
        if counts(cancelled=row.cancelled, refunded=row.refunded, jobs=facts)
    ]


def check_quota(session: Session, phase: Phase, team_id: int, challenge: str, now: float) -> None:
    """Refuse a submission the phase's quota does not allow now, saying when it will.

    A team's quota override (``TeamQuota``) replaces each limit it sets.
    """
    quota = team_quota(session, phase.quota, team_id)
    if quota is None:
        return
    past = _counted(session, team_id, challenge, phase.name)
    if quota.concurrent is not None:
        active = sum(1 for p in past if p.active)
        if active >= quota.concurrent:
            raise RefusedError(
                f"your team has {plural(active, 'submission')} queued or running, the most phase "
                f"{phase.name!r} allows at once: submit again when one has finished"
            )
    if quota.total is not None and len(past) >= quota.total:
        raise RefusedError(
            f"your team has used all {quota.total} submissions of phase {phase.name!r}"
        )
    if quota.per_day is not None:
        window = sorted(p.created for p in past if p.created > now - DAY_S)
        if len(window) >= quota.per_day:
            allowed = window[-quota.per_day] + DAY_S
            raise RefusedError(
                f"your team has made {plural(quota.per_day, 'submission')} in the last 24 "
                f"hours, the "
                f"most phase {phase.name!r} allows: the next is allowed at {iso(allowed)}"
            )
    if quota.every_days is not None and past:
        allowed = max(p.created for p in past) + quota.every_days * DAY_S
        if now < allowed:
            raise RefusedError(
                f"phase {phase.name!r} takes one submission every {quota.every_days:g} days: "
                f"your team's next is allowed at {iso(allowed)}"
            )


@dataclass(frozen=True, slots=True)
class Allowance:
    """How much of a phase's quota a team has used, and when it may submit next.

    ``used_today``: counted submissions of the last 24 hours; ``used``: of the whole phase;
    ``active``: queued or running. ``next_at``: when the next submission is allowed (ISO 8601
    UTC), None when one is allowed now; ``exhausted``: the phase's total is used up.
    ``left_today`` and ``left_in_phase``: what is left of the daily and the phase's quota
    (None: no such limit).
    """

    phase: str
    per_day: int | None
    used_today: int
    total: int | None
    used: int
    concurrent: int | None
    active: int
    next_at: str | None
    exhausted: bool

    @property
    def left_today(self) -> int | None:
        """Submissions left in the last 24 hours' window (None: no daily limit)."""
        return None if self.per_day is None else max(0, self.per_day - self.used_today)

    @property
    def left_in_phase(self) -> int | None:
        """Submissions left in the phase (None: no limit on the phase's total)."""
        return None if self.total is None else max(0, self.total - self.used)

    def words(self) -> str:
        """What is left, as a participant reads it: ``6 left today, 22 left in the phase``."""
        parts = []
        if self.left_today is not None:
            parts.append(f"{self.left_today} left today")
        if self.left_in_phase is not None:
            parts.append(f"{self.left_in_phase} left in the phase")
        if self.concurrent is not None:
            parts.append(f"{self.active} of {self.concurrent} running at once")
        return ", ".join(parts) if parts else "no limit"


def allowance(
    session: Session, phase: Phase, team_id: int, challenge: str, now: float
) -> Allowance:
    """What ``check_quota`` would allow the team now, as numbers (the same rules)."""
    quota = phase.quota
    past = _counted(session, team_id, challenge, phase.name)
    window = sorted(p.created for p in past if p.created > now - DAY_S)
    waits: list[float] = []
    if quota is not None and quota.per_day is not None and len(window) >= quota.per_day:
        waits.append(window[-quota.per_day] + DAY_S)
    if quota is not None and quota.every_days is not None and past:
        allowed = max(p.created for p in past) + quota.every_days * DAY_S
        if now < allowed:
            waits.append(allowed)
    return Allowance(
        phase=phase.name,
        per_day=quota.per_day if quota else None,
        used_today=len(window),
        total=quota.total if quota else None,
        used=len(past),
        concurrent=quota.concurrent if quota else None,
        active=sum(1 for p in past if p.active),
        next_at=iso(max(waits)) if waits else None,
        exhausted=bool(quota and quota.total is not None and len(past) >= quota.total),
    )
