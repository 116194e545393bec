"""Fairness and durability of the queue on the ``celery`` executor (PostgreSQL + Redis).

Run: ``python bench/bench_fair_queue.py [--submissions 1000] [--teams 10] [--workers 2]``.
Needs Redis on 127.0.0.1:6379 and PostgreSQL on 127.0.0.1:5432 (database ``test``).

Ten teams queue 1,000 submissions of a trivial entry (the toy records challenge of
``tests/support/toy_challenge.py``, its good entry), team after team: the first team's 100 are all
queued before the second team's first, as a team flooding the queue would. Two ``proctor
worker`` processes (``--concurrency 1``) run them; midway one is SIGKILLed, and restarted only
once the reaper has put its job back in the queue. It prints:

- whether every submission was scored exactly once (one result row per job), none lost, and
  which attempts the reaper took back (the killed worker's; under load, also any whose
  heartbeat came later than the 2 s lease the test cluster uses);
- each team's share of the workers over time (worker-seconds per team in each tenth of the run):
  with the fair queue every team with jobs waiting gets about the same share, where a first-in
  first-out queue would give the first team everything until its 100 jobs were done;
- the time from each team's first upload to its first job's claim (the first stage starts at
  once), and from the 1,000th upload to its claim.

Prints figures; asserts nothing about time (the machine is shared). Cleans up its database
schema, Redis keys, processes and folders, also when interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sys
import time
from collections import defaultdict
from pathlib import Path

from sqlalchemy import func, select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

import toy_challenge
from celery_cluster import Cluster, Proc, lease_pid, redis_unreachable, wait_for

from bench_service_throughput import _database, _pg_reachable, _shared_folder
from proctor.store.models import Attempt, Job, Result, SubmissionRow, Team
from proctor.types import JobState


def _challenge(root: Path) -> Path:
    """The toy records challenge, its cases one at a time (a trivial entry: a few seconds)."""
    folder = toy_challenge.make_challenge(root / "bundles" / "toy")
    yaml_path = folder / "challenge.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("jobs: 2", "jobs: 1"))
    return folder


def _left(cluster: Cluster) -> int:
    with cluster.platform.db() as session:
        return int(
            session.scalar(
                select(func.count()).where(Job.state.in_([JobState.QUEUED, JobState.RUNNING]))
            )
            or 0
        )


def _done(cluster: Cluster) -> int:
    with cluster.platform.db() as session:
        return int(session.scalar(select(func.count()).where(Job.state == JobState.DONE)) or 0)


def _held_by(cluster: Cluster, proc: Proc) -> int | None:
    """A job a pool process of ``proc`` holds now, or None."""
    with cluster.platform.db() as session:
        running = session.scalars(select(Job).where(Job.state == JobState.RUNNING)).all()
    for job in running:
        with contextlib.suppress(ProcessLookupError, AssertionError, ValueError):
            if os.getpgid(lease_pid(job)) == proc.pid:
                return job.id
    return None


def _pool_pid(cluster: Cluster, job_id: int) -> str:
    """The pid of the pool process that last claimed ``job_id``."""
    with cluster.platform.db() as session:
        owner = session.scalar(
            select(Attempt.worker).where(Attempt.job_id == job_id).order_by(Attempt.attempt.desc())
        )
    return owner.split(":")[1] if owner else "?"


def _kill_midway(cluster: Cluster, victim: Proc, total: int) -> tuple[float, float]:
    """SIGKILL ``victim`` (holding a job) once half the jobs are done; restart it once its
    job is back in the queue. When it was killed, and when the reaper had re-queued its job.
    """
    wait_for(lambda: _done(cluster) >= total // 2, 60 * total, "half of the jobs")
    held = wait_for(lambda: _held_by(cluster, victim), 120, "the worker to hold a job")
    victim.signal(signal.SIGKILL)
    victim.process.wait(timeout=30)
    killed = time.time()
    print(
        f"  worker {victim.pid} (pool process {_pool_pid(cluster, held)}) SIGKILLed after "
        f"{_done(cluster)} jobs, holding job {held}"
    )

    def requeued() -> bool:
        with cluster.platform.db() as session:
            outcome = session.scalar(
                select(Attempt.outcome).where(Attempt.job_id == held).order_by(Attempt.attempt)
            )
        return outcome == "lost"

    wait_for(requeued, 120, "the reaper to take the killed worker's job back")
    back = time.time()
    cluster.start_worker(concurrency=1)
    print(f"  the reaper re-queued its job {back - killed:.1f} s later; a new worker started")
    return killed, back


def _check(cluster: Cluster, total: int) -> None:
    """Every job done with exactly one scored result; prints the verdict."""
    with cluster.platform.db() as session:
        jobs = session.execute(select(Job.id, Job.state)).all()
        results = session.execute(
            select(Result.job_id, func.count(), func.min(Result.status)).group_by(Result.job_id)
        ).all()
        lost = session.execute(
            select(Attempt.job_id, Attempt.attempt, Attempt.worker).where(Attempt.outcome == "lost")
        ).all()
    per_job = {job_id: (count, status) for job_id, count, status in results}
    bad = [
        (job_id, state, per_job.get(job_id))
        for job_id, state in jobs
        if state != JobState.DONE or per_job.get(job_id) != (1, "scored")
    ]
    print(
        f"  jobs {len(jobs)} of {total} submissions; scored exactly once: "
        f"{len(jobs) - len(bad)}; lost or duplicated: {len(bad)}"
    )
    shown = ", ".join(f"job {j} attempt {a} on pool process {w.split(':')[1]}" for j, a, w in lost)
    print(f"  attempts taken back by the reaper ({len(lost)}): {shown}")
    if bad or len(jobs) != total:
        print(f"FAIL: {bad[:10]}")
        raise SystemExit(1)


def _shares(cluster: Cluster, windows: int = 10) -> None:
    """Each team's share of the worker-seconds in each tenth of the run."""
    with cluster.platform.db() as session:
        rows = session.execute(
            select(Team.name, Attempt.started, Attempt.ended)
            .join(Job, Job.id == Attempt.job_id)
            .join(SubmissionRow, SubmissionRow.id == Job.submission_id)
            .join(Team, Team.id == SubmissionRow.team_id)
        ).all()
    start = min(r.started for r in rows)
    end = max(r.ended or r.started for r in rows)
    step = (end - start) / windows
    teams = sorted({r.name for r in rows})
    print(f"  share of the workers per team over time ({step:.0f} s windows), %:")
    print("    window  " + " ".join(f"{t:>7}" for t in teams) + "   Jain index")
    for index in range(windows):
        low, high = start + index * step, start + (index + 1) * step
        used: dict[str, float] = defaultdict(float)
        for name, began, ended in rows:
            overlap = min(high, ended or began) - max(low, began)
            if overlap > 0:
                used[name] += overlap
        total = sum(used.values()) or 1.0
        shares = [100 * used[t] / total for t in teams]
        waiting = [s for s in shares if s > 0]
        jain = sum(waiting) ** 2 / (len(waiting) * sum(s * s for s in waiting)) if waiting else 0
        cells = " ".join(f"{s:7.1f}" for s in shares)
        print(f"    {index + 1:>6}  {cells}   {jain:.3f}")


def _latencies(cluster: Cluster) -> None:
    """Each team's first upload → its first claim; the last upload → its claim."""
    with cluster.platform.db() as session:
        rows = session.execute(
            select(Team.name, SubmissionRow.created, Attempt.started)
            .join(SubmissionRow, SubmissionRow.team_id == Team.id)
            .join(Job, Job.submission_id == SubmissionRow.id)
            .join(Attempt, (Attempt.job_id == Job.id) & (Attempt.attempt == 1))
            .order_by(SubmissionRow.created)
        ).all()
    first: dict[str, tuple[float, float]] = {}
    for name, created, started in rows:
        first.setdefault(name, (created, started))
    shown = ", ".join(f"{name} {claim - up:.1f}" for name, (up, claim) in first.items())
    print(f"  each team's first upload -> its first claim (s): {shown}")
    name, created, started = rows[-1]
    print(
        f"  the {len(rows)}th upload ({name}) -> its claim, its first stage starting: "
        f"{started - created:.1f} s"
    )


def run(submissions: int, teams: int, workers: int) -> None:
    """Queue, run with a worker killed midway, then check and print."""
    root = _shared_folder()
    try:
        with _database("postgresql", root) as url:
            cluster = Cluster(root, url)
            try:
                cluster.install(_challenge(root))
                entry = toy_challenge.make_entry(root / "entry")
                members = [cluster.user(f"u{t}", team=f"team{t:02d}") for t in range(teams)]
                procs = [cluster.start_worker(concurrency=1) for _ in range(workers)]
                began = time.monotonic()
                per_team = submissions // teams
                for member in members:  # team after team: the first floods the queue
                    for _ in range(per_team):
                        cluster.submit(member, entry)
                uploaded = time.monotonic() - began
                total = per_team * teams
                print(f"  {total} submissions uploaded in {uploaded:.1f} s")
                _kill_midway(cluster, procs[0], total)
                wait_for(lambda: _left(cluster) == 0, 60 * total, "every job")
                print(f"  all done {time.monotonic() - began:.0f} s after the first upload")
                _check(cluster, total)
                _shares(cluster)
                _latencies(cluster)
            finally:
                cluster.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    """Parse the options and run the bench."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--teams", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    for why in (redis_unreachable(), None if _pg_reachable() else "PostgreSQL unreachable"):
        if why:
            print(f"skipped: {why}")
            return
    print(
        f"fair queue: {args.submissions} submissions from {args.teams} teams, "
        f"{args.workers} celery workers, one SIGKILLed midway (PostgreSQL + Redis)"
    )
    run(args.submissions, args.teams, args.workers)


if __name__ == "__main__":
    main()
