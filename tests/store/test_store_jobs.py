"""The durable job store on SQLite and PostgreSQL: leases, stale writes, the reaper, refunds."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select

from proctor.store import jobs
from proctor.store.db import dispose, open_database
from proctor.store.models import ChallengeVersion, Job, Result, Score, SubmissionRow, Team, User
from proctor.types import JobState

OUTCOME = jobs.Outcome(
    status="scored", failure=None, report="{}", scores={"auprc": 0.5}, cases={"r1": {"auprc": 0.4}}
)


def _submission(db: jobs.Database, name: str, created: float, tasks: int = 1) -> str:
    with db.begin() as session:
        team = session.scalar(select(Team).where(Team.name == "team")) or Team(
            name="team", created=0.0
        )
        user = session.scalar(select(User).where(User.name == "u")) or User(
            name="u", role="participant", created=0.0
        )
        bundle = session.scalar(select(ChallengeVersion)) or ChallengeVersion(
            name="c", version=1, sha256="0" * 64, path="/nowhere", created=0.0
        )
        session.add_all([team, user, bundle])
        session.flush()
        session.add(
            SubmissionRow(
                id=name,
                team_id=team.id,
                user_id=user.id,
                challenge_id=bundle.id,
                challenge="c",
                phase="p",
                upload_sha256="0" * 64,
                created=created,
            )
        )
        session.flush()
        for index in range(tasks):
            session.add(
                Job(submission_id=name, task=f"t{index}", state=JobState.QUEUED, queued_at=created)
            )
    return name


@pytest.fixture
def db(database_url: str) -> Iterator[jobs.Database]:
    database = open_database(database_url)
    yield database
    dispose(database)


def test_claims_take_the_oldest_job_first_and_never_the_same_job_twice(db: jobs.Database) -> None:
    _submission(db, "late", 20.0)
    _submission(db, "early", 10.0)
    first = jobs.claim(db, "w1", 30)
    second = jobs.claim(db, "w2", 30)
    assert first is not None and second is not None
    with db() as session:
        owners = {
            session.get(Job, first.job_id).submission_id: "w1",  # type: ignore[union-attr]
            session.get(Job, second.job_id).submission_id: "w2",
        }  # type: ignore[union-attr]
    assert owners == {"early": "w1", "late": "w2"}
    assert jobs.claim(db, "w3", 30) is None


def test_concurrent_claimers_share_out_jobs_without_duplicates(db: jobs.Database) -> None:
    for index in range(6):
        _submission(db, f"s{index}", float(index))
    won: list[int] = []
    lock = threading.Lock()

    def grab(worker: str) -> None:
        while (lease := jobs.claim(db, worker, 30)) is not None:
            with lock:
                won.append(lease.job_id)

    threads = [threading.Thread(target=grab, args=(f"w{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == sorted(set(won)) and len(won) == 6


def test_a_stale_workers_late_write_is_rejected_and_one_result_is_stored(
    db: jobs.Database,
) -> None:
    _submission(db, "s", 1.0)
    stale = jobs.claim(db, "w-old", 1.0, now=100.0)
    assert stale is not None
    assert jobs.reap(db, 3, now=102.0) == [jobs.Reaped(stale.job_id, 1, failed=False)]
    fresh = jobs.claim(db, "w-new", 30.0, now=103.0)
    assert fresh is not None and fresh.attempt == 2
    assert not jobs.heartbeat(db, stale, 30.0)
    assert not jobs.commit(db, stale, OUTCOME)
    assert jobs.commit(db, fresh, OUTCOME)
    assert not jobs.commit(db, fresh, OUTCOME)
    with db() as session:
        results = session.execute(select(Result.job_id, Result.attempt)).all()
        scores = session.scalar(select(func.count()).select_from(Score))
        job = session.get(Job, fresh.job_id)
    assert results == [(fresh.job_id, 2)]
    assert scores == 1
    assert job is not None and job.state == JobState.DONE and job.result_attempt == 2


def test_a_heartbeat_keeps_the_lease_from_the_reaper(db: jobs.Database) -> None:
    _submission(db, "s", 1.0)
    lease = jobs.claim(db, "w", 10.0, now=100.0)
    assert lease is not None
    assert jobs.heartbeat(db, lease, 10.0, now=108.0)
    assert jobs.reap(db, 3, now=112.0) == []
    assert [r.job_id for r in jobs.reap(db, 3, now=119.0)] == [lease.job_id]


def _lose_three_times(db: jobs.Database, start: float) -> int:
    at = start
    job_id = -1
    for _ in range(3):
        lease = jobs.claim(db, "w", 1.0, now=at)
        assert lease is not None
        job_id = lease.job_id
        at += 5
        jobs.reap(db, 3, now=at)
    return job_id


def test_three_lost_workers_fail_the_job_as_infrastructure_and_refund_once(
    db: jobs.Database,
) -> None:
    _submission(db, "first", 1.0)
    job_id = _lose_three_times(db, 100.0)
    _submission(db, "second", 2.0)
    _lose_three_times(db, 200.0)
    with db() as session:
        job = session.get(Job, job_id)
        first = session.get(SubmissionRow, "first")
        second = session.get(SubmissionRow, "second")
    assert job is not None and job.state == JobState.FAILED
    assert job.failure == "infrastructure" and job.flagged
    assert first is not None and first.flagged and first.refunded
    assert second is not None and second.flagged and not second.refunded


def test_the_sweeper_sends_each_unsent_job_once_and_again_after_a_reap(
    db: jobs.Database,
) -> None:
    _submission(db, "s", 1.0, tasks=2)
    sent: list[int] = []
    assert jobs.sweep(db, sent.append) == 2
    assert jobs.sweep(db, sent.append) == 0
    lease = jobs.claim(db, "w", 1.0, now=time.time() - 10)
    assert lease is not None
    jobs.reap(db, 3)
    assert jobs.sweep(db, sent.append) == 1
    assert sorted(sent) == sorted([*{*sent}, lease.job_id]) and sent[-1] == lease.job_id


def test_cancelling_takes_the_lease_so_the_running_worker_cannot_commit(
    db: jobs.Database,
) -> None:
    _submission(db, "s", 1.0)
    lease = jobs.claim(db, "w", 30.0)
    assert lease is not None
    assert jobs.cancel_jobs(db, "s") == 1
    assert not jobs.heartbeat(db, lease, 30.0)
    assert not jobs.commit(db, lease, OUTCOME)


def test_a_restarted_worker_returns_its_leftover_jobs(db: jobs.Database) -> None:
    _submission(db, "s", 1.0)
    lease = jobs.claim(db, "host:1:0", 300.0)
    assert lease is not None
    assert jobs.reconcile(db, "host:1:0") == [lease.job_id]
    assert [r.job_id for r in jobs.reap(db, 3)] == [lease.job_id]
    assert jobs.claim(db, "host:2:0", 30.0) is not None
