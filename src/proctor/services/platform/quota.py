"""The phase rules a submission must pass: open and closing times, and the team's quota.

Refusals are ``RefusedError`` with the time the next submission is allowed. Submissions that
failed through no fault of the entry (``platform``; ``infrastructure`` once refunded) and
cancelled ones never count.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from proctor.errors import RefusedError
from proctor.spec import Phase
from proctor.store.models import Job, SubmissionRow
from proctor.types import Failure, JobState

DAY_S = 86400.0


def iso(at: float) -> str:
    """``at`` (epoch seconds) as ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def check_open(phase: Phase, now: float) -> None:
    """Refuse when ``phase`` is not open at ``now``, saying when it opens or closed."""
    moment = datetime.fromtimestamp(now, UTC)
    if phase.opens is not None and moment < phase.opens:
        raise RefusedError(
            f"phase {phase.name!r} opens at {phase.opens.isoformat()}: submit after that"
        )
    if phase.closes is not None and moment >= phase.closes:
        raise RefusedError(
            f"phase {phase.name!r} closed at {phase.closes.isoformat()}: no more submissions"
        )


@dataclass(frozen=True, slots=True)
class _Past:
    created: float
    active: bool


def _counted(session: Session, team_id: int, challenge: str, phase: str) -> list[_Past]:
    """The team's earlier submissions in the phase that count against its quota."""
    rows = session.execute(
        select(
            SubmissionRow.id, SubmissionRow.created, SubmissionRow.refunded, Job.state, Job.failure
        )
        .join(Job, Job.submission_id == SubmissionRow.id)
        .where(
            SubmissionRow.team_id == team_id,
            SubmissionRow.challenge == challenge,
            SubmissionRow.phase == phase,
            SubmissionRow.cancelled.is_(False),
        )
    ).all()
    by_id: dict[str, tuple[float, bool, bool]] = {}
    for sid, created, refunded, state, failure in rows:
        _, active, free = by_id.get(sid, (created, False, refunded))
        active = active or state in (JobState.QUEUED, JobState.RUNNING)
        free = free or failure == Failure.PLATFORM
        by_id[sid] = (created, active, free)
    return [_Past(c, a) for c, a, free in by_id.values() if not free]


def check_quota(session: Session, phase: Phase, team_id: int, challenge: str, now: float) -> None:
    """Refuse a submission the phase's quota does not allow now, saying when it will."""
    quota = phase.quota
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
