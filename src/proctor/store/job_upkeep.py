"""Upkeep of the job table: what no lease holder does for itself.

``reap`` takes back expired leases (re-queued, or failed and flagged after the last attempt),
``sweep`` hands queued jobs no broker has seen to a sender, ``reconcile``/``reconcile_dead``
re-queue what a restarted or dead worker held, ``cancel_jobs`` ends a submission's unfinished
jobs. Each write is conditional on the row's state, as the lease holder's calls
(``store.jobs``), which re-exports these.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import and_, select, update
from sqlalchemy.orm import Session, sessionmaker

from proctor.store.job_rows import changed as _changed
from proctor.store.job_rows import end_attempt as _end_attempt
from proctor.store.job_rows import flag_and_refund as _flag_and_refund
from proctor.store.models import Job
from proctor.types import Failure, JobState

Database = sessionmaker[Session]


@dataclass(frozen=True, slots=True)
class Reaped:
    """A job the reaper took back: re-queued, or failed for good after its last attempt."""

    job_id: int
    attempt: int
    failed: bool


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
