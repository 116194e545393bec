"""Fair claims between teams on SQLite and PostgreSQL: round robin, the per-team cap, atomicity.

A team with nothing running gets the next free worker before a team that already has jobs
running; among equals, the team served longest ago goes first; no team ever runs more than the
cap at once, even with claimers racing on separate connections.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator

import pytest
from db_fixtures import fresh_schema_url
from sqlalchemy import select, text
from sqlalchemy.exc import OperationalError

from proctor.store import jobs
from proctor.store.db import create_db_engine, dispose, open_database
from proctor.store.fair_queue import lock_queue
from proctor.store.models import ChallengeVersion, Job, SubmissionRow, Team, User
from proctor.types import JobState

OUTCOME = jobs.Outcome(status="scored", failure=None, report="{}")


@pytest.fixture
def db(database_url: str) -> Iterator[jobs.Database]:
    database = open_database(database_url)
    yield database
    dispose(database)


def _queue(db: jobs.Database, team: str, count: int, start: float, challenge: str = "c") -> None:
    """``count`` one-task submissions of ``team`` to ``challenge``, queued from ``start`` on."""
    with db.begin() as session:
        row = session.scalar(select(Team).where(Team.name == team)) or Team(name=team, created=0)
        user = session.scalar(select(User).where(User.name == f"u-{team}")) or User(
            name=f"u-{team}", role="participant", created=0.0
        )
        bundle = session.scalar(
            select(ChallengeVersion).where(ChallengeVersion.name == challenge)
        ) or ChallengeVersion(name=challenge, version=1, sha256="0" * 64, path="/x", created=0.0)
        session.add_all([row, user, bundle])
        session.flush()
        for index in range(count):
            sid = f"{team}-{challenge}-{start + index}"
            session.add(
                SubmissionRow(id=sid, team_id=row.id, user_id=user.id, challenge_id=bundle.id,
                              challenge=challenge, phase="p", upload_sha256="0" * 64,
                              created=start + index)
            )  # fmt: skip
            session.flush()
            session.add(
                Job(submission_id=sid, task="t", state=JobState.QUEUED, queued_at=start + index)
            )


def _team_of(db: jobs.Database, lease: jobs.Lease | None) -> str | None:
    if lease is None:
        return None
    with db() as session:
        return session.scalar(
            select(Team.name)
            .join(SubmissionRow, SubmissionRow.team_id == Team.id)
            .join(Job, Job.submission_id == SubmissionRow.id)
            .where(Job.id == lease.job_id)
        )


def test_a_team_with_nothing_running_goes_before_a_team_with_jobs_running(
    db: jobs.Database,
) -> None:
    _queue(db, "flood", 10, start=1.0)
    _queue(db, "late", 1, start=100.0)
    first = jobs.claim(db, "w1", 30)
    second = jobs.claim(db, "w2", 30)
    assert [_team_of(db, first), _team_of(db, second)] == ["flood", "late"]


def test_teams_take_turns_when_jobs_finish_one_at_a_time(db: jobs.Database) -> None:
    _queue(db, "a", 4, start=1.0)
    _queue(db, "b", 4, start=10.0)
    _queue(db, "c", 4, start=20.0)
    order = []
    for at in range(12):
        lease = jobs.claim(db, "w", 30, now=1000.0 + at)
        assert lease is not None
        order.append(_team_of(db, lease))
        assert jobs.commit(db, lease, OUTCOME)
    assert order == ["a", "b", "c"] * 4


def test_a_team_runs_no_more_than_the_cap_and_gets_a_worker_again_when_one_ends(
    db: jobs.Database,
) -> None:
    _queue(db, "a", 5, start=1.0)
    held = [jobs.claim(db, f"w{i}", 30, team_cap=2) for i in range(3)]
    assert held[0] is not None and held[1] is not None and held[2] is None
    assert jobs.commit(db, held[0], OUTCOME)
    assert jobs.claim(db, "w3", 30, team_cap=2) is not None
    assert jobs.claim(db, "w4", 30, team_cap=0) is not None  # 0: no cap


def test_a_claim_takes_only_the_challenges_of_its_queue(db: jobs.Database) -> None:
    _queue(db, "a", 2, start=1.0, challenge="big")
    _queue(db, "b", 2, start=5.0, challenge="small")
    only_big = jobs.Scope(only=frozenset({"big"}))
    not_big = jobs.Scope(excluding=frozenset({"big"}))
    lease = jobs.claim(db, "w", 30, scope=not_big)
    assert _team_of(db, lease) == "b"
    assert _team_of(db, jobs.claim(db, "w", 30, scope=only_big)) == "a"
    assert _team_of(db, jobs.claim(db, "w", 30, scope=not_big)) == "b"
    assert jobs.claim(db, "w", 30, scope=not_big) is None


def test_racing_claimers_never_run_a_team_past_its_cap_nor_a_job_twice(
    db: jobs.Database,
) -> None:
    for index, team in enumerate("abc"):
        _queue(db, team, 30, start=float(index * 100))
    barrier = threading.Barrier(16)
    won: list[jobs.Lease] = []
    lock = threading.Lock()

    def grab(worker: str) -> None:
        barrier.wait()
        while (lease := jobs.claim(db, worker, 30, team_cap=2)) is not None:
            with lock:
                won.append(lease)

    threads = [threading.Thread(target=grab, args=(f"w{i}",)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = [lease.job_id for lease in won]
    assert len(ids) == len(set(ids)) == 6
    assert Counter(_team_of(db, lease) for lease in won) == {"a": 2, "b": 2, "c": 2}


def test_the_queue_position_counts_the_turns_of_other_teams(db: jobs.Database) -> None:
    _queue(db, "flood", 10, start=1.0)
    _queue(db, "late", 1, start=100.0)
    with db() as session:
        late = session.scalar(select(Job).where(Job.submission_id == "late-c-100.0"))
        last = session.scalar(select(Job).where(Job.submission_id == "flood-c-10.0"))
        assert late is not None and last is not None
        assert jobs.queue_position(session, late) == 1
        assert jobs.queue_position(session, last) == 10


@pytest.fixture
def other_schema_url(pg_schema_url: str) -> Iterator[str]:
    """A second fresh schema of the same PostgreSQL database (dropped at the end)."""
    with fresh_schema_url() as url:
        yield url


def test_deployments_in_two_schemas_of_one_postgresql_database_claim_independently(
    pg_schema_url: str, other_schema_url: str
) -> None:
    """The queue's advisory lock is the schema's: a claim held open (a frozen worker) in one
    deployment holds up the claims of its own schema only, not another deployment's."""
    first, second = open_database(pg_schema_url), open_database(other_schema_url)
    try:
        with first.begin() as holding:
            lock_queue(holding)  # held until this block ends
            with second.begin() as elsewhere:
                elsewhere.execute(text("SET LOCAL lock_timeout = '2s'"))
                lock_queue(elsewhere)  # another schema: taken at once
            with first.begin() as same:
                same.execute(text("SET LOCAL lock_timeout = '200ms'"))
                with pytest.raises(OperationalError, match="lock timeout"):
                    lock_queue(same)  # the same schema: waits for the holder
    finally:
        dispose(first)
        dispose(second)


def test_a_transaction_left_idle_is_ended_by_the_server_unless_one_is_configured(
    pg_schema_url: str,
) -> None:
    """A worker frozen mid-transaction (a paused VM) would hold its row locks, and the queue,
    until TCP gives up: Proctor's sessions end an idle transaction after a minute, unless the
    server or the URL's ``options`` set a bound of their own."""
    engine = create_db_engine(pg_schema_url)
    own = create_db_engine(pg_schema_url + "%20-cidle_in_transaction_session_timeout%3D5000")
    try:
        for tried, expected in ((engine, "1min"), (own, "5s")):
            with tried.connect() as connection:
                shown = connection.execute(text("SHOW idle_in_transaction_session_timeout"))
                assert shown.scalar() == expected
    finally:
        engine.dispose()
        own.dispose()
