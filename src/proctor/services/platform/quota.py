"""The phase rule a submission must pass: the team's quota (its open times: ``phase_times``).

Refusals are ``RefusedError`` with the time the next submission is allowed. Which earlier
submissions count is ``counting.counts``: every one that reached hidden data, cancelled or not,
unless refunded; one the platform failed before hidden data, or cancelled before it, does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from proctor.errors import RefusedError
from proctor.services.platform.counting import JobFacts, counts
from proctor.spec import Phase
from proctor.spec.model import Quota
from proctor.store.models import Job, SubmissionRow, TeamQuota
from proctor.types import JobState

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

    Which count is ``counting.counts``: a cancelled one does once a job of it reached hidden data.
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
                f"your team has {active} submission(s) queued or running, the most phase "
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
                f"your team has made {quota.per_day} submission(s) in the last 24 hours, the "
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
