"""Durable jobs: the job row is the source of truth; leases, heartbeats, commit, reaper, sweeper.

Every executor (the local pool, Celery workers) speaks only this API::

    lease = claim(db, worker, lease_s)            # the next job, fairly between teams
    heartbeat(db, lease, lease_s)  -> bool        # False: the lease is lost, stop the job
    set_stage(db, lease, "exam")
    commit(db, lease, outcome)     -> bool        # False: stale lease, nothing was written
    reap(db, max_attempts)         -> [Reaped]    # expired leases back to the queue, or failed
    sweep(db, send)                -> int         # queued jobs no broker has seen yet are sent
    reconcile(db, worker)          -> [job ids]   # a restarted worker's leftovers re-queued

Each call is one short transaction whose write is conditional on the row's state (and, for a
lease holder, on its token), so two workers can never both run or both commit one job: the
loser's ``UPDATE`` matches no row. A result is keyed by ``(job, attempt)`` and a job has at most
one. A job whose worker was lost ``max_attempts`` times ends ``failed`` with ``failure:
infrastructure`` and is flagged for the organizer, as is one that failed ``platform`` after it
reached hidden data; the first such refund per team and phase is automatic, later ones wait for
the organizer (an entry must not buy free reruns by killing its worker on purpose).
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, Update, and_, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from proctor.store.fair_queue import (
    EVERYTHING,
    Scope,
    lock_queue,
    next_job,
    queue_position,
    record_turn,
)
from proctor.store.models import Attempt, CaseResult, Job, Result, Score, SubmissionRow
from proctor.types import Failure, JobState

Database = sessionmaker[Session]
__all__ = [
    "EVERYTHING", "Database", "Lease", "Outcome", "Reaped", "Scope", "cancel_jobs", "claim",
    "commit", "heartbeat", "queue_position", "reap", "reconcile", "reconcile_dead", "release",
    "set_stage", "sweep",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Lease:
    """A worker's claim on one attempt of one job; only its ``token`` may commit."""

    job_id: int
    attempt: int
    token: str
    worker: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt produced, written by :func:`commit` in one transaction.

    ``status``: ``scored``, ``dry_run`` or ``failed``; ``report``: the participant's task report
    (JSON text, already disclosed); ``scores``: metric → value (unredacted, for the boards);
    ``cases``: case → metric → value.
    """

    status: str
    failure: str | None
    report: str
    scores: Mapping[str, float] = field(default_factory=dict)
    cases: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    run_artifact: str | None = None


@dataclass(frozen=True, slots=True)
class Reaped:
    """A job the reaper took back: re-queued, or failed for good after its last attempt."""

    job_id: int
    attempt: int
    failed: bool


def claim(
    db: Database,
    worker: str,
    lease_s: float,
    *,
    job_id: int | None = None,
    scope: Scope = EVERYTHING,
    team_cap: int = 0,
    now: float | None = None,
) -> Lease | None:
    """Lease the next job by the fair order (``store.fair_queue``), or job ``job_id``.

    None when nothing in ``scope`` is queued, or every team with queued jobs already runs
    ``team_cap`` (0: no cap). The attempt number grows by one; an ``attempts`` row records who
    ran it. Claims run one at a time (a lock held to the end of the transaction).
    """
    at = time.time() if now is None else now
    with db.begin() as session:
        lock_queue(session)
        if job_id is None:
            candidate = next_job(session, scope, team_cap)
        else:
            candidate = session.scalar(
                select(Job.id).where(Job.id == job_id, Job.state == JobState.QUEUED)
            )
        attempt = session.scalar(select(Job.attempt).where(Job.id == candidate))
        if candidate is None or attempt is None:
            return None
        token = secrets.token_hex(16)
        taken = _changed(
            session,
            update(Job)
            .where(Job.id == candidate, Job.state == JobState.QUEUED)
            .values(
                state=JobState.RUNNING,
                attempt=attempt + 1,
                lease_owner=worker,
                lease_token=token,
                lease_expires=at + lease_s,
                stage=None,
            ),
        )
        if taken != 1:
            return None
        session.add(Attempt(job_id=candidate, attempt=attempt + 1, worker=worker, started=at))
        record_turn(session, candidate, at)
        return Lease(candidate, attempt + 1, token, worker)


def _held(lease: Lease) -> ColumnElement[bool]:
    """The condition under which ``lease`` still holds its job."""
    return and_(
        Job.id == lease.job_id, Job.lease_token == lease.token, Job.state == JobState.RUNNING
    )


def _changed(session: Session, statement: Update) -> int:
    """Run an ``UPDATE`` and return how many rows it changed."""
    result = cast("CursorResult[Any]", session.execute(statement))
    return int(result.rowcount)


def heartbeat(db: Database, lease: Lease, lease_s: float, *, now: float | None = None) -> bool:
    """Extend ``lease`` by ``lease_s`` seconds; False when it was lost (reaped or cancelled)."""
    at = time.time() if now is None else now
    with db.begin() as session:
        changed = _changed(
            session, update(Job).where(_held(lease)).values(lease_expires=at + lease_s)
        )
    return bool(changed == 1)


def set_stage(
    db: Database, lease: Lease, stage: str, *, hidden: bool = False, cases: int = 0
) -> bool:
    """Record the stage the job is in (for ``status``); False once the lease is lost.

    Nothing is written then. ``hidden``: the stage reads hidden data; the first such start is
    kept in ``hidden_started`` (from then on the submission counts against its quota, even
    cancelled). ``cases``: how many the stage runs (0: none; the count starts again at 0).
    """
    values: dict[str, object] = {
        "stage": stage,
        "cases_done": 0 if cases else None,
        "cases_total": cases or None,
    }
    if hidden:
        values["hidden_started"] = func.coalesce(Job.hidden_started, time.time())
    with db.begin() as session:
        return _changed(session, update(Job).where(_held(lease)).values(**values)) == 1


def count_case(db: Database, lease: Lease) -> bool:
    """Count one more case ended in the job's stage; False once the lease is lost."""
    done = func.coalesce(Job.cases_done, 0) + 1
    with db.begin() as session:
        return _changed(session, update(Job).where(_held(lease)).values(cases_done=done)) == 1


def commit(
    db: Database,
    lease: Lease,
    outcome: Outcome,
    *,
    keep: Callable[[], object] | None = None,
    now: float | None = None,
) -> bool:
    """Store ``outcome`` as the job's one result, if ``lease`` still holds the job.

    Everything (job state, result, scores, per-case values, the attempt's end) is one
    transaction; a stale lease writes nothing and gets False. ``keep`` (storing the run's
    artifact) runs last inside that transaction, only when the lease held: nothing is stored
    for a job that was cancelled or reaped meanwhile.
    """
    at = time.time() if now is None else now
    with db.begin() as session:
        done = _changed(
            session,
            update(Job)
            .where(_held(lease))
            .values(
                state=JobState.DONE,
                result_attempt=lease.attempt,
                failure=outcome.failure,
                lease_token=None,
                lease_expires=None,
                stage=None,
            ),
        )
        if done != 1:
            return False
        session.add(
            Result(
                job_id=lease.job_id,
                attempt=lease.attempt,
                status=outcome.status,
                report=outcome.report,
                run_artifact=outcome.run_artifact,
                created=at,
            )
        )
        for metric, value in outcome.scores.items():
            session.add(Score(job_id=lease.job_id, metric=metric, value=_finite(value)))
        for case, row in outcome.cases.items():
            for metric, value in row.items():
                session.add(
                    CaseResult(job_id=lease.job_id, case=case, metric=metric, value=_finite(value))
                )
        _end_attempt(session, lease.job_id, lease.attempt, outcome.status, at)
        if outcome.failure == Failure.PLATFORM:
            _flag_if_hidden(session, lease.job_id)
        session.flush()
        if keep is not None:
            keep()
    return True


def _flag_if_hidden(session: Session, job_id: int) -> None:
    """A platform failure after the job reached hidden data: flagged, refunded as a lost worker.

    The entry's code may have run on hidden data by then; if any such failure could be caused
    by an entry, a free submission per failure would be an oracle. So, as for lost workers, the
    team's first in a phase is refunded at once and later ones wait for an organizer.
    """
    hidden = session.scalar(select(Job.hidden_started).where(Job.id == job_id))
    if hidden is not None:
        _flag_and_refund(session, job_id)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _end_attempt(session: Session, job_id: int, attempt: int, outcome: str, at: float) -> None:
    _changed(
        session,
        update(Attempt)
        .where(Attempt.job_id == job_id, Attempt.attempt == attempt)
        .values(ended=at, outcome=outcome),
    )


def release(db: Database, lease: Lease) -> bool:
    """Give the job back to the queue without a result (a worker shutting down cleanly)."""
    with db.begin() as session:
        changed = _changed(
            session,
            update(Job)
            .where(_held(lease))
            .values(
                state=JobState.QUEUED,
                lease_token=None,
                lease_owner=None,
                lease_expires=None,
                enqueued=False,
                stage=None,
            ),
        )
        _end_attempt(session, lease.job_id, lease.attempt, "released", time.time())
    return bool(changed == 1)


def reap(db: Database, max_attempts: int, *, now: float | None = None) -> list[Reaped]:
    """Take back every job whose lease expired: re-queued, or failed after ``max_attempts``."""
    at = time.time() if now is None else now
    reaped: list[Reaped] = []
    with db.begin() as session:
        expired = session.execute(
            select(Job.id, Job.attempt, Job.lease_token).where(
                Job.state == JobState.RUNNING, Job.lease_expires < at
            )
        ).all()
        for job_id, attempt, token in expired:
            failed = attempt >= max_attempts
            values: dict[str, object] = {
                "lease_token": None,
                "lease_owner": None,
                "lease_expires": None,
                "stage": None,
            }
            if failed:
                values |= {
                    "state": JobState.FAILED,
                    "failure": Failure.INFRASTRUCTURE,
                    "flagged": True,
                }
            else:
                values |= {"state": JobState.QUEUED, "enqueued": False}
            changed = _changed(
                session,
                update(Job)
                .where(Job.id == job_id, Job.lease_token == token, Job.state == JobState.RUNNING)
                .values(**values),
            )
            if changed == 1:
                _end_attempt(session, job_id, attempt, "lost", at)
                if failed:
                    _flag_and_refund(session, job_id)
                reaped.append(Reaped(job_id, attempt, failed))
    return reaped


def _flag_and_refund(session: Session, job_id: int) -> None:
    """Flag the job's submission; refund it when it is its team's first in the phase."""
    submission = session.get(SubmissionRow, session.get(Job, job_id).submission_id)  # type: ignore[union-attr]
    if submission is None or submission.flagged:
        return
    submission.flagged = True
    earlier = session.scalar(
        select(SubmissionRow.id).where(
            SubmissionRow.team_id == submission.team_id,
            SubmissionRow.challenge == submission.challenge,
            SubmissionRow.phase == submission.phase,
            SubmissionRow.flagged,
            SubmissionRow.refunded,
            SubmissionRow.id != submission.id,
        )
    )
    submission.refunded = earlier is None


def sweep(db: Database, send: Callable[[int], None]) -> int:
    """Hand every queued job no broker has seen to ``send``; the count sent.

    Each job is marked sent *before* ``send`` (a conditional write, so two sweepers never both
    send it, and a reap that re-queues it while the message travels is never overwritten);
    when ``send`` raises, the mark is undone so the next sweep tries again.
    """
    with db() as session:
        waiting = session.scalars(
            select(Job.id)
            .where(Job.state == JobState.QUEUED, Job.enqueued.is_(False))
            .order_by(Job.queued_at, Job.id)
        ).all()
    sent = 0
    for job_id in waiting:
        with db.begin() as session:
            unsent = and_(Job.id == job_id, Job.state == JobState.QUEUED)
            mark = update(Job).where(unsent, Job.enqueued.is_(False)).values(enqueued=True)
            if _changed(session, mark) != 1:
                continue
        try:
            send(job_id)
        except Exception:
            with db.begin() as session:
                _changed(session, update(Job).where(unsent).values(enqueued=False))
            raise
        sent += 1
    return sent


def reconcile(db: Database, worker: str) -> list[int]:
    """Re-queue the jobs ``worker`` (a restarted worker with the same id) held; their ids.

    Their attempts count as lost, as the reaper would have found them.
    """
    with db.begin() as session:
        held = session.execute(
            select(Job.id, Job.attempt).where(
                Job.state == JobState.RUNNING, Job.lease_owner == worker
            )
        ).all()
        for job_id, attempt in held:
            _changed(
                session,
                update(Job)
                .where(Job.id == job_id, Job.state == JobState.RUNNING)
                .values(lease_expires=0.0),
            )
            _end_attempt(session, job_id, attempt, "lost", time.time())
    return [job_id for job_id, _ in held]


def cancel_jobs(db: Database, submission_id: str) -> int:
    """Cancel the submission's unfinished jobs (a running one loses its lease); the count."""
    with db.begin() as session:
        changed = _changed(
            session,
            update(Job)
            .where(
                Job.submission_id == submission_id,
                Job.state.in_([JobState.QUEUED, JobState.RUNNING]),
            )
            .values(state=JobState.CANCELLED, lease_token=None, lease_expires=None),
        )
    return int(changed)


def reconcile_dead(db: Database, host: str, alive: Callable[[int], bool]) -> list[int]:
    """Re-queue jobs leased by workers of ``host`` whose process (``HOST:PID:N``) is gone.

    A server restarted on the same host takes back what its predecessor held at once, instead
    of waiting for the leases to expire.
    """
    with db() as session:
        owners = set(session.scalars(
            select(Job.lease_owner).where(Job.state == JobState.RUNNING,
                                          Job.lease_owner.like(f"{host}:%"))))  # fmt: skip
    taken: list[int] = []
    for owner in owners:
        if owner is None:
            continue
        pid = owner.split(":")[1] if owner.count(":") >= 2 else ""
        if pid.isdigit() and not alive(int(pid)):
            taken.extend(reconcile(db, owner))
    return taken
