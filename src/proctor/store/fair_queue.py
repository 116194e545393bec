"""Which queued job a free worker takes next: round robin between teams, a per-team cap.

The order, for every executor (``jobs.claim`` calls :func:`next_job` inside its transaction):

1. only teams with fewer running jobs than the cap (``team_cap``; 0 = no cap) are served;
2. the team with the fewest jobs running goes first, so a team with nothing running gets the
   next free worker before a team that already has jobs running;
3. among those, the team whose last job started longest ago (``queue_turns``), so teams take
   turns (round robin) however many jobs each queued;
4. then the team with the oldest queued job; inside a team, its jobs go oldest first.

Claims run one at a time (:func:`lock_queue`: PostgreSQL's transaction-scoped advisory lock,
one per schema, SQLite's write lock), so two claimers never both see a team under its cap and
both take a job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Select, func, select, text, true, update
from sqlalchemy.orm import Session

from proctor.store.db import SCHEMA_KEY
from proctor.store.models import Job, QueueTurn, SubmissionRow
from proctor.types import JobState

QUEUE_LOCK = 0x70726F63  # "proc": the advisory lock key of the job queue on PostgreSQL


@dataclass(frozen=True, slots=True)
class Scope:
    """The challenges a claimer serves: ``only`` these (None: all), none of ``excluding``.

    A broker queue serves the challenges routed to it (``PROCTOR_QUEUE_ROUTES``); the default
    queue serves every challenge not routed elsewhere.
    """

    only: frozenset[str] | None = None
    excluding: frozenset[str] = frozenset()

    def condition(self) -> ColumnElement[bool]:
        """The SQL condition on ``SubmissionRow.challenge`` for this scope."""
        condition: ColumnElement[bool] = true()
        if self.only is not None:
            condition = SubmissionRow.challenge.in_(sorted(self.only))
        if self.excluding:
            condition = condition & SubmissionRow.challenge.not_in(sorted(self.excluding))
        return condition


EVERYTHING = Scope()


def lock_queue(session: Session) -> None:
    """Make the rest of the transaction the only claim running (released at its end)."""
    if session.get_bind().dialect.name == "postgresql":
        lock = text(f"SELECT pg_advisory_xact_lock(:key, {SCHEMA_KEY})")
        session.execute(lock, {"key": QUEUE_LOCK})
    else:
        # an UPDATE takes SQLite's write lock even when it matches no row; held to the commit
        session.execute(update(Job).where(Job.id == -1).values(stage=None))


def _queued(scope: Scope) -> Select[int, float]:
    return (
        select(SubmissionRow.team_id, func.min(Job.queued_at))
        .select_from(Job)
        .join(SubmissionRow, SubmissionRow.id == Job.submission_id)
        .where(Job.state == JobState.QUEUED, scope.condition())
        .group_by(SubmissionRow.team_id)
    )


def _running(session: Session) -> dict[int, int]:
    rows = session.execute(
        select(SubmissionRow.team_id, func.count())
        .select_from(Job)
        .join(SubmissionRow, SubmissionRow.id == Job.submission_id)
        .where(Job.state == JobState.RUNNING)
        .group_by(SubmissionRow.team_id)
    ).all()
    return {team: int(count) for team, count in rows}


def _turns(session: Session, teams: Sequence[int]) -> dict[int, float]:
    rows = session.execute(
        select(QueueTurn.team_id, QueueTurn.last_claim).where(QueueTurn.team_id.in_(teams))
    ).all()
    return {team: last for team, last in rows}


def next_job(session: Session, scope: Scope, team_cap: int) -> int | None:
    """The id of the job a free worker of ``scope`` takes now; None if no team may run one."""
    oldest = {team: first for team, first in session.execute(_queued(scope)).all()}
    running = _running(session)
    eligible = [t for t in oldest if team_cap <= 0 or running.get(t, 0) < team_cap]
    if not eligible:
        return None
    turns = _turns(session, eligible)
    team = min(
        eligible, key=lambda t: (running.get(t, 0), turns.get(t, float("-inf")), oldest[t], t)
    )
    return session.scalar(
        select(Job.id)
        .select_from(Job)
        .join(SubmissionRow, SubmissionRow.id == Job.submission_id)
        .where(Job.state == JobState.QUEUED, SubmissionRow.team_id == team, scope.condition())
        .order_by(Job.queued_at, Job.id)
        .limit(1)
    )


def record_turn(session: Session, job_id: int, at: float) -> None:
    """Note that the team of job ``job_id`` was served at ``at`` (under :func:`lock_queue`)."""
    team = session.scalar(
        select(SubmissionRow.team_id)
        .join(Job, Job.submission_id == SubmissionRow.id)
        .where(Job.id == job_id)
    )
    if team is None:
        return
    turn = session.get(QueueTurn, team)
    if turn is None:
        session.add(QueueTurn(team_id=team, last_claim=at))
    else:
        turn.last_claim = at


def queue_position(session: Session, job: Job) -> int:
    """About how many queued jobs a free worker takes before ``job`` (0 = next).

    Teams take turns: a job that is its team's k-th in line waits for the team's k earlier
    jobs and, from every other team, up to k of theirs (k + 1 from a team whose oldest job is
    older). Jobs queued later by teams with fewer waiting may still go first.
    """
    team = session.scalar(
        select(SubmissionRow.team_id).where(SubmissionRow.id == job.submission_id)
    )
    waiting = session.execute(
        select(SubmissionRow.team_id, Job.queued_at, Job.id)
        .select_from(Job)
        .join(SubmissionRow, SubmissionRow.id == Job.submission_id)
        .where(Job.state == JobState.QUEUED)
    ).all()
    lines: dict[int, list[tuple[float, int]]] = {}
    for owner, queued_at, job_id in waiting:
        lines.setdefault(owner, []).append((queued_at, job_id))
    own = sorted(lines.get(team, []) if team is not None else [])
    mine = (job.queued_at, job.id)
    turn = sum(1 for entry in own if entry < mine)
    ahead = turn
    for owner, line in lines.items():
        if owner == team:
            continue
        first = min(line)
        ahead += min(len(line), turn + (1 if first < (own[0] if own else mine) else 0))
    return ahead
