"""Durable jobs: the job row is the source of truth; leases, heartbeats, commit, reaper, sweeper.

Every executor (the local pool, Celery workers) speaks only this API::

    lease = claim(db, worker, lease_s)            # the next job, fairly between teams
    heartbeat(db, lease, lease_s)  -> bool        # False: the lease is lost, stop the job
    set_stage(db, lease, "exam")
    commit(db, lease, outcome)     -> bool        # False: stale lease, nothing was written
    reap(db, max_attempts)         -> [Reaped]    # expired leases back to the queue, or failed
    sweep(db, send)                -> int         # queued jobs no broker has seen yet are sent
    reconcile(db, worker)          -> [job ids]   # a restarted worker's leftovers re-queued

The upkeep calls (``reap``, ``sweep``, ``reconcile``, ``cancel_jobs``) live in
``store.job_upkeep`` and are re-exported here; the row writes both share in ``store.job_rows``.

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

from sqlalchemy import ColumnElement, and_, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from proctor.store.fair_queue import (
    EVERYTHING,
    Scope,
    lock_queue,
    next_job,
    queue_position,
    record_turn,
)
from proctor.store.job_rows import changed as _changed
from proctor.store.job_rows import end_attempt as _end_attempt
from proctor.store.job_rows import flag_and_refund as _flag_and_refund
from proctor.store.job_upkeep import Reaped, cancel_jobs, reap, reconcile, reconcile_dead, sweep
from proctor.store.models import Attempt, CaseResult, Job, Result, Score
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
        _add_result(session, lease, outcome, at)
        _end_attempt(session, lease.job_id, lease.attempt, outcome.status, at)
        if outcome.failure == Failure.PLATFORM:
            _flag_if_hidden(session, lease.job_id)
        session.flush()
        if keep is not None:
            keep()
    return True


def _add_result(session: Session, lease: Lease, outcome: Outcome, at: float) -> None:
    """The result row of the lease's attempt, with its scores and per-case values."""
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
