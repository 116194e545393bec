"""Throughput of the ``celery`` executor with 1 and 2 workers, and the embedded server's latency.

Run: ``python bench/bench_service_throughput.py [--submissions 40] [--database postgresql|sqlite]
[--latency-runs 7]``. Needs Redis on 127.0.0.1:6379 (and PostgreSQL on 127.0.0.1:5432, database
``test``, for ``--database postgresql``, the default when it is reachable).

1. Throughput: N submissions (default 40) of an entry that sleeps 1 s in each of its 5 hidden
   cases (cases one at a time) are queued, then run by 1 and then by 2 ``proctor worker``
   processes with ``--concurrency 1`` on this machine, each time on a fresh database and queue.
   It prints both wall times and their ratio (target ≥ 1.8) and checks that every submission was
   scored exactly once (one result row per job, none failed).
2. Latency: ``proctor serve`` with its embedded default (local executor, SQLite in a data
   folder); each submission is uploaded over HTTP when the workers are idle, and the time from
   the upload to the first stage start (``status`` shows a stage) is measured. It prints the
   median (target < 1 s).

Prints figures; asserts nothing about time (the machine is shared).
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, func, select, text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

import toy_challenge
from celery_cluster import Cluster, redis_unreachable, wait_for

from proctor.services.platform.accounts import add_user
from proctor.services.platform.client import Client
from proctor.store.models import Job
from proctor.types import JobState

PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
HIDDEN = tuple(f"te{i:02d}" for i in range(1, 6))
SLEEPY = "\n".join(f'  {case}) sleep 1; exec ./good.sh "$1" ;;' for case in HIDDEN)


def _challenge(root: Path) -> Path:
    """The toy records challenge with 5 hidden cases, run one at a time."""
    toy_challenge.HIDDEN = HIDDEN
    folder = toy_challenge.make_challenge(root / "bundles" / "toy")
    yaml_path = folder / "challenge.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("jobs: 2", "jobs: 1"))
    return folder


def _entry(root: Path) -> Path:
    """The entry folder (sleeping 1 s per hidden case) and, beside it, ``entry.tar.gz``."""
    entry = toy_challenge.make_exam_entry(root / "entry", SLEEPY)
    with tarfile.open(root / "entry.tar.gz", "w:gz") as tar:
        tar.add(entry, arcname="entry")
    return entry


@contextmanager
def _database(kind: str, folder: Path) -> Iterator[str]:
    """A fresh database: a SQLite file in ``folder`` or a PostgreSQL schema (dropped after)."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'proctor.sqlite3'}"
        return
    schema = f"bench_{secrets.token_hex(6)}"
    admin = create_engine(PG_URL)
    with admin.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as connection:
            connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def _shared_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="proctor-bench-", dir="/tmp"))
    folder.chmod(0o755)
    return folder


def throughput(workers: int, submissions: int, database: str) -> float:
    """Seconds for ``workers`` workers to run ``submissions`` queued submissions."""
    root = _shared_folder()
    try:
        with _database(database, root) as url:
            cluster = Cluster(root, url)
            try:
                cluster.install(_challenge(root))
                team = cluster.user("bench", team="bench")
                entry = _entry(root)
                for _ in range(workers):
                    cluster.start_worker(concurrency=1)
                start = time.monotonic()
                sids = [cluster.submit(team, entry).submission for _ in range(submissions)]
                wait_for(lambda: _finished(cluster, sids), 60 * submissions, "every submission")
                elapsed = time.monotonic() - start
                _check_once(cluster, sids)
                _job_times(cluster, sids)
                return elapsed
            finally:
                cluster.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _finished(cluster: Cluster, sids: list[str]) -> bool:
    with cluster.platform.db() as session:
        left = session.scalar(
            select(func.count()).where(
                Job.submission_id.in_(sids), Job.state.in_([JobState.QUEUED, JobState.RUNNING])
            )
        )
    return left == 0


def _check_once(cluster: Cluster, sids: list[str]) -> None:
    """Every job done with exactly one scored result; exits 1 naming the first that is not."""
    for sid in sids:
        for job in cluster.jobs_of(sid):
            results = cluster.results_of(job.id)
            if job.state != JobState.DONE or [r.status for r in results] != ["scored"]:
                shown = [(r.attempt, r.status, r.report[:2000]) for r in results]
                print(f"FAIL: job {job.id} of {sid}: {job.state}, results {shown}")
                raise SystemExit(1)
    print(f"  every one of the {len(sids)} submissions scored exactly once")


def _job_times(cluster: Cluster, sids: list[str]) -> None:
    """Print the median time a job held its worker (claim to commit)."""
    held = [
        attempt.ended - attempt.started
        for sid in sids
        for job in cluster.jobs_of(sid)
        for attempt in cluster.attempts_of(job.id)
        if attempt.ended is not None
    ]
    print(f"  median job time (claim to commit): {statistics.median(held):.2f} s")


def latency(runs: int) -> list[float]:
    """Upload → first stage start on ``proctor serve``'s embedded default, ``runs`` times."""
    root = _shared_folder()
    cluster = Cluster(root, f"sqlite:///{root / 'data' / 'proctor.sqlite3'}")
    try:
        env_sqlite = {"PROCTOR_DATABASE_URL": ""}
        organizer = add_user(cluster.platform, "olga", organizer=True).token
        token = add_user(cluster.platform, "bob", team="blue").token
        server = cluster.spawn(["serve", "--port", "0", "--workers", "2", "--json"], env_sqlite)
        url = server.announced["url"]
        Client(url, organizer).install(str(_challenge(root)))
        client = Client(url, token)
        entry = _entry(root)
        delays = []
        for _ in range(runs):
            start = time.monotonic()
            sid = client.submit(entry.with_suffix(".tar.gz"), "toy", None).submission
            wait_for(lambda sid=sid: _started(client, sid), 60, "the first stage")
            delays.append(time.monotonic() - start)
            wait_for(lambda sid=sid: client.status(sid).status == "scored", 60, "the score")
        client.close()
        return delays
    finally:
        cluster.close()
        shutil.rmtree(root, ignore_errors=True)


def _started(client: Client, sid: str) -> bool:
    shown = client.status(sid)
    return shown.stage is not None or shown.status not in ("queued", "running")


def _pg_reachable() -> bool:
    try:
        engine = create_engine(PG_URL, connect_args={"connect_timeout": 2})
        with engine.connect() as connection:
            connection.execute(text("select 1"))
        engine.dispose()
    except Exception:
        return False
    return True


def main() -> None:
    """Run both measurements and print them beside their targets."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=40)
    parser.add_argument("--database", choices=("postgresql", "sqlite"), default=None)
    parser.add_argument("--latency-runs", type=int, default=7)
    args = parser.parse_args()
    unreachable = redis_unreachable()
    if unreachable:
        print(f"skipped: {unreachable}")
        return
    database = args.database or ("postgresql" if _pg_reachable() else "sqlite")
    print(f"throughput: {args.submissions} submissions x 5 cases x 1 s, database {database}")
    one = throughput(1, args.submissions, database)
    print(f"  1 worker:  {one:7.1f} s")
    two = throughput(2, args.submissions, database)
    print(f"  2 workers: {two:7.1f} s")
    print(f"  throughput ratio 2 / 1 workers: {one / two:.2f} (target >= 1.8)")
    delays = latency(args.latency_runs)
    shown = ", ".join(f"{d:.2f}" for d in delays)
    print(f"latency, proctor serve (local executor, SQLite), upload -> first stage: {shown} s")
    print(f"  median {statistics.median(delays):.3f} s (target < 1 s)")


if __name__ == "__main__":
    main()
